package secretmask

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

const (
	token = "ghp_A1b2C3d4E5f6G7h8I9j0Kl+MnOp/QrStUv=" // token-like
	dbURL = "postgres://app:pw@localhost:5432/dev"    // not token-like
)

func TestMaskFindsTransformsOfAValue(t *testing.T) {
	s := New([]string{token, dbURL, "dev"}, 0, "[X]")
	basic := base64.StdEncoding.EncodeToString([]byte("user:" + token))
	for name, text := range map[string]string{
		"raw":              "key " + token + " end",
		"upper":            strings.ToUpper(token),
		"lower":            strings.ToLower(token),
		"mixed case":       "GhP_a1B2c3D4e5F6g7H8i9J0kL+mNoP/qRsTuV=",
		"base64":           base64.StdEncoding.EncodeToString([]byte(token)),
		"base64 url":       base64.RawURLEncoding.EncodeToString([]byte(token)),
		"basic auth":       "Authorization: Basic " + basic,
		"in base64 off 1":  base64.StdEncoding.EncodeToString([]byte("a" + token + "zz")),
		"in base64 off 2":  base64.URLEncoding.EncodeToString([]byte("ab" + token)),
		"hex":              hex.EncodeToString([]byte(token)),
		"hex upper":        strings.ToUpper(hex.EncodeToString([]byte(token))),
		"query escaped":    "q=" + url.QueryEscape(token),
		"path escaped":     "/p/" + url.PathEscape(token),
		"split fragment":   strings.Split(token, "_")[1],
		"slice":            token[10:22],
		"reversed halves?": token[20:] + "|" + token[:20],
		"url whole":        "dsn=" + dbURL,
		"url upper":        strings.ToUpper(dbURL),
	} {
		got := s.Mask(text)
		if got == text || strings.Contains(got, token[12:20]) {
			t.Errorf("%s: %q -> %q", name, text, got)
		}
	}
	for name, text := range map[string]string{
		"short fragment":    token[4:11], // 7 bytes
		"url fragment":      "connect to localhost:5432 please",
		"short value":       "dev build",
		"unrelated":         "nothing to see here, 1234567890",
		"other token":       "ghp_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ",
		"hash of the value": fmt.Sprintf("%x", sha256.Sum256([]byte(token))), // documented limit
		"reversed":          reverse(token),                                  // documented limit
	} {
		if got := s.Mask(text); got != text {
			t.Errorf("%s: %q masked to %q", name, text, got)
		}
	}
	if got := s.Mask("a" + token + "b" + token); got != "a[X]b[X]" {
		t.Errorf("two occurrences: %q", got)
	}
	if !s.Contains(token) || s.Contains("plain") {
		t.Error("Contains")
	}
}

func TestMaskKeepsUTF8AndEmptySets(t *testing.T) {
	v := "clé-secrète-42-été-ÀÉÎ9"
	s := New([]string{v}, 0, "[X]")
	got := s.Mask("x " + v + " y")
	if got != "x [X] y" {
		t.Fatalf("%q", got)
	}
	for _, e := range []*Set{nil, New(nil, 0, "[X]"), New([]string{"short"}, 0, "[X]")} {
		if !e.Empty() || e.Mask(token) != token {
			t.Fatalf("empty set masked")
		}
	}
}

func BenchmarkMask10KB(b *testing.B) {
	var values []string
	for i := range 20 {
		values = append(values, fmt.Sprintf("sk-test-%02d-A1b2C3d4E5f6G7h8I9j0KlMnOp", i))
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog 0123456789. ", 180)
	b.Run("new", func(b *testing.B) {
		for range b.N {
			New(values, 0, "[X]")
		}
	})
	s := New(values, 0, "[X]")
	b.Run("mask", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for range b.N {
			s.Mask(text)
		}
	})
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
