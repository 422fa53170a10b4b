package traceapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tracing"
	"github.com/pml-go/pml/internal/wire"
)

// Paging of GET /api/traces.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Bounds of a child tree: capability nesting is shallow in practice; the
// caps keep a malicious or cyclic parent chain from costing much, and the
// answer (and the page showing it) small whatever a tenant stored.
const (
	maxTreeDepth = 16
	maxTreeNodes = 1000
	maxTreeBytes = 4 << 20
)

// Query filters a tenant's traces. Zero fields do not filter; Since is
// inclusive, Until exclusive; Page counts from 1. TopLevel lists the
// executions only, each with the capability runs nested in it as its
// Children (bounded like a tree: maxListChildren a page).
type Query struct {
	WorkflowID     string
	CapabilityFQDN string
	Tool           string
	Caller         string
	Success        *bool
	TopLevel       bool
	Since, Until   time.Time
	Page, Limit    int
}

// maxListChildren bounds the nested runs one page of a TopLevel list
// carries; past it a summary counts the rest in ChildrenOmitted, and the
// tree of that execution (GET /api/traces/{id}) has them.
const maxListChildren = 500

// Summary is one line of the trace list: the trace's identity and
// outcome, counts in place of its tasks, and none of its payloads. The
// embedded trace holds only those fields (summarize leaves its tasks, code,
// logs and DAG empty); the fields below take the JSON names of the ones
// the list shows differently or not at all.
type Summary struct {
	tracing.Trace
	// ToolsUsed is always an array here, empty when no tool ran.
	ToolsUsed []string `json:"tools_used"`
	// TaskCount and FailedTasks count every call of the run, the ones its
	// bounds aggregated too; Truncated says the trace is bounded.
	TaskCount   int  `json:"task_count"`
	FailedTasks int  `json:"failed_tasks"`
	Truncated   bool `json:"truncated,omitempty"`
	// Tasks and Decisions hide the trace's arrays: never in a list line.
	Tasks     struct{} `json:"tasks,omitzero"`
	Decisions struct{} `json:"decisions,omitzero"`
	// Children are the capability runs this run started, oldest first,
	// nested likewise; only in a TopLevel list. ChildrenOmitted counts those
	// left out by the list's bound.
	Children        []Summary `json:"children,omitempty"`
	ChildrenOmitted int       `json:"children_omitted,omitempty"`
}

// Page is GET /api/traces: newest first, with the total before paging.
type Page struct {
	Traces []Summary `json:"traces"`
	Total  int       `json:"total"`
	Page   int       `json:"page"`
	Limit  int       `json:"limit"`
}

// Node is a trace with the traces its capability calls started.
// ChildrenOmitted counts the children left out by the tree's bounds.
type Node struct {
	Trace           json.RawMessage `json:"trace"`
	Children        []Node          `json:"children"`
	ChildrenOmitted int             `json:"children_omitted,omitempty"`
}

// List returns one page of scope's traces.
func (a *API) List(ctx context.Context, scope store.Scope, q Query) (Page, error) {
	q.Page = max(q.Page, 1)
	if q.Limit <= 0 {
		q.Limit = DefaultPageSize
	}
	q.Limit = min(q.Limit, MaxPageSize)
	page := Page{Traces: []Summary{}, Page: q.Page, Limit: q.Limit}
	if a.store == nil {
		return page, nil
	}
	rows, total, err := a.store.ListTraces(ctx, store.TraceFilter{
		Scope: scope, WorkflowID: q.WorkflowID, CapabilityFQDN: q.CapabilityFQDN, Tool: q.Tool, Caller: q.Caller,
		Success: q.Success, TopLevel: q.TopLevel, Since: q.Since, Until: q.Until,
		Limit: q.Limit, Offset: (q.Page - 1) * q.Limit,
	})
	if err != nil {
		return page, fmt.Errorf("list traces: %w", err)
	}
	page.Total = total
	budget := &treeBudget{nodes: maxListChildren, bytes: maxTreeBytes}
	for _, row := range rows {
		sum := summarize(row)
		if q.TopLevel {
			visited := map[string]bool{row.ID: true}
			if err := a.nestChildren(ctx, scope, &sum, 0, budget, visited); err != nil {
				return page, err
			}
		}
		page.Traces = append(page.Traces, sum)
	}
	return page, nil
}

// nestChildren adds the summaries of the capability runs sum's run started,
// and theirs, within the tree's depth and budget (Tree's bounds; the bytes
// are those of the stored traces read).
func (a *API) nestChildren(ctx context.Context, scope store.Scope, sum *Summary, depth int, budget *treeBudget, visited map[string]bool) error {
	if depth >= maxTreeDepth {
		return nil
	}
	kids, err := a.store.ChildTraces(ctx, scope, sum.TraceID)
	if err != nil {
		return fmt.Errorf("children of trace %s: %w", sum.TraceID, err)
	}
	for _, k := range kids {
		if visited[k.ID] {
			continue
		}
		if budget.nodes <= 0 || budget.bytes < len(k.Body) {
			sum.ChildrenOmitted++
			continue
		}
		visited[k.ID] = true
		budget.nodes--
		budget.bytes -= len(k.Body)
		child := summarize(k)
		if err := a.nestChildren(ctx, scope, &child, depth+1, budget, visited); err != nil {
			return err
		}
		sum.Children = append(sum.Children, child)
	}
	return nil
}

func summarize(row store.Trace) Summary {
	var t tracing.Trace
	// The body was encoded by StoreRecord; should it not decode, the indexed
	// columns still give a usable line.
	_ = json.Unmarshal(row.Body, &t)
	sum := Summary{
		Trace: tracing.Trace{
			TraceID: row.ID, ParentTraceID: row.ParentID, WorkflowID: row.WorkflowID,
			CapabilityFQDN: row.CapabilityFQDN, ExecutedLocally: t.ExecutedLocally, Success: row.Success,
			ErrorCode: t.ErrorCode, Error: t.Error, DurationMS: t.DurationMS, StartedAt: row.StartedAt,
		},
		ToolsUsed: wire.NonNil(row.Tools), TaskCount: len(t.Tasks),
	}
	for _, task := range t.Tasks {
		if !task.Success {
			sum.FailedTasks++
		}
	}
	if tr := t.Truncated; tr != nil {
		sum.Truncated = true
		sum.TaskCount += tr.SpansAggregated
		for _, a := range tr.Aggregates {
			sum.FailedTasks += a.Errors
		}
	}
	return sum
}

// Tree returns scope's trace id with its child traces, nested. A trace of
// another tenant is store.ErrNotFound, exactly like one that does not
// exist.
func (a *API) Tree(ctx context.Context, scope store.Scope, id string) (Node, error) {
	notFound := fmt.Errorf("trace %q: %w", id, store.ErrNotFound)
	if a.store == nil {
		return Node{}, notFound
	}
	root, err := a.store.TraceByID(ctx, scope, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Node{}, notFound
	case err != nil:
		return Node{}, fmt.Errorf("trace %s: %w", id, err)
	}
	b := &treeBudget{nodes: maxTreeNodes - 1, bytes: maxTreeBytes - len(root.Body)}
	visited := map[string]bool{root.ID: true}
	return a.subtree(ctx, scope, root, 0, b, visited)
}

// treeBudget is what a trace tree may still take.
type treeBudget struct{ nodes, bytes int }

func (a *API) subtree(ctx context.Context, scope store.Scope, t store.Trace, depth int, budget *treeBudget, visited map[string]bool) (Node, error) {
	node := Node{Trace: t.Body, Children: []Node{}}
	if depth >= maxTreeDepth {
		return node, nil
	}
	kids, err := a.store.ChildTraces(ctx, scope, t.ID)
	if err != nil {
		return node, fmt.Errorf("children of trace %s: %w", t.ID, err)
	}
	for _, k := range kids {
		if visited[k.ID] {
			continue
		}
		if budget.nodes <= 0 || budget.bytes < len(k.Body) {
			node.ChildrenOmitted++
			continue
		}
		visited[k.ID] = true
		budget.nodes--
		budget.bytes -= len(k.Body)
		child, err := a.subtree(ctx, scope, k, depth+1, budget, visited)
		if err != nil {
			return node, err
		}
		node.Children = append(node.Children, child)
	}
	return node, nil
}
