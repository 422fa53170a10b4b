package analysis

import (
	"regexp"
	"strconv"

	"github.com/pml-go/pml/internal/pmlerr"
)

// evalPosition is a position in a stack frame of the stripped JS.
var evalPosition = regexp.MustCompile(`<eval>:(\d+):(\d+)`)

// MapError rewrites the positions of a sandbox error (Details "line" and
// "column", and each position in "stack", all in the stripped JS) to the
// user's TypeScript, so CODE_ERROR and its stack point at the line the user
// wrote. Other errors pass through.
func (a *Analysis) MapError(err error) error {
	pe, ok := pmlerr.As(err)
	if !ok || pe.Details == nil {
		return err
	}
	line, ok1 := pe.Details["line"].(int)
	col, ok2 := pe.Details["column"].(int)
	if ok1 && ok2 {
		pe.Details["line"], pe.Details["column"] = a.OriginalPosition(line, col)
	}
	if stack, ok := pe.Details["stack"].(string); ok {
		pe.Details["stack"] = evalPosition.ReplaceAllStringFunc(stack, func(pos string) string {
			m := evalPosition.FindStringSubmatch(pos)
			l, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			l, c = a.OriginalPosition(l, c)
			return "<eval>:" + strconv.Itoa(l) + ":" + strconv.Itoa(c)
		})
	}
	return err
}
