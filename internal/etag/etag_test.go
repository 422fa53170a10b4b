package etag

import "testing"

func TestNoneMatch(t *testing.T) {
	const tag = `"abc"`
	for _, tc := range []struct {
		header, tag string
		want        bool
	}{
		{`"abc"`, tag, true},
		{`W/"abc"`, tag, true},                // weak comparison ignores W/
		{`"abc"`, `W/"abc"`, true},            // on both sides
		{`W/"abc"`, `W/"abc"`, true},          //
		{`*`, tag, true},                      // any representation
		{` * `, tag, true},                    //
		{`"x", *`, tag, true},                 //
		{`"x", "abc"`, tag, true},             // a list
		{`"x","abc"`, tag, true},              // without spaces
		{"\t\"x\" ,\t W/\"abc\" ", tag, true}, // tabs and spaces around items
		{`"x", , "abc"`, tag, true},           // empty list items are allowed
		{`"a,b", "abc"`, tag, true},           // a comma inside a tag is part of it
		{`"a,b"`, `"a,b"`, true},              //
		{``, tag, false},                      // no header
		{`"x"`, tag, false},                   //
		{`"abcd"`, tag, false},                // tag is a substring of another
		{`"xabc"`, tag, false},
		{`"x"abc""`, tag, false},       // a garbled tag holding tag                //
		{`"ab"`, tag, false},           // another is a substring of tag
		{`"abc`, tag, false},           // unterminated
		{`abc`, tag, false},            // unquoted
		{`W/abc`, tag, false},          //
		{`w/"abc"`, tag, false},        // W/ is case-sensitive
		{`"a b", "abc"`, tag, false},   // malformed before the match: no 304
		{`"x" "abc"`, tag, true},       // missing comma: still two tags
		{`"abc"`, `abc`, false},        // the handler's tag is malformed
		{`"abc"`, `"abc"x`, false},     //
		{`""`, `""`, true},             // empty opaque tag
		{`"abc"`, `""`, false},         //
		{"\"\x80\"", "\"\x80\"", true}, // obs-text
	} {
		if got := NoneMatch(tc.header, tc.tag); got != tc.want {
			t.Errorf("NoneMatch(%q, %q) = %v, want %v", tc.header, tc.tag, got, tc.want)
		}
	}
}
