package analysis

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/tdewolff/parse/v2/js"
)

// Shape is what the gateway's learning policy reads from code (docs/how-it-works.md "Learned capabilities"): which runs are the same capability, and whether
// the code is anything more than one call of a tool.
type Shape struct {
	// Hash is the hex SHA-256 of the code's tokens with whitespace, comments
	// and semicolons dropped and every literal value (string, number,
	// template text, a list of literals whatever its length) replaced by a
	// placeholder: code that differs only in those has the same Hash. A
	// regular expression is part of the shape: one that differs is other
	// code, never a value to fill in.
	Hash string
	// DirectCall means the whole code is one tool call, returned or awaited
	// or not: `return await mcp.ns.action({...})`.
	DirectCall bool
	// Values is the hex SHA-256 of the literal values in order: code of one
	// Hash with one Values differs only in how it is written.
	Values string
}

// ShapeOf reads code's shape. Code the tokenizer stops on has the Hash of
// what came before and is never a DirectCall.
func ShapeOf(code string) Shape {
	toks, complete := significantTokens(code)
	h, values := sha256.New(), sha256.New()
	for _, u := range units(toks) {
		t, text := u.tok, u.tok.text
		switch {
		case u.list:
			text = []byte("\x00lit")
			values.Write(u.text)
			values.Write([]byte{0})
		case js.IsNumeric(t.tt), t.tt == js.StringToken, t.tt == js.TemplateToken:
			text = []byte("\x00lit")
			values.Write(t.text)
			values.Write([]byte{0})
		case t.tt == js.TemplateStartToken, t.tt == js.TemplateMiddleToken, t.tt == js.TemplateEndToken:
			text = []byte("\x00tpl")
			values.Write(t.text)
			values.Write([]byte{0})
		}
		h.Write(text)
		h.Write([]byte{0})
	}
	return Shape{Hash: hex.EncodeToString(h.Sum(nil)), DirectCall: complete && directCall(toks), Values: hex.EncodeToString(values.Sum(nil))}
}

// directCall: [return] [await] mcp . ns . action ( … ) with the parentheses
// closing at the end and no other mcp inside.
func directCall(toks []token) bool {
	i := 0
	if i < len(toks) && toks[i].tt == js.ReturnToken {
		i++
	}
	if i < len(toks) && toks[i].tt == js.AwaitToken {
		i++
	}
	if len(toks)-i < 7 || string(toks[i].text) != "mcp" || toks[i+1].tt != js.DotToken ||
		toks[i+3].tt != js.DotToken || toks[i+5].tt != js.OpenParenToken || toks[len(toks)-1].tt != js.CloseParenToken {
		return false
	}
	depth := 0
	for j := i + 5; j < len(toks); j++ {
		switch {
		case toks[j].tt == js.OpenParenToken:
			depth++
		case toks[j].tt == js.CloseParenToken:
			depth--
			if depth == 0 && j != len(toks)-1 {
				return false // `mcp.a.b(x).then(...)`, `f(x) + g(y)`
			}
		case string(toks[j].text) == "mcp":
			return false
		}
	}
	return depth == 0
}
