package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestCallArgumentsBothPaths sends the same arguments once as plain data
// (written in Go) and once with a getter (the bridge's path): the tool sees
// the same JSON.
func TestCallArgumentsBothPaths(t *testing.T) {
	tt := &testTools{}
	res, err := Run(context.Background(), fn(`
		const plain = {s: "a\nb", n: [1, 2.5, -0, 1e-7], o: {x: null, t: true}, u: undefined};
		const viaJS = {get s() { return "a\nb" }, n: [1, 2.5, -0, 1e-7], o: {x: null, t: true}, u: undefined};
		return [await mcp.test.echo(plain), await mcp.test.echo(viaJS)]`), nil, tt.call, testLimits())
	if err != nil {
		t.Fatal(err)
	}
	var both [2]json.RawMessage
	if err := json.Unmarshal(res.Value, &both); err != nil {
		t.Fatal(err)
	}
	if string(both[0]) != string(both[1]) {
		t.Errorf("plain %s, via JS %s", both[0], both[1])
	}
	if calls := tt.recorded(); len(calls) != 2 || calls[0].args != calls[1].args {
		t.Errorf("calls %+v", calls)
	}
}

// TestResultBothPaths returns the same data once as plain data (written in
// Go) and once behind a getter (the bridge's path): the results are the
// same. Bare values are returned as they are too.
func TestResultBothPaths(t *testing.T) {
	for _, value := range []string{
		`{s: "a\nb", n: [1, 2.5, -0, 1e-7, 1e21], o: {x: null, t: true}, u: undefined}`,
		`[1, "two", [3], {}]`, `"text"`, `1.5`, `true`, `null`, `undefined`,
	} {
		plain, err := Run(context.Background(), fn("return {r: "+value+"}"), nil, nil, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		viaJS, err := Run(context.Background(), fn("const v = "+value+"; return {get r() { return v }}"), nil, nil, testLimits())
		if err != nil {
			t.Fatal(err)
		}
		if string(plain.Value) != string(viaJS.Value) {
			t.Errorf("%s: plain %s, via JS %s", value, plain.Value, viaJS.Value)
		}
		bare, err := Run(context.Background(), fn("return "+value), nil, nil, testLimits())
		if want := strings.TrimSuffix(strings.TrimPrefix(string(plain.Value), `{"r":`), "}"); err != nil || string(bare.Value) != want && value != "undefined" {
			t.Errorf("%s: bare %s, %v; want %s", value, bare.Value, err, want)
		}
	}
}
