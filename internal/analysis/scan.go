package analysis

import (
	"io"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// token is one significant token and its byte offset in the scanned text.
type token struct {
	tt    js.TokenType
	text  []byte // into the scanned text: no copy per token
	start int
}

// scanner yields the significant tokens of JavaScript (or TypeScript, for
// the few uses where a JavaScript tokenizer is enough): no whitespace, line
// terminators or comments. A '/' starts a regular expression where a value
// may start, the usual heuristic without a parser.
type scanner struct {
	in   *parse.Input
	lex  *js.Lexer
	prev js.TokenType
	err  bool // the lexer stopped on an error rather than at the end
}

// significantTokens are src's tokens but for semicolons (which the shape of
// code ignores), up to where the tokenizer stops; complete is false when it
// stopped on an error.
func significantTokens(src string) (toks []token, complete bool) {
	s := newScanner(src)
	for {
		t, ok := s.next()
		if !ok {
			return toks, !s.err
		}
		if t.tt != js.SemicolonToken {
			toks = append(toks, t)
		}
	}
}

func newScanner(src string) *scanner {
	in := parse.NewInputString(src)
	return &scanner{in: in, lex: js.NewLexer(in)}
}

func (s *scanner) next() (token, bool) {
	for {
		tt, text := s.lex.Next()
		switch tt {
		case js.ErrorToken:
			s.err = s.lex.Err() != io.EOF
			return token{}, false
		case js.WhitespaceToken, js.LineTerminatorToken, js.CommentToken, js.CommentLineTerminatorToken:
			continue
		case js.DivToken, js.DivEqToken:
			if regexMayStart(s.prev) {
				tt, text = s.lex.RegExp()
				if tt == js.ErrorToken {
					s.err = true
					return token{}, false
				}
			}
		}
		s.prev = tt
		end := s.in.Offset()
		return token{tt: tt, text: text, start: end - len(text)}, true
	}
}

// regexMayStart tells whether a '/' after prev starts a regular expression
// rather than a division.
func regexMayStart(prev js.TokenType) bool {
	switch prev {
	case js.ErrorToken: // start of input
		return true
	case js.CloseParenToken, js.CloseBracketToken, js.CloseBraceToken,
		js.StringToken, js.TemplateToken, js.TemplateEndToken, js.RegExpToken, js.PrivateIdentifierToken,
		js.ThisToken, js.SuperToken, js.TrueToken, js.FalseToken, js.NullToken,
		js.IncrToken, js.DecrToken:
		return false
	}
	return !js.IsIdentifier(prev) && !js.IsNumeric(prev)
}

// maxNesting bounds how deeply code nests brackets and expression-bodied
// arrows. Real snippets stay far below it; esbuild's renamer is quadratic in
// scope depth, so a 100 KiB tower of arrows would cost seconds.
const maxNesting = 200

// surveyCode reads the user's code once, before esbuild: blank tells that it
// holds nothing but whitespace and comments (a tokenizer error is not blank:
// esbuild reports it), tooDeep is the byte offset where nesting first
// exceeds maxNesting, or -1.
func surveyCode(code string) (blank bool, tooDeep int) {
	s := newScanner(code)
	arrows := []int{0} // expression-bodied arrows open at each bracket level
	depth, open := 0, 0
	pendingArrow := false
	first := true
	for {
		t, ok := s.next()
		if !ok {
			return first && !s.err, -1
		}
		first = false
		top := len(arrows) - 1
		if pendingArrow && t.tt != js.OpenBraceToken {
			arrows[top]++
			open++
		}
		pendingArrow = false
		switch t.tt {
		case js.OpenParenToken, js.OpenBracketToken, js.OpenBraceToken, js.TemplateStartToken:
			depth++
			arrows = append(arrows, 0)
		case js.CloseParenToken, js.CloseBracketToken, js.CloseBraceToken, js.TemplateEndToken:
			if top > 0 {
				depth--
				open -= arrows[top]
				arrows = arrows[:top]
			}
		case js.SemicolonToken, js.CommaToken:
			open -= arrows[top]
			arrows[top] = 0
		case js.ArrowToken:
			pendingArrow = true
		}
		if depth+open > maxNesting {
			return false, t.start
		}
	}
}

// closingBrace returns the byte offset of the '}' that matches the first '{'
// of src, or -1.
func closingBrace(src string) int {
	s := newScanner(src)
	depth := 0
	for {
		t, ok := s.next()
		if !ok {
			return -1
		}
		// A template's `${` and `}` are inside its tokens, never braces.
		switch t.tt {
		case js.OpenBraceToken:
			depth++
		case js.CloseBraceToken:
			depth--
			if depth == 0 {
				return t.start
			}
		}
	}
}

// firstImport returns the byte offset of the first `import` keyword of src,
// or -1.
func firstImport(src string) int {
	s := newScanner(src)
	for {
		t, ok := s.next()
		if !ok {
			return -1
		}
		if t.tt == js.ImportToken {
			return t.start
		}
	}
}

// unit is one element of code's shape: a significant token, or a whole
// list of literals (`["Ann", "Bo"]`), which is one value however long, so
// that runs with lists of other lengths are of one shape (docs/how-it-works.md
// "Learned capabilities"). first is the index of its first token; for a
// list, text is its elements joined, its value for comparing runs.
type unit struct {
	tok   token
	first int
	list  bool
	text  []byte
}

// units groups toks into shape units: an array literal in a value position
// whose elements are all literals (strings, numbers, templates without
// substitutions, true, false, null) is one unit.
func units(toks []token) []unit {
	out := make([]unit, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		if end, ok := literalList(toks, i); ok {
			var text []byte
			for _, t := range toks[i+1 : end-1] {
				text = append(text, t.text...)
				text = append(text, 0)
			}
			out = append(out, unit{tok: toks[i], first: i, list: true, text: text})
			i = end - 1
			continue
		}
		out = append(out, unit{tok: toks[i], first: i})
	}
	return out
}

// literalList reports whether toks[i] opens a list of literals in a value
// position, and the index after its closing bracket.
func literalList(toks []token, i int) (end int, ok bool) {
	if toks[i].tt != js.OpenBracketToken {
		return 0, false
	}
	prev := js.ErrorToken
	if i > 0 {
		prev = toks[i-1].tt
	}
	if !regexMayStart(prev) {
		return 0, false // an index, a[0]: not a value
	}
	expectValue := true
	for j := i + 1; j < len(toks); j++ {
		tt := toks[j].tt
		switch {
		case tt == js.CloseBracketToken:
			return j + 1, j > i+1
		case expectValue && tt == js.SubToken && j+1 < len(toks) && js.IsNumeric(toks[j+1].tt):
			continue // -1
		case expectValue && (js.IsNumeric(tt) || tt == js.StringToken || tt == js.TemplateToken ||
			tt == js.TrueToken || tt == js.FalseToken || tt == js.NullToken):
			expectValue = false
		case !expectValue && tt == js.CommaToken:
			expectValue = true
		default:
			return 0, false
		}
	}
	return 0, false
}
