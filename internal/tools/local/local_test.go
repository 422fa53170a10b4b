package local

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

func TestToolsAndSchemas(t *testing.T) {
	infos, err := New(t.TempDir()).Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"filesystem:list_directory", "filesystem:make_directory", "filesystem:move_file", "filesystem:read_file",
		"filesystem:search_files", "filesystem:stat", "filesystem:write_file", "shell:exec",
	}
	got := make([]string, len(infos))
	v := tools.NewValidator()
	for i, info := range infos {
		got[i] = info.ID
		if !slices.Contains(Namespaces(), info.Namespace()) {
			t.Errorf("%s is outside Namespaces() %v", info.ID, Namespaces())
		}
		// A schema that does not compile surfaces as a non-pmlerr error.
		if err := v.Validate(info.InputSchema, json.RawMessage(`{}`)); err != nil {
			if _, ok := pmlerr.As(err); !ok {
				t.Errorf("%s: schema does not compile: %v", info.ID, err)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
}
