package stdioconn

import (
	"encoding/json"
	"testing"
)

// decodeValid reads every valid message as decode does: the same message or
// an error for the same inputs. go test runs the seeds; go test -fuzz
// FuzzDecodeValid looks further.
func FuzzDecodeValid(f *testing.F) {
	for _, line := range benchLines {
		f.Add(line)
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":[1,{"b":"]}\"\\"}],"c":-1.5e3}}`,
		`{"jsonrpc":"2.0","id":"x","method":"m","params":[{"k":"\u00e9"}]}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
		` {"jsonrpc" :"2.0", "id":null, "method":"n"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		want, wantErr := decode(data)
		got, err := decodeValid(data)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%s: error %v, decode's %v", data, err, wantErr)
		}
		if err != nil {
			return
		}
		if g, w := encode(t, got), encode(t, want); g != w {
			t.Fatalf("%s:\n got %s\nwant %s", data, g, w)
		}
	})
}

// Ids are read as encoding/json reads them, Call's own (above 2^52) and
// those around 2^53 included.
func TestPlainIDIsUnmarshals(t *testing.T) {
	for _, id := range []string{`0`, `7`, `4503599627370497`, `9007199254740992`, `9007199254740993`, `99999999999999999`,
		`-1`, `1.5`, `1e3`, `"abc"`, `"a\"b"`, `null`, `true`} {
		var want any
		if err := json.Unmarshal([]byte(id), &want); err != nil {
			t.Fatal(err)
		}
		if got, ok := plainID([]byte(id)); ok && got != want {
			t.Errorf("plainID(%s) = %v, encoding/json %v", id, got, want)
		}
	}
	if _, ok := plainID([]byte(`4503599627370497`)); !ok {
		t.Error("Call's id is not read in place")
	}
}
