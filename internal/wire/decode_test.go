package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// plainExecute reads what it takes exactly as json.Unmarshal decodes it.
func FuzzPlainExecute(f *testing.F) {
	for _, s := range []string{
		`{"code":"const r0 = await mcp.everything.echo({message: \"one\"});\nreturn r0;","intent":"echo"}`,
		`{"code":"return args.x","args":{"x":[1,"\u00e9"]}}`, `{"code":"x","args":null}`,
		`{"code":"a","code":"b"}`, `{"CODE":"x"}`, `{"code":1}`, `{"code":"x","options":{"timeout_ms":5}}`,
		`{"code":"\ud83d"}`, `{}`, `[]`, `null`, `{"intent":null,"code":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := plainExecute(raw)
		if !ok {
			return
		}
		var want ExecuteRequest
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%s: read, but encoding/json refuses it: %v", raw, err)
		}
		if got.Code != want.Code || got.Intent != want.Intent || !bytes.Equal(got.Args, want.Args) || want.Options != nil || want.ContinueWorkflow != nil {
			t.Fatalf("%s: read %+v, encoding/json %+v", raw, got, want)
		}
	})
}

// The request an AI client sends is read without reflection.
func TestPlainExecuteReadsTheUsualRequest(t *testing.T) {
	raw := []byte(`{"code":"const r = await mcp.fs.read({path: \"a\"});\nreturn r;","intent":"read a","args":{"n":1}}`)
	req, ok := plainExecute(raw)
	if !ok || req.Code != "const r = await mcp.fs.read({path: \"a\"});\nreturn r;" || req.Intent != "read a" || string(req.Args) != `{"n":1}` {
		t.Fatalf("plainExecute = %+v, %v", req, ok)
	}
	if _, ok := plainExecute([]byte(`{"code":"x","args":{]}`)); ok {
		t.Fatal("args that are not JSON were read")
	}
}

func BenchmarkDecodeExecute(b *testing.B) {
	raw := []byte(`{"code":"const r0 = await mcp.everything.echo({message: \"one\"});\nconst r1 = await mcp.everything.echo({message: \"two\"});\nconst r2 = await mcp.everything.echo({message: \"three\"});\nreturn [r0, r1, r2];"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeExecute(raw); err != nil {
			b.Fatal(err)
		}
	}
}
