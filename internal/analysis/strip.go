package analysis

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/pml-go/pml/internal/pmlerr"
)

// The user's code is a function body: it may await and return at top level
// and reads `args`. The prefix shares the user's line 1 so line numbers match;
// the suffix starts a new line so a trailing // comment cannot swallow it.
const (
	wrapPrefix = "(async function (args) {"
	wrapSuffix = "\n})"
	// fnHead is how esbuild prints the wrapper's first line.
	fnHead = "(async function(args) {"
)

// stripped is esbuild's output for one snippet.
type stripped struct {
	js       string    // what the sandbox evaluates
	fn       string    // the wrapper function statement as esbuild printed it
	fnLine   int       // lines of esbuild output before fn (runtime helpers)
	mappings string    // source map of esbuild's output
	origin   lineIndex // the user's code
}

func transformOptions() api.TransformOptions {
	return api.TransformOptions{
		Loader:         api.LoaderTS,
		Target:         api.ES2023,
		Charset:        api.CharsetUTF8,
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     "code.ts",
	}
}

func checkSize(code string) error {
	if len(code) > MaxCodeBytes {
		return pmlerr.New(pmlerr.CodeTooLarge, "code is %d bytes; the limit is %d", len(code), MaxCodeBytes).
			With("size", len(code)).With("max_bytes", MaxCodeBytes)
	}
	return nil
}

// checkCode refuses what is not worth handing to esbuild.
func checkCode(code string, origin lineIndex) error {
	if err := checkSize(code); err != nil {
		return err
	}
	blank, tooDeep := surveyCode(code)
	if blank {
		return pmlerr.New(pmlerr.EmptyCode, "code is empty: it has no statement, only blanks or comments")
	}
	if tooDeep >= 0 {
		line, col := origin.position(tooDeep)
		return syntaxError(line, col+1, fmt.Sprintf("code is nested too deeply (more than %d levels of brackets and arrow functions)", maxNesting))
	}
	return nil
}

// strip turns the user's TypeScript into the JavaScript the sandbox runs.
func strip(code string) (stripped, error) {
	origin := newLineIndex(code)
	if err := checkCode(code, origin); err != nil {
		return stripped{}, err
	}
	r := api.Transform(wrapPrefix+code+wrapSuffix, transformOptions())
	if len(r.Errors) > 0 {
		return stripped{}, esbuildError(origin, r.Errors[0])
	}
	out := string(r.Code)
	helpers, fn := "", out
	if !strings.HasPrefix(out, fnHead) {
		// esbuild put runtime helpers (decorators, `using`) before the
		// wrapper. Only esbuild writes there: the user's code starts after
		// our prefix.
		i := strings.Index(out, "\n"+fnHead)
		if i < 0 {
			return stripped{}, pmlerr.New(pmlerr.Internal, "esbuild output does not start with the code's function")
		}
		helpers, fn = out[:i+1], out[i+1:]
	}
	var sm struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(r.Map, &sm); err != nil {
		return stripped{}, pmlerr.Wrap(pmlerr.Internal, fmt.Errorf("decode esbuild source map: %w", err))
	}
	body := strings.TrimSuffix(strings.TrimRight(fn, "\n"), ";")
	js := body
	if helpers != "" {
		// Keep every line where esbuild put it so the source map stays
		// valid: the additions go on lines that hold no user code.
		js = "(() => {" + helpers + "return " + body + ";\n})()"
	}
	return stripped{
		js:       js,
		fn:       fn,
		fnLine:   strings.Count(helpers, "\n"),
		mappings: sm.Mappings,
		origin:   origin,
	}, nil
}

// esbuildError maps an esbuild error in the wrapped code to the user's code.
func esbuildError(origin lineIndex, m api.Message) error {
	line, col := 1, 0
	if m.Location != nil {
		line, col = m.Location.Line, m.Location.Column
	}
	text := m.Text
	if line == 1 {
		col = max(col-len(wrapPrefix), 0)
	}
	if line > origin.count() {
		// The error is in our suffix: something the user opened is not closed.
		line = origin.count()
		col = len(origin.line(line))
		text = "unexpected end of code: a block, call, array or string is not closed (" + text + ")"
	}
	lineText := strings.TrimSpace(origin.line(line))
	if strings.HasPrefix(lineText, "import ") || strings.HasPrefix(lineText, "import{") ||
		strings.HasPrefix(lineText, "export ") || strings.HasPrefix(lineText, "export{") {
		text = "code cannot import or export modules; call tools with mcp.<namespace>.<action>(args) (" + text + ")"
	}
	return syntaxError(line, utf16Len(origin.line(line), col)+1, text)
}

// syntaxError builds a SYNTAX_ERROR at a position of the user's code.
func syntaxError(line, column int, text string) *pmlerr.Error {
	return pmlerr.New(pmlerr.SyntaxError, "%s (line %d, column %d)", text, line, column).
		With("line", line).With("column", column)
}
