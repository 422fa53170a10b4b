package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pml-go/pml/internal/gateway/traceapi"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/workspace"
)

// newTracesCmd is `pml traces [ID]`: the trace viewer's list and tree in
// the terminal, read through the same API (the in-process gateway's store
// in local mode, the gateway with the package's key otherwise).
func newTracesCmd() *cobra.Command {
	var limit int
	var asJSON bool
	var caller string
	cmd := &cobra.Command{
		Use:   "traces [TRACE_ID | WORKFLOW_ID]",
		Short: "list recent executions, or show one as a tree (TRACE_ID, or the WORKFLOW_ID exec printed)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := os.Getwd()
			if err != nil {
				return err
			}
			pkg, err := workspace.Open(cmd.Context(), cwd, quietLogger())
			if err != nil {
				return err
			}
			defer pkg.Close()
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				found, err := pkg.LookupTrace(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if found.Note != "" {
					fmt.Fprintf(cmd.ErrOrStderr(), "pml: %s\n", found.Note)
				}
				for _, body := range found.Trees {
					if err := printTraceTree(out, body, asJSON); err != nil {
						return err
					}
				}
				return nil
			}
			// Executions only: the capability runs they started come nested
			// under them, as in the tree of one execution.
			path := "/api/traces?top_level=true&limit=" + strconv.Itoa(limit)
			if caller != "" {
				path += "&caller=" + url.QueryEscape(caller)
			}
			body, err := pkg.ReadTraceAPI(cmd.Context(), path)
			if err != nil {
				return err
			}
			if asJSON {
				_, err = fmt.Fprintf(out, "%s\n", body)
				return err
			}
			var page traceapi.Page
			if err := json.Unmarshal(body, &page); err != nil {
				return fmt.Errorf("reading the trace list: %w", err)
			}
			return printTraceList(out, page)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many recent executions to list (at most "+strconv.Itoa(traceapi.MaxPageSize)+")")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON answer as it is")
	cmd.Flags().StringVar(&caller, "caller", "", `only the executions of this caller: "key:ID" or "oidc:ISSUER_HOST:SUBJECT"`)
	return cmd
}

// quietLogger keeps the package's own logs off a command whose output is
// for the terminal: only errors.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// printTraceTree prints one GET /api/traces/{id} answer: as it is with
// asJSON (one line), else as a tree.
func printTraceTree(out io.Writer, body []byte, asJSON bool) error {
	if asJSON {
		_, err := fmt.Fprintf(out, "%s\n", body)
		return err
	}
	var n traceapi.Node
	if err := json.Unmarshal(body, &n); err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	return printTree(out, n, 0)
}

func printTraceList(out io.Writer, page traceapi.Page) error {
	if len(page.Traces) == 0 {
		_, err := fmt.Fprintln(out, "No executions yet.")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	// Callers are named on a gateway with keys or tokens; local mode has none.
	callers := slices.ContainsFunc(page.Traces, func(t traceapi.Summary) bool { return t.Caller != "" })
	header := "TRACE ID\tSTARTED\tOUTCOME\tSIDE\tDURATION\tTASKS\tTOOLS"
	if callers {
		header += "\tCALLER"
	}
	fmt.Fprintln(tw, header)
	for _, t := range page.Traces {
		printSummary(tw, t, 0, callers)
	}
	fmt.Fprintf(tw, "\n%d of %d executions (capability runs indented under theirs); `pml traces TRACE_ID` shows one.\n", len(page.Traces), page.Total)
	return tw.Flush()
}

// printSummary prints one line of the list, then the capability runs t
// started, indented under it.
func printSummary(tw io.Writer, t traceapi.Summary, depth int, callers bool) {
	tasks := strconv.Itoa(t.TaskCount)
	if t.FailedTasks > 0 {
		tasks += " (" + strconv.Itoa(t.FailedTasks) + " failed)"
	}
	id, tools := t.TraceID, strings.Join(t.ToolsUsed, ", ")
	if depth > 0 {
		id = strings.Repeat("  ", depth) + id
		tools = t.CapabilityFQDN + ": " + tools
	}
	line := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s", id, t.StartedAt.Local().Format(time.DateTime),
		outcome(t.Success, t.ErrorCode), side(t.ExecutedLocally), millis(t.DurationMS), tasks, tools)
	if callers {
		line += "\t" + t.Caller
	}
	fmt.Fprintln(tw, line)
	for _, c := range t.Children {
		printSummary(tw, c, depth+1, callers)
	}
	if t.ChildrenOmitted > 0 {
		// The empty cells keep the table's columns aligned past this line.
		fmt.Fprintf(tw, "%s  … %d more capability runs: `pml traces %s`\t\t\t\t\t\t\n", strings.Repeat("  ", depth), t.ChildrenOmitted, t.TraceID)
	}
}

// printTree prints a trace, its calls in order, and under a call the child
// trace it started.
func printTree(out io.Writer, n traceapi.Node, depth int) error {
	var t tracing.Trace
	if err := json.Unmarshal(n.Trace, &t); err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	pad := strings.Repeat("  ", depth)
	label := t.CapabilityFQDN
	if label == "" {
		label = "execution"
	}
	fmt.Fprintf(out, "%s%s %s  %s  %s  %s  %s\n", pad, label, t.TraceID, outcome(t.Success, t.ErrorCode), side(t.ExecutedLocally),
		millis(t.DurationMS), t.StartedAt.Local().Format(time.DateTime))
	if t.Error != "" {
		fmt.Fprintf(out, "%s  error: %s\n", pad, t.Error)
	}
	if p := t.PlannedNotCalled(); len(p) > 0 {
		fmt.Fprintf(out, "%s  planned, not called: %s\n", pad, strings.Join(p, ", "))
	}
	kids := map[string]traceapi.Node{}
	for _, c := range n.Children {
		var ct struct {
			TraceID string `json:"trace_id"`
		}
		if json.Unmarshal(c.Trace, &ct) == nil {
			kids[ct.TraceID] = c
		}
	}
	for _, task := range t.Tasks {
		tool := task.ToolID
		if tool == "" {
			tool = task.Tool
		}
		state := "ok"
		if !task.Success {
			state = "FAILED"
		}
		fmt.Fprintf(out, "%s  %s %s  %s  %s  %s\n", pad, task.TaskID, tool, task.Routing, state, millis(task.DurationMS))
		if task.Error != "" {
			fmt.Fprintf(out, "%s    error: %s\n", pad, task.Error)
		}
		if c, ok := kids[task.ChildTraceID]; ok && task.ChildTraceID != "" {
			delete(kids, task.ChildTraceID)
			if err := printTree(out, c, depth+2); err != nil {
				return err
			}
		}
	}
	if tr := t.Truncated; tr != nil && tr.SpansAggregated > 0 {
		fmt.Fprintf(out, "%s  … %d more calls aggregated per tool\n", pad, tr.SpansAggregated)
	}
	for _, c := range n.Children {
		var ct struct {
			TraceID string `json:"trace_id"`
		}
		if json.Unmarshal(c.Trace, &ct) != nil {
			continue
		}
		if _, left := kids[ct.TraceID]; left {
			if err := printTree(out, c, depth+1); err != nil {
				return err
			}
		}
	}
	if n.ChildrenOmitted > 0 {
		fmt.Fprintf(out, "%s  … %d child traces not loaded\n", pad, n.ChildrenOmitted)
	}
	return nil
}

func outcome(ok bool, code string) string {
	switch {
	case ok:
		return "success"
	case code != "":
		return code
	default:
		return "error"
	}
}

func side(local bool) string {
	if local {
		return "local"
	}
	return "server"
}

func millis(ms float64) string {
	if ms < 1000 {
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
}
