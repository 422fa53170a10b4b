package workspace

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// syncBuffer is a log destination the package's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A permission rule that matches no known tool or server is warned about,
// with the nearest known one, once; the rules that do match, a capability's
// and a server's whose tools are not known yet are not (issue 33, section
// 3, item 5).
func TestPermissionRuleTyposAreWarned(t *testing.T) {
	ws := t.TempDir()
	testfixture.WriteFile(t, ws, ConfigFile, `{"permissions": {
		"allow": ["filesystem:readfile", "json:parse", "math", "cap:shout_file", "fx", "fx:echo", "nosuchthing:tool"],
		"ask": ["filesytem"],
		"deny": ["shell:exec"]},
		"mcpServers": {"fx": {"command": "pml-fixture-never-started"}}}`)
	testfixture.WriteFile(t, ws, "a.txt", "hi")
	t.Setenv("PML_CLOUD_URL", "")
	t.Setenv("PML_WORKSPACE", ws)
	var logs syncBuffer
	p, err := Open(context.Background(), ws, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `return 1`})
	wantStatus(t, a, wire.StatusSuccess)
	got := logs.String()
	const warned = `level=WARN msg="permission rule matches no known tool or server" file=` + "%s"
	for _, want := range []string{
		` list=permissions.allow rule=filesystem:readfile did_you_mean=filesystem:read_file` + "\n",
		` list=permissions.ask rule=filesytem did_you_mean=filesystem` + "\n",
		` list=permissions.allow rule=nosuchthing:tool` + "\n",
	} {
		want = fmt.Sprintf(warned, filepath.Join(ws, ConfigFile)) + want
		if !strings.Contains(got, want) {
			t.Errorf("no warning %s in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "level=WARN"); n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, got)
	}

	wantStatus(t, p.Execute(context.Background(), wire.ExecuteRequest{Code: `return 2`}), wire.StatusSuccess)
	if again := logs.String(); again != got {
		t.Errorf("warned again for the same rules:\n%s", strings.TrimPrefix(again, got))
	}
}
