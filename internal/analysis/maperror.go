package analysis

import "github.com/pml-go/pml/internal/pmlerr"

// MapError rewrites the position of a sandbox error (Details "line" and
// "column", in the stripped JS) to the user's TypeScript, so CODE_ERROR points
// at the line the user wrote. Other errors pass through.
func (a *Analysis) MapError(err error) error {
	if pe, ok := pmlerr.As(err); ok && pe.Details != nil {
		line, ok1 := pe.Details["line"].(int)
		col, ok2 := pe.Details["column"].(int)
		if ok1 && ok2 {
			pe.Details["line"], pe.Details["column"] = a.OriginalPosition(line, col)
		}
	}
	return err
}
