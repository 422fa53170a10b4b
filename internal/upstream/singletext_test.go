package upstream

import "testing"

// The compact form's shortcut reads what the general path reads, and
// nothing the general path would refuse.
func TestSingleTextShortcutAgrees(t *testing.T) {
	for _, c := range []struct {
		raw  string
		text string
		ok   bool
	}{
		{`{"content":[{"type":"text","text":"Echo: hi"}]}`, "Echo: hi", true},
		{`{"content":[{"type":"text","text":"quote \" and \u00e9"}]}`, "quote \" and é", true},
		{`{"content":[{"type":"text","text":""}]}`, "", true},
		{`{"content":[{"text":"reordered","type":"text"}]}`, "reordered", true},
		{`{"content":[{"type":"text","text":"x"}],"isError":false}`, "x", true},
		{` {"content":[{"type":"text","text":"spaced"}]}`, "spaced", true},
		// A string followed by more inside the item: not one text.
		{`{"content":[{"type":"text","text":"a","annotations":{}}]}`, "", false},
		{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "", false},
		{`{"content":[{"type":"text","text":1}]}`, "", false},
		{`{"content":[{"type":"text","text":"a"}],"structuredContent":{}}`, "", false},
		{`{"content":[{"type":"text","text":"a"}],"isError":true}`, "", false},
		{`{"content":[{"type":"text","text":"a}]}`, "", false},
	} {
		text, ok := singleText([]byte(c.raw))
		if text != c.text || ok != c.ok {
			t.Errorf("singleText(%s) = %q, %v; want %q, %v", c.raw, text, ok, c.text, c.ok)
		}
	}
}
