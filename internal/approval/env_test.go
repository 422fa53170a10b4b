package approval

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestEnvPrecedenceAndReload(t *testing.T) {
	ws := t.TempDir()
	envFile := filepath.Join(ws, ".env")
	writeFile(t, envFile, "PML_T_BOTH=from-file\nPML_T_FILE=file-only\nPML_T_EMPTYPROC=file-wins\n")
	t.Setenv("PML_T_BOTH", "from-process")
	t.Setenv("PML_T_EMPTYPROC", "")
	t.Setenv("PML_T_PROC_EMPTY_ONLY", "")

	e := NewEnv(ws)
	if _, ok := e.Lookup("PML_T_FILE"); ok {
		t.Error(".env read before Reload")
	}
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"PML_T_BOTH":      "from-process",
		"PML_T_FILE":      "file-only",
		"PML_T_EMPTYPROC": "file-wins",
	} {
		if got, ok := e.Lookup(key); !ok || got != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if got, ok := e.Lookup("PML_T_PROC_EMPTY_ONLY"); !ok || got != "" {
		t.Errorf("empty process var = %q, %v; want \"\", true", got, ok)
	}
	if _, ok := e.Lookup("PML_T_NOWHERE"); ok {
		t.Error("unset key found")
	}

	// the HIL flow: the person adds a key and fixes another, then continues
	writeFile(t, envFile, "PML_T_FILE=changed\nPML_T_NEW=added\n")
	if got := e.Missing([]string{"PML_T_NEW"}); !slices.Equal(got, []string{"PML_T_NEW"}) {
		t.Errorf("before reload Missing = %v", got)
	}
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.Lookup("PML_T_FILE"); got != "changed" {
		t.Errorf("after reload PML_T_FILE = %q, want changed", got)
	}
	if got := e.Missing([]string{"PML_T_NEW"}); len(got) != 0 {
		t.Errorf("after reload Missing = %v", got)
	}
	if _, ok := e.Lookup("PML_T_EMPTYPROC"); !ok {
		t.Error("empty process var reported unset after its .env value went away")
	}

	// a broken edit keeps the previous values
	writeFile(t, envFile, "BROKEN\n")
	if err := e.Reload(); err == nil {
		t.Fatal("Reload of a broken .env succeeded")
	}
	if got, _ := e.Lookup("PML_T_NEW"); got != "added" {
		t.Errorf("after failed reload PML_T_NEW = %q, want the previous value", got)
	}
}

func TestEnvMissing(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "K_OK=tvly-123\nK_EMPTY=\nK_BLANK='  '\nK_XXX=xxx\nK_YOUR=your-api-key-here\n"+
		"K_ANGLE=<your key>\nK_TODO=todo\nK_CHANGE=CHANGE_ME\nK_PH=placeholder\nK_XS=x\n")
	e := NewEnv(ws)
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	keys := []string{"K_OK", "K_EMPTY", "K_BLANK", "K_XXX", "K_YOUR", "K_ANGLE", "K_TODO", "K_CHANGE", "K_PH", "K_XS", "K_UNSET", "K_XXX"}
	want := []string{"K_EMPTY", "K_BLANK", "K_XXX", "K_YOUR", "K_ANGLE", "K_TODO", "K_CHANGE", "K_PH", "K_UNSET"}
	if got := e.Missing(keys); !slices.Equal(got, want) {
		t.Errorf("Missing = %v\nwant      %v", got, want)
	}
	if got := e.Missing(nil); got != nil {
		t.Errorf("Missing(nil) = %v", got)
	}
}

func TestEnvExpand(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "TAVILY_API_KEY=tvly-abc\nHOLDER=xxx\n")
	t.Setenv("PML_T_REGION", "eu")
	e := NewEnv(ws)
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want    string
		wantMissing []string
	}{
		{"Bearer ${TAVILY_API_KEY}", "Bearer tvly-abc", nil},
		{"${PML_T_REGION}-${TAVILY_API_KEY}", "eu-tvly-abc", nil},
		{"${NOPE_A}/${NOPE_B}/${NOPE_A}", "//", []string{"NOPE_A", "NOPE_B"}},
		{"key=${HOLDER}", "key=xxx", []string{"HOLDER"}},
		{"$HOME and $TAVILY_API_KEY stay", "$HOME and $TAVILY_API_KEY stay", nil},
		{"${ not closed", "${ not closed", nil},
		{"${1BAD} ${with space} ${}", "${1BAD} ${with space} ${}", nil},
		{"no refs", "no refs", nil},
	}
	for _, tt := range tests {
		got, missing := e.Expand(tt.in)
		if got != tt.want || !slices.Equal(missing, tt.wantMissing) {
			t.Errorf("Expand(%q) = %q, %v; want %q, %v", tt.in, got, missing, tt.want, tt.wantMissing)
		}
	}
}

func TestEnvDotEnvValues(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".env"), "B=secret-b\nA=secret-a\nC=secret-a\nD=\n")
	t.Setenv("PML_T_PROCESS_ONLY", "not-from-dotenv")
	e := NewEnv(ws)
	if err := e.Reload(); err != nil {
		t.Fatal(err)
	}
	if got, want := e.DotEnvValues(), []string{"secret-a", "secret-b"}; !slices.Equal(got, want) {
		t.Errorf("DotEnvValues = %v, want %v", got, want)
	}
}
