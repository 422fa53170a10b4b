package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
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

// String reads any JSON string token as json.Unmarshal reads it into a
// string, and declines whatever json.Unmarshal refuses (and a token with
// space around it, which Members never gives).
func FuzzString(f *testing.F) {
	for _, s := range []string{
		`"plain"`, `"a\nb\"c\\d\/e\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`,
		`"\udc00\ud800"`, "\"\xff\xfe\"", `"\u12"`, `"\x"`, `"a"b"`, "\"\t\"", `"`, `""`, `x`,
		"\"\xed\xa0\x80\"", `"\u0000"`, `"\ud800\udbff"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		got, ok := String(v)
		var want string
		err := json.Unmarshal(v, &want)
		if !ok {
			if err == nil && len(bytes.TrimSpace(v)) == len(v) {
				t.Fatalf("String(%q) declined; encoding/json reads %q", v, want)
			}
			return
		}
		if err != nil || got != want {
			t.Fatalf("String(%q) = %q; encoding/json: %q, %v", v, got, want, err)
		}
	})
}

// Valid is json.Valid.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,-0.5e+3,true,false,null,"\u00e9\n"],"b":{}}`, ` [ ] `, `{"a" 1}`, `{"a":1,}`, `[1,]`, `01`, `-`, `1.`,
		`1e`, `"\x"`, "\"\x01\"", "\"\xff\"", `{"a":1}}`, `[}`, `{]`, `nul`, `truex`, `1 2`, ``, ` `, `"\u12G4"`,
		`{"a":{"b":[{"c":[]}]}}`, `[[[[[[[[[[]]]]]]]]]]`, `{,}`, `{"a":}`, `[-01]`, `[1e+]`, "\t\n\r1\t",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Valid(data), json.Valid(data); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", data, got, want)
		}
	})
}

// Valid refuses nesting past encoding/json's bound, as json.Valid does.
func TestValidDepth(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		doc := strings.Repeat("[", n) + strings.Repeat("]", n)
		if got, want := Valid([]byte(doc)), json.Valid([]byte(doc)); got != want {
			t.Fatalf("depth %d: Valid %v, json.Valid %v", n, got, want)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":4503599627370497,"result":{"content":[{"type":"text","text":"Echo: one"}],"structuredContent":{"a":[1,2.5,true,null]}}}`)
	for _, v := range []struct {
		name  string
		valid func([]byte) bool
	}{{"rawjson", Valid}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if !v.valid(msg) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// Compact writes what json.Compact writes, and fails where it fails.
func FuzzCompact(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,"b c",{"d":null}]}`, ` { "a" : [ 1 , "b c" ] } `, "[1,\n2]", `{"a":}`, `"\u2028 <>&"`, "\"\xff\"", ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, ok := Compact([]byte("prefix"), src)
		var want bytes.Buffer
		want.WriteString("prefix")
		err := json.Compact(&want, src)
		if ok != (err == nil) || ok && !bytes.Equal(got, want.Bytes()) || !ok && string(got) != "prefix" {
			t.Fatalf("Compact(%q) = %q, %v; json.Compact %q, %v", src, got, ok, want.Bytes(), err)
		}
	})
}
