package tools

import (
	"slices"
	"testing"
)

func TestNearest(t *testing.T) {
	cands := []string{
		"filesystem:read_file", "filesystem:write_file", "filesystem:list_directory",
		"json:parse", "json:stringify", "json:query", "math:add", "crypto:sha256",
	}
	cases := []struct {
		id    string
		n     int
		first string
		want  []string // all of these in the result, if set
		none  []string
	}{
		{id: "json:parce", n: 3, first: "json:parse"},
		{id: "filesystem:readfile", n: 3, first: "filesystem:read_file"},
		{id: "fs:read_file", n: 3, first: "filesystem:read_file"},
		{id: "filesystem:read", n: 3, first: "filesystem:read_file"},
		{id: "jsn:stringify", n: 1, want: []string{"json:stringify"}},
		{id: "json:nope", n: 3, want: []string{"json:parse", "json:query", "json:stringify"}},
		{id: "math:ad", n: 3, first: "math:add", none: []string{"crypto:sha256"}},
		{id: "weather:forecast", n: 3, want: []string{}},
	}
	for _, c := range cases {
		got := Nearest(c.id, cands, c.n)
		if len(got) > c.n {
			t.Errorf("Nearest(%q, %d) = %v: too many", c.id, c.n, got)
		}
		if c.first != "" && (len(got) == 0 || got[0] != c.first) {
			t.Errorf("Nearest(%q) = %v, want %s first", c.id, got, c.first)
		}
		if c.want != nil {
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("Nearest(%q) = %v, want it to contain %s", c.id, got, w)
				}
			}
			if len(c.want) == 0 && len(got) != 0 {
				t.Errorf("Nearest(%q) = %v, want nothing", c.id, got)
			}
		}
		for _, n := range c.none {
			if slices.Contains(got, n) {
				t.Errorf("Nearest(%q) = %v, must not contain %s", c.id, got, n)
			}
		}
	}
}
