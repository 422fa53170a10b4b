package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/pmlerr"
)

// Func is one tool implemented in Go. Run receives arguments already
// validated against Info.InputSchema (empty args arrive as {}), and returns a
// value that is marshalled to JSON as the tool's plain result.
type Func struct {
	Info Info
	Run  func(ctx context.Context, args json.RawMessage) (any, error)
}

// Typed builds a Func whose Run decodes the arguments into A. Numbers inside
// interface-typed fields decode as json.Number so large integers survive a
// round trip.
func Typed[A any](info Info, run func(ctx context.Context, args A) (any, error)) Func {
	return Func{Info: info, Run: func(ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&a); err != nil {
			return nil, pmlerr.New(pmlerr.ToolError, "invalid arguments: %v", err)
		}
		return run(ctx, a)
	}}
}

// Table is a Provider serving a fixed set of Funcs.
type Table struct {
	funcs     map[string]Func
	infos     []Info
	validator *Validator
}

// NewTable returns a Table serving funcs. A later Func with the same id
// replaces an earlier one.
func NewTable(funcs ...Func) *Table {
	t := &Table{funcs: make(map[string]Func, len(funcs)), validator: NewValidator()}
	for _, f := range funcs {
		t.funcs[f.Info.ID] = f
	}
	for _, f := range t.funcs {
		t.infos = append(t.infos, f.Info)
	}
	slices.SortFunc(t.infos, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
	return t
}

// HasTool reports whether the table serves id: what looking for id in
// Tools' list answers, without the copy of the list Tools makes, which the
// gateway's check of an execution's tools made for every tool it names
// (docs/performance.md "The gateway's own CPU").
func (t *Table) HasTool(id string) bool {
	_, ok := t.funcs[id]
	return ok
}

// Tools returns the table's tools sorted by id.
func (t *Table) Tools(context.Context) ([]Info, error) {
	return slices.Clone(t.infos), nil
}

// Call validates args, runs the tool and returns its result as JSON. Errors
// are *pmlerr.Error: UNKNOWN_TOOL, TOOL_ERROR, or the code Run chose.
func (t *Table) Call(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	f, ok := t.funcs[tool]
	if !ok {
		return nil, UnknownToolError(tool, t.infos)
	}
	if err := t.validator.Validate(f.Info.InputSchema, args); err != nil {
		if pe, ok := pmlerr.As(err); ok {
			// The declaration lets the AI client fix its call without
			// another discover (docs/protocol.md "Error").
			pe.Message = tool + ": " + pe.Message
			return nil, pe.With("declaration", CompactDeclaration(f.Info))
		}
		return nil, pmlerr.Wrap(pmlerr.Internal, fmt.Errorf("%s: %w", tool, err))
	}
	if len(bytes.TrimSpace(args)) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		args = json.RawMessage(`{}`)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	res, err := run(ctx, f, args)
	if err != nil {
		if pe, ok := pmlerr.As(err); ok {
			return nil, pe
		}
		return nil, &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s: %v", tool, err), Err: err}
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, &pmlerr.Error{Code: pmlerr.ToolError, Message: fmt.Sprintf("%s: result is not JSON: %v", tool, err), Err: err}
	}
	if err := CheckFits(ctx, tool, int64(len(out))); err != nil {
		return nil, err
	}
	return out, nil
}

// run calls f.Run, turning a panic into an error so one faulty built-in cannot
// take down the process that serves every other call.
func run(ctx context.Context, f Func, args json.RawMessage) (res any, err error) {
	defer func() {
		if r := recover(); r != nil {
			slog.ErrorContext(ctx, "built-in tool panicked", "tool", f.Info.ID, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error (panic: %v)", r)
		}
	}()
	return f.Run(ctx, args)
}

var _ Provider = (*Table)(nil)
