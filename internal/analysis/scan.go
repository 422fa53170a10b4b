package analysis

import (
	"io"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/js"
)

// token is one significant token and its byte offset in the scanned text.
type token struct {
	tt    js.TokenType
	text  string
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
		return token{tt: tt, text: string(text), start: end - len(text)}, true
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

// isBlank reports whether code holds nothing but whitespace and comments. A
// tokenizer error (an unterminated comment...) is not blank: the real
// parser reports it.
func isBlank(code string) bool {
	s := newScanner(code)
	_, ok := s.next()
	return !ok && !s.err
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
