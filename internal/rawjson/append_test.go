package rawjson

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// AppendString writes what encoding/json writes (AsEncodingJSON), what it
// writes without HTML escaping (AsEncodingJSONWithoutHTML), or, for valid
// UTF-8, what it writes without its HTML and line-separator escapes
// (AsJSONStringify, JSON.stringify's escaping); AppendNumber writes a
// finite number as encoding/json does.
func FuzzAppendString(f *testing.F) {
	f.Add("plain", 1.5)
	f.Add("a<b>&c \"q\" \\ \n\t\b\f\x01 \u2028\u2029 é \xff", 1e-7)
	f.Add("", 1e21)
	f.Fuzz(func(t *testing.T, s string, n float64) {
		want, _ := json.Marshal(s)
		if got := AppendString([]byte("x"), s, AsEncodingJSON); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("%q: %s, encoding/json %s", s, got[1:], want)
		}
		if got := AppendString(nil, []byte(s), AsEncodingJSON); !bytes.Equal(got, want) {
			t.Fatalf("%q as bytes: %s, encoding/json %s", s, got, want)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		noHTML := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if got := AppendString(nil, s, AsEncodingJSONWithoutHTML); !bytes.Equal(got, noHTML) {
			t.Fatalf("%q: %s, encoding/json without HTML escaping %s", s, got, noHTML)
		}
		if utf8.ValidString(s) && !strings.ContainsAny(s, "\u2028\u2029") {
			if got := AppendString(nil, []byte(s), AsJSONStringify); !bytes.Equal(got, noHTML) {
				t.Fatalf("%q: %s, encoding/json without HTML escaping %s", s, got, noHTML)
			}
		}
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return
		}
		wantN, _ := json.Marshal(n)
		if got := AppendNumber(nil, n); !bytes.Equal(got, wantN) {
			t.Fatalf("%v: %s, encoding/json %s", n, got, wantN)
		}
	})
}
