package fqdn

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Name
	}{
		{"casys.pml.fs.read_json.a7f3", Name{"casys", "pml", "fs", "read_json", "a7f3"}},
		{"pml.std.filesystem.read_file", Name{"pml", "std", "filesystem", "read_file", ""}},
		{"pml.mcp.old-tool.server.0000", Name{"pml", "mcp", "old-tool", "server", "0000"}},
		{"acme.Proj.notion.API-get-user.ffff", Name{"acme", "Proj", "notion", "API-get-user", "ffff"}},
		{"a.b.c._x", Name{"a", "b", "c", "_x", ""}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		if got.String() != tt.in {
			t.Errorf("Parse(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"", "parts"},
		{"a.b.c", "got 3"},
		{"a.b.c.d.e.f", "got 6"},
		{"a..c.d", "project: empty"},
		{"a.b.c.d.", "hash"},
		{"a.b.c.d.ABCD", "lowercase hex"},
		{"a.b.c.d.abc", "hash"},
		{"a.b.c.d.abcde", "hash"},
		{"a.b.c.d.g123", "hash"},
		{"a.b/x.c.d", "'/'"},
		{"a.b.c d.e", "' '"},
		{"a.b.c.d:e", "':'"},
		{"a.b.c.é", "action"},
		{"a.b.c." + strings.Repeat("x", MaxPartLen+1), "longer"},
	}
	for _, tt := range tests {
		n, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q) = %#v, want error", tt.in, n)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q) error %v does not wrap ErrInvalid", tt.in, err)
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("Parse(%q) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
}

func TestNameForms(t *testing.T) {
	n := Name{"pml", "std", "filesystem", "read_file", "b2c4"}
	if got := n.Base(); got != "pml.std.filesystem.read_file" {
		t.Errorf("Base() = %q", got)
	}
	if got := n.WithHash("").String(); got != "pml.std.filesystem.read_file" {
		t.Errorf("WithHash(\"\").String() = %q", got)
	}
	if got := n.WithHash("0a0b").String(); got != "pml.std.filesystem.read_file.0a0b" {
		t.Errorf("WithHash(\"0a0b\").String() = %q", got)
	}
	if n.Hash != "b2c4" {
		t.Errorf("WithHash modified its receiver: %q", n.Hash)
	}
}

func TestValidate(t *testing.T) {
	if err := (Name{"pml", "mcp", "serena", "server", "c5d6"}).Validate(); err != nil {
		t.Errorf("valid name: %v", err)
	}
	for _, n := range []Name{
		{"pml", "mcp", "my.server", "server", "c5d6"},
		{"pml", "mcp", "", "server", ""},
		{"pml", "mcp", "x", "server", "C5D6"},
	} {
		if err := n.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%#v) = %v, want ErrInvalid", n, err)
		}
	}
}

func TestParseAnyHash(t *testing.T) {
	for in, want := range map[string]string{
		"pml.std.json.parse.xxxx": "xxxx",
		"pml.std.json.parse.ABCD": "ABCD",
		"pml.std.json.parse.ab12": "ab12",
		"pml.std.json.parse.éééé": "éééé",
	} {
		n, err := ParseAnyHash(in)
		if err != nil || n.Hash != want || n.Base() != "pml.std.json.parse" {
			t.Errorf("ParseAnyHash(%q) = %+v, %v", in, n, err)
		}
	}
	for _, in := range []string{"pml.std.json.parse.abcde", "pml.std.json.parse.", "pml..json.parse.xxxx", "a.b.c.d.e.f", "pml.std.json.parse.x.yy"} {
		if _, err := ParseAnyHash(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseAnyHash(%q): err %v, want ErrInvalid", in, err)
		}
	}
}
