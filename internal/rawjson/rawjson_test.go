package rawjson

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// Members finds, in any valid document, the members encoding/json decodes
// into a map (the last of a repeated key winning there), value bytes
// exactly; it declines only what is not an object or has an escaped key.
// PlainString reads a string as encoding/json does, or declines one with an
// escape.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":[1,{"b":"]}\"\\"}],"c":-1.5e3}}`,
		` { "a" : [ 1 , 2 ] , "b" : "x" , "a" : null } `,
		`{"\u0061":1}`, `[1]`, `"s"`, `{}`, `{"k":"v\n"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		got := map[string]json.RawMessage{}
		ok := Members(data, func(key, value []byte) bool {
			got[string(key)] = value
			if s, plain := PlainString(value); plain {
				var want string
				if err := json.Unmarshal(value, &want); err != nil || s != want {
					t.Fatalf("PlainString(%s) = %q, encoding/json: %q, %v", value, s, want, err)
				}
			}
			return true
		})
		var want map[string]json.RawMessage
		err := json.Unmarshal(data, &want)
		if !ok {
			if err == nil && want != nil && !bytes.Contains(data, []byte(`\`)) && utf8.Valid(data) {
				t.Fatalf("%s: declined an object without escapes or invalid UTF-8", data)
			}
			return
		}
		if err != nil || want == nil {
			t.Fatalf("%s: read as an object, encoding/json: %v", data, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d members, encoding/json %d", data, len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("%s: member %q = %s, encoding/json %s", data, k, got[k], v)
			}
		}
	})
}
