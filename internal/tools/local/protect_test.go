package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
)

// callApproved calls tool as the package's gate does after a person
// approved that one call.
func (f fixture) callApproved(t *testing.T, tool string, args map[string]any) (string, error) {
	t.Helper()
	out, err := f.p.Call(WithApproval(context.Background(), true), tool, mustJSON(t, args))
	return string(out), err
}

// wantNeeds checks err is the PERMISSION_DENIED of an operation to approve.
func wantNeeds(t *testing.T, err error, kind, path string) {
	t.Helper()
	var na *NeedsApproval
	pe, _ := pmlerr.As(err)
	if pe == nil || pe.Code != pmlerr.PermissionDenied || !errors.As(err, &na) || na.Kind != kind || na.Path != path {
		t.Fatalf("got %v (%#v); want %s of %s", err, na, kind, path)
	}
}

// Every way a tool could write PML's own files is refused, approved or not,
// and nothing on disk changes.
func TestControlFilesAreNeverWritten(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{".pml.json", ".pml/deps.json", ".pml/mcp.lock", ".env", ".env.local", ".mcp.json"} {
		writeFile(t, filepath.Join(f.ws, name), "original")
	}
	mkdir(t, filepath.Join(f.ws, "state"))
	symlink(t, ".pml.json", filepath.Join(f.ws, "cfg-link"))
	symlink(t, ".pml", filepath.Join(f.ws, "state-link"))
	mkdir(t, filepath.Join(f.ws, "nested"))
	symlink(t, "../state", filepath.Join(f.ws, "nested", ".pml"))
	writeFile(t, filepath.Join(f.ws, "plain.txt"), "plain")

	writes := []map[string]any{
		{"path": ".pml.json", "content": `{"permissions":{"allow":["*"]}}`},
		{"path": ".PML.JSON", "content": "x"},
		{"path": ".pml/deps.json", "content": "x"},
		{"path": ".pml/mcp.lock", "content": "x"},
		{"path": ".Pml/new-file", "content": "x"},
		{"path": ".env", "content": "PML_API_KEY=stolen"},
		{"path": ".env.production", "content": "x"},
		{"path": ".mcp.json", "content": "x"},
		{"path": "sub/../.pml.json", "content": "x"},
		{"path": filepath.Join(f.ws, ".pml.json"), "content": "x"},
		{"path": "cfg-link", "content": "x"},
		{"path": "state-link/deps.json", "content": "x"},
		{"path": "nested/.pml/deps.json", "content": "x"},
		{"path": ".pml.json", "content": "x", "append": true},
	}
	for _, args := range writes {
		for _, call := range []func(string, map[string]any) (string, error){
			func(tool string, a map[string]any) (string, error) {
				out, err := f.call(t, tool, a)
				return string(out), err
			},
			func(tool string, a map[string]any) (string, error) { return f.callApproved(t, tool, a) },
		} {
			out, err := call("filesystem:write_file", args)
			pe, _ := pmlerr.As(err)
			if pe == nil || pe.Code != pmlerr.PermissionDenied || !strings.Contains(pe.Message, "edit it by hand") {
				t.Fatalf("write_file %v = %s, %v", args, out, err)
			}
		}
	}
	for _, args := range []map[string]any{
		{"source": ".env", "destination": "leaked.txt"},
		{"source": ".pml", "destination": "moved"},
		{"source": "plain.txt", "destination": ".pml.json", "overwrite": true},
		{"source": "plain.txt", "destination": ".pml/deps.json", "overwrite": true},
	} {
		if _, err := f.callApproved(t, "filesystem:move_file", args); pmlerr.CodeOf(err, "") != pmlerr.PermissionDenied {
			t.Fatalf("move_file %v: %v", args, err)
		}
	}
	if _, err := f.callApproved(t, "filesystem:make_directory", map[string]any{"path": ".pml/hooks"}); pmlerr.CodeOf(err, "") != pmlerr.PermissionDenied {
		t.Fatalf("make_directory under .pml: %v", err)
	}
	for _, name := range []string{".pml.json", ".pml/deps.json", ".pml/mcp.lock", ".env", ".env.local", ".mcp.json"} {
		if b, err := os.ReadFile(filepath.Join(f.ws, name)); err != nil || string(b) != "original" {
			t.Fatalf("%s changed: %q %v", name, b, err)
		}
	}
	for _, gone := range []string{"state/deps.json", ".pml/new-file", ".env.production", ".pml/hooks", "leaked.txt", "moved"} {
		if exists(filepath.Join(f.ws, gone)) {
			t.Fatalf("%s was created", gone)
		}
	}
	// Ordinary files next to them are still written.
	f.ok(t, "filesystem:write_file", map[string]any{"path": "notes.txt", "content": "ok"}, nil)
	f.ok(t, "filesystem:write_file", map[string]any{"path": ".pml.json.bak", "content": "ok"}, nil)
}

// Writes where other programs run code from ask for each call, and run once
// approved.
func TestHookWritesNeedApprovalEachTime(t *testing.T) {
	f := newFixture(t)
	mkdir(t, filepath.Join(f.ws, ".git", "hooks"))
	symlink(t, ".git/hooks", filepath.Join(f.ws, "h"))
	for _, c := range []struct{ path, rel string }{
		{".git/hooks/pre-commit", ".git/hooks/pre-commit"},
		{".GIT/hooks/post-checkout", ".GIT/hooks/post-checkout"},
		{"h/pre-push", ".git/hooks/pre-push"},
		{".husky/pre-commit", ".husky/pre-commit"},
		{".githooks/commit-msg", ".githooks/commit-msg"},
		{"vendor/lib/.git/config", "vendor/lib/.git/config"},
		{".envrc", ".envrc"},
	} {
		_, err := f.call(t, "filesystem:write_file", map[string]any{"path": c.path, "content": "#!/bin/sh\nid\n"})
		wantNeeds(t, err, KindHookWrite, c.rel)
		if exists(filepath.Join(f.ws, c.rel)) {
			t.Fatalf("%s written without approval", c.path)
		}
		if _, err := f.callApproved(t, "filesystem:write_file", map[string]any{"path": c.path, "content": "#!/bin/sh\n"}); err != nil {
			t.Fatalf("approved write %s: %v", c.path, err)
		}
	}
	_, err := f.call(t, "filesystem:make_directory", map[string]any{"path": ".husky/_"})
	wantNeeds(t, err, KindHookWrite, ".husky/_")
	writeFile(t, filepath.Join(f.ws, "hook.sh"), "#!/bin/sh\n")
	_, err = f.call(t, "filesystem:move_file", map[string]any{"source": "hook.sh", "destination": ".git/hooks/pre-rebase"})
	wantNeeds(t, err, KindHookWrite, ".git/hooks/pre-rebase")
	f.ok(t, "filesystem:write_file", map[string]any{"path": ".gitignore", "content": "x\n"}, nil)
}

// Keys and credentials are read only with an approval of that read.
func TestSecretReadsNeedApprovalEachTime(t *testing.T) {
	f := newFixture(t)
	secrets := map[string]string{
		".env":                 "OPENAI_API_KEY=sk-test",
		"apps/web/.env.local":  "X=1",
		".pml/gateway.db":      "db",
		"certs/server.pem":     "pem",
		"tls.KEY":              "key",
		"id_rsa":               "rsa",
		"keys/id_ed25519":      "ed",
		".npmrc":               "//registry/:_authToken=x",
		".netrc":               "machine x",
		".pgpass":              "h:5432:*:u:p",
		"credentials.json":     "{}",
		"gcp-credentials.json": "{}",
		".aws/credentials":     "[default]",
		".docker/config.json":  "{}",
	}
	for name, content := range secrets {
		writeFile(t, filepath.Join(f.ws, name), content)
	}
	symlink(t, ".env", filepath.Join(f.ws, "innocent.txt"))
	for name, content := range secrets {
		for _, enc := range []string{"utf8", "base64"} {
			_, err := f.call(t, "filesystem:read_file", map[string]any{"path": name, "encoding": enc})
			wantNeeds(t, err, KindSecretRead, name)
		}
		got, err := f.callApproved(t, "filesystem:read_file", map[string]any{"path": name})
		if err != nil || !strings.Contains(got, strings.ReplaceAll(content, `"`, `\"`)) {
			t.Fatalf("approved read %s = %s, %v", name, got, err)
		}
	}
	_, err := f.call(t, "filesystem:read_file", map[string]any{"path": "innocent.txt"})
	wantNeeds(t, err, KindSecretRead, ".env")
	// Renaming a secret to read it later asks too.
	_, err = f.call(t, "filesystem:move_file", map[string]any{"source": "tls.KEY", "destination": "notes.txt"})
	wantNeeds(t, err, KindSecretRead, "tls.KEY")
	// A public key and ordinary files read as before.
	writeFile(t, filepath.Join(f.ws, "id_rsa.pub"), "ssh-rsa AAAA")
	writeFile(t, filepath.Join(f.ws, "environment.md"), "doc")
	f.ok(t, "filesystem:read_file", map[string]any{"path": "id_rsa.pub"}, nil)
	f.ok(t, "filesystem:read_file", map[string]any{"path": "environment.md"}, nil)
}

// A hard link inside the workspace to a file outside is neither read nor
// written, approved or not; the outside file keeps its content.
func TestHardLinksRefused(t *testing.T) {
	f := newFixture(t)
	outside := filepath.Join(f.outside, "secret.txt")
	if err := os.Link(outside, filepath.Join(f.ws, "link.txt")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	for _, tool := range []struct {
		name string
		args map[string]any
	}{
		{"filesystem:read_file", map[string]any{"path": "link.txt"}},
		{"filesystem:write_file", map[string]any{"path": "link.txt", "content": "overwritten"}},
		{"filesystem:write_file", map[string]any{"path": "link.txt", "content": "appended", "append": true}},
	} {
		out, err := f.callApproved(t, tool.name, tool.args)
		pe, _ := pmlerr.As(err)
		if pe == nil || pe.Code != pmlerr.PermissionDenied || !strings.Contains(pe.Message, "2 hard links") {
			t.Fatalf("%s = %s, %v", tool.name, out, err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "top secret" {
		t.Fatalf("outside file changed: %q", b)
	}
	// Once the second name is gone, the file is an ordinary file again.
	if err := os.Remove(outside); err != nil {
		t.Fatal(err)
	}
	var got string
	f.ok(t, "filesystem:read_file", map[string]any{"path": "link.txt"}, &got)
	if got != "top secret" {
		t.Fatalf("read %q", got)
	}
}

func TestSecretPatternsListed(t *testing.T) {
	got := strings.Join(SecretPatterns(), " ")
	for _, want := range []string{".pml/", ".env", ".env.*", "*.pem", "id_rsa*", ".npmrc", ".aws/", ".docker/"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q missing from %s", want, got)
		}
	}
}
