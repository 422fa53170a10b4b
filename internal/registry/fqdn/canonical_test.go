package fqdn

import (
	"encoding/json"
	"testing"
)

func TestCanonicalJSON(t *testing.T) {
	type meta struct {
		ProxyTo     string   `json:"proxyTo"`
		EnvRequired []string `json:"envRequired"`
		Extra       any      `json:"extra"`
	}
	v := meta{
		ProxyTo:     "https://example.test/a?b=1&c=<2>",
		EnvRequired: []string{"B_KEY", "A_KEY"},
		Extra:       map[string]any{"z": 1.5, "a": json.RawMessage(`{ "y" : 10000000000000000000001, "x":[ ] }`)},
	}
	got, err := CanonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"envRequired":["B_KEY","A_KEY"],"extra":{"a":{"x":[],"y":10000000000000000000001},"z":1.5},"proxyTo":"https://example.test/a?b=1&c=<2>"}`
	if string(got) != want {
		t.Errorf("CanonicalJSON =\n%s\nwant\n%s", got, want)
	}
}

func TestCanonicalJSONIgnoresLayout(t *testing.T) {
	a, err := CanonicalJSON(json.RawMessage(`{"b": [1, 2], "a": {"d": null, "c": "x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := CanonicalJSON(map[string]any{"a": map[string]any{"c": "x", "d": nil}, "b": []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Errorf("same value, different bytes:\n%s\n%s", a, b)
	}
}

func TestCanonicalJSONError(t *testing.T) {
	if _, err := CanonicalJSON(map[string]any{"f": func() {}}); err == nil {
		t.Error("CanonicalJSON of a func: want error")
	}
}
