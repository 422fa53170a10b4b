package upstream

import (
	"bytes"
	"encoding/json"
	"testing"
)

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

// The shortcuts read a valid result as decoding it whole does.
func FuzzSingleText(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"text","text":"Echo: hi"}]}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"a","x":"b"}]}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"\u00e9 \xff"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		text, ok := singleText(raw)
		want, wantOK := decodedSingleText(raw)
		if text != want || ok != wantOK {
			t.Fatalf("singleText(%s) = %q, %v; decoded %q, %v", raw, text, ok, want, wantOK)
		}
	})
}

// A text becomes its JSON when it is JSON, else the JSON string json.Marshal
// writes for it.
func FuzzTextResult(f *testing.F) {
	for _, s := range []string{"Echo: hi", ` {"a": [1, 2]} `, "12", "<b>&\u2028\xff", "nul", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var want bytes.Buffer
		if json.Compact(&want, []byte(text)) != nil {
			b, _ := json.Marshal(text)
			want.Reset()
			want.Write(b)
		}
		if got := textResult(text); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("textResult(%q) = %s, want %s", text, got, want.Bytes())
		}
	})
}
