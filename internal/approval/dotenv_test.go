package approval

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadDotEnv(t *testing.T) {
	content := "\uFEFF# a comment\r\n" +
		"PLAIN=value\r\n" +
		"  SPACED  =   padded value   \n" +
		"export EXPORTED=1\n" +
		"export\tTABBED=2\n" +
		"export=not a prefix\n" +
		"EMPTY=\n" +
		"EMPTY_COMMENT= # nothing here\n" +
		"INLINE=abc # trailing comment\n" +
		"HASH_IN_VALUE=abc#def\n" +
		"HASH_FIRST=#abc\n" +
		"EQUALS=a=b=c\n" +
		`DOUBLE="with \"quotes\", a \\ and\nnewline\t$HOME \$x \q" # c` + "\n" +
		`SINGLE='literal \n ${X} "q"'` + "\n" +
		"MULTI=\"-----BEGIN KEY-----\nline2\n-----END KEY-----\"\n" +
		"MULTI_SINGLE='a\nb'\n" +
		"DUP=first\nDUP=second\n" +
		`QUOTED_HASH="a # b"` + "\n" +
		"EXPANDED=${PLAIN}\n" +
		"LAST=no newline at end"
	path := filepath.Join(t.TempDir(), ".env")
	writeFile(t, path, content)
	got, err := LoadDotEnv(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"PLAIN":         "value",
		"SPACED":        "padded value",
		"EXPORTED":      "1",
		"TABBED":        "2",
		"export":        "not a prefix",
		"EMPTY":         "",
		"EMPTY_COMMENT": "",
		"INLINE":        "abc",
		"HASH_IN_VALUE": "abc#def",
		"HASH_FIRST":    "#abc",
		"EQUALS":        "a=b=c",
		"DOUBLE":        "with \"quotes\", a \\ and\nnewline\t$HOME $x \\q",
		"SINGLE":        `literal \n ${X} "q"`,
		"MULTI":         "-----BEGIN KEY-----\nline2\n-----END KEY-----",
		"MULTI_SINGLE":  "a\nb",
		"DUP":           "second",
		"QUOTED_HASH":   "a # b",
		"EXPANDED":      "${PLAIN}",
		"LAST":          "no newline at end",
	}
	if !maps.Equal(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected key %s = %q", k, got[k])
			}
		}
	}
}

func TestLoadDotEnvMissingFile(t *testing.T) {
	got, err := LoadDotEnv(filepath.Join(t.TempDir(), "nope", ".env"))
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("missing file = %v, %v; want empty map, nil", got, err)
	}
}

func TestLoadDotEnvErrors(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"no equals", "GOOD=1\nJUST_A_WORD\n", ":2: want KEY=VALUE"},
		{"bad key", "A=1\n\n1BAD=x\n", ":3: want KEY=VALUE"},
		{"yaml style", "KEY: value\n", ":1: want KEY=VALUE"},
		{"unterminated double", "A=1\nB=\"never closed\nmore\n", ":2: B: unterminated double-quoted value"},
		{"unterminated single", "B='open\n", ":1: B: unterminated single-quoted value"},
		{"text after quote", "A=\"x\" y\n", ":1: A: unexpected text after the closing quote"},
		{"line after multi-line", "A=\"x\ny\" z\n", ":2: A: unexpected text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".env")
			writeFile(t, path, tt.content)
			_, err := LoadDotEnv(path)
			if err == nil || !strings.Contains(err.Error(), path+tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, path+tt.want)
			}
		})
	}
}

func TestLoadDotEnvUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory is not a readable .env
	if _, err := LoadDotEnv(dir); err == nil {
		t.Error("reading a directory succeeded")
	}
}
