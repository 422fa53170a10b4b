package fqdn

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"testing"
)

func TestIntegrity(t *testing.T) {
	// SHA-256("") is a published constant; pinning it guards the format.
	const empty = "sha256-e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := Integrity(nil); got != empty {
		t.Errorf("Integrity(nil) = %q, want %q", got, empty)
	}
	if got := Hash4(empty); got != "e3b0" {
		t.Errorf("Hash4(%q) = %q, want e3b0", empty, got)
	}
}

func TestHash4SRI(t *testing.T) {
	content := []byte("a package tarball")
	s512 := sha512.Sum512(content)
	s256 := sha256.Sum256(content)
	tests := []struct{ in, want string }{
		{"sha512-" + base64.StdEncoding.EncodeToString(s512[:]), hex.EncodeToString(s512[:2])},
		{"sha256-" + base64.StdEncoding.EncodeToString(s256[:]), hex.EncodeToString(s256[:2])},
		{"sha256-" + hex.EncodeToString(s256[:]), hex.EncodeToString(s256[:2])},
	}
	for _, tt := range tests {
		if got := Hash4(tt.in); got != tt.want {
			t.Errorf("Hash4(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestHash4Malformed(t *testing.T) {
	for _, in := range []string{
		"",
		"sha256-",
		"sha256-abc123",
		"md5-" + hex.EncodeToString(make([]byte, 16)),
		"sha256" + hex.EncodeToString(make([]byte, 32)),
		"sha256-" + hex.EncodeToString(make([]byte, 31)) + "zz",
		"sha512-" + hex.EncodeToString(make([]byte, 32)),
		"sha256-!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!=",
	} {
		if got := Hash4(in); got != "" {
			t.Errorf("Hash4(%q) = %q, want \"\"", in, got)
		}
	}
}
