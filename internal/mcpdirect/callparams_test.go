package mcpdirect

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallParams reads the params of an ordinary call, and whatever params it
// reads, it reads as the SDK's decoder does.
func TestCallParamsReadsACall(t *testing.T) {
	raw := json.RawMessage(`{"name":"execute","arguments":{"code":"return 1;"},"_meta":{"k":"v"}}`)
	p, ok := CallParams(raw)
	if !ok || p.Name != "execute" || string(p.Arguments) != `{"code":"return 1;"}` || p.Meta["k"] != "v" {
		t.Fatalf("%+v, %v", p, ok)
	}
	if p, ok := CallParams(json.RawMessage(`{"n\u0061me":"execute","arguments":{}}`)); !ok || p.Name != "execute" {
		t.Errorf("an escaped key: %+v, %v", p, ok)
	}
	for _, declined := range []string{`{"name":"x","task":{}}`, `{"Name":"x"}`, `{"name":3}`, `[1]`, `null`, `{"\u006eame":"x","t\u0061sk":{}}`} {
		if _, ok := CallParams(json.RawMessage(declined)); ok {
			t.Errorf("%s: read, not left to the SDK", declined)
		}
	}
}

func FuzzCallParams(f *testing.F) {
	for _, s := range []string{
		`{"name":"execute","arguments":{"code":"return 1;"},"_meta":{"k":"v"}}`,
		`{"name":null,"arguments":null}`, `{"name":"a\u00e9","name":"b"}`, `{}`, `{"_meta":{"progressToken":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		p, ok := CallParams(raw)
		if !ok {
			return
		}
		var want mcp.CallToolParamsRaw
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: read, the SDK's decoder refuses it: %v", raw, err)
		}
		if p.Name != want.Name || !bytes.Equal(p.Arguments, want.Arguments) || !reflect.DeepEqual(p.Meta, want.Meta) {
			t.Fatalf("%s:\n got %+v\nwant %+v", raw, p, want)
		}
	})
}
