package fqdn

import (
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

func TestForCode(t *testing.T) {
	code := "return await mcp.fs.read_file({path: args.path});"
	n, integrity := ForCode("casys", "pml", "fs", "read_json", code)
	if integrity != Integrity([]byte(code)) {
		t.Errorf("integrity %q is not Integrity(code)", integrity)
	}
	if want := strings.TrimPrefix(integrity, "sha256-")[:4]; n.Hash != want {
		t.Errorf("hash %q, want first 4 hex of integrity %q", n.Hash, want)
	}
	if got, err := Parse(n.String()); err != nil || got != n {
		t.Errorf("Parse(%q) = %#v, %v", n.String(), got, err)
	}
	if !strings.HasPrefix(n.String(), "casys.pml.fs.read_json.") {
		t.Errorf("name %q", n)
	}
	n2, _ := ForCode("casys", "pml", "fs", "read_json", code+" ")
	if n2.Base() != n.Base() || n2.Hash == n.Hash {
		// Two hashes can collide (1 in 65536); these two inputs do not.
		t.Errorf("changed code: %q vs %q", n2, n)
	}
}

func TestForStdio(t *testing.T) {
	meta := map[string]any{"command": "npx", "args": []string{"@example/serena"}}

	sum := sha512.Sum512([]byte("tarball"))
	pkg := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	n, integrity := ForStdio("serena", meta, pkg)
	if integrity != pkg {
		t.Errorf("integrity %q, want the package integrity", integrity)
	}
	if want := "pml.mcp.serena.server." + hex.EncodeToString(sum[:2]); n.String() != want {
		t.Errorf("name %q, want %q", n, want)
	}

	// Unknown (or unusable) package integrity: the metadata decides.
	canon, err := CanonicalJSON(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "sha512-garbage"} {
		n, integrity := ForStdio("serena", meta, p)
		if integrity != Integrity(canon) || n.Hash != Hash4(Integrity(canon)) || n.Base() != "pml.mcp.serena.server" {
			t.Errorf("ForStdio(%q) = %q, %q", p, n, integrity)
		}
	}
}

func TestForHTTP(t *testing.T) {
	type meta struct {
		ProxyTo     string   `json:"proxyTo"`
		EnvRequired []string `json:"envRequired"`
	}
	n, integrity := ForHTTP("tavily", meta{"https://api.example.test", []string{"TAVILY_API_KEY"}})
	// Same data as a map with keys in another order: same name.
	n2, integrity2 := ForHTTP("tavily", map[string]any{"envRequired": []string{"TAVILY_API_KEY"}, "proxyTo": "https://api.example.test"})
	if n != n2 || integrity != integrity2 {
		t.Errorf("equal metadata, different names: %q %q / %q %q", n, integrity, n2, integrity2)
	}
	if err := n.Validate(); err != nil || n.Base() != "pml.mcp.tavily.server" {
		t.Errorf("name %q: %v", n, err)
	}
	moved, _ := ForHTTP("tavily", meta{"https://evil.example.test", []string{"TAVILY_API_KEY"}})
	if moved.Hash == n.Hash {
		t.Errorf("changed proxy URL kept hash %q", n.Hash)
	}
	if bad, integrity := ForHTTP("tavily", make(chan int)); bad != (Name{}) || integrity != "" {
		t.Errorf("unencodable meta: %#v, %q", bad, integrity)
	}
}
