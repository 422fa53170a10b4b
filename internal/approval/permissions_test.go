package approval

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		pattern, tool string
		want          bool
	}{
		{"*", "shell:exec", true},
		{"*", "filesystem:read_file", true},
		{"shell", "shell:exec", true},
		{"shell", "shell", true},
		{"shell", "shellx:exec", false},
		{"shell", "filesystem:read_file", false},
		{"shell:*", "shell:exec", true},
		{"shell:*", "shell:spawn", true},
		{"shell:*", "sh:exec", false},
		{"filesystem:read_file", "filesystem:read_file", true},
		{"filesystem:read_file", "filesystem:read_files", false},
		{"filesystem:read_file", "filesystem:write_file", false},
		{"filesystem:read_file", "other:read_file", false},
		{"Shell", "shell:exec", false}, // tool ids are case-sensitive
		// malformed patterns match nothing, even where a lax reading would match
		{"", "shell:exec", false},
		{"shell:", "shell:exec", false},
		{"*:exec", "shell:exec", false},
		{"sh*", "shell:exec", false},
		{"shell:exec:x", "shell:exec", false},
		{"shell exec", "shell:exec", false},
	}
	for _, tt := range tests {
		if got := Matches(tt.pattern, tt.tool); got != tt.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tt.pattern, tt.tool, got, tt.want)
		}
	}
}

func TestDecidePrecedence(t *testing.T) {
	tests := []struct {
		name string
		p    Permissions
		tool string
		want Decision
	}{
		{"in no list asks", Permissions{}, "shell:exec", Ask},
		{"allow exact", Permissions{Allow: []string{"shell:exec"}}, "shell:exec", Allow},
		{"allow namespace", Permissions{Allow: []string{"shell"}}, "shell:exec", Allow},
		{"allow ns:*", Permissions{Allow: []string{"shell:*"}}, "shell:exec", Allow},
		{"allow star", Permissions{Allow: []string{"*"}}, "anything:at_all", Allow},
		{"allow other tool asks", Permissions{Allow: []string{"shell:ls"}}, "shell:exec", Ask},
		{"ask listed", Permissions{Ask: []string{"shell"}}, "shell:exec", Ask},
		{"deny exact", Permissions{Deny: []string{"shell:exec"}}, "shell:exec", Deny},
		{"deny star", Permissions{Deny: []string{"*"}}, "json:parse", Deny},
		{"deny beats allow same pattern", Permissions{Allow: []string{"shell"}, Deny: []string{"shell"}}, "shell:exec", Deny},
		{"deny namespace beats allow exact", Permissions{Allow: []string{"shell:exec"}, Deny: []string{"shell"}}, "shell:exec", Deny},
		{"deny exact beats allow star", Permissions{Allow: []string{"*"}, Deny: []string{"shell:exec"}}, "shell:exec", Deny},
		{"deny exact spares siblings", Permissions{Allow: []string{"*"}, Deny: []string{"shell:exec"}}, "shell:ls", Allow},
		{"allow beats ask", Permissions{Allow: []string{"shell:exec"}, Ask: []string{"shell"}}, "shell:exec", Allow},
		{"allow star beats ask exact", Permissions{Allow: []string{"*"}, Ask: []string{"shell:exec"}}, "shell:exec", Allow},
		{"deny beats ask", Permissions{Deny: []string{"shell"}, Ask: []string{"shell:exec"}}, "shell:exec", Deny},
		{"all three", Permissions{Allow: []string{"shell"}, Deny: []string{"shell:rm"}, Ask: []string{"*"}}, "shell:rm", Deny},
		{"malformed allow ignored", Permissions{Allow: []string{"sh*"}}, "shell:exec", Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Decide(tt.tool); got != tt.want {
				t.Errorf("Decide(%q) = %q, want %q", tt.tool, got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	good := Permissions{Allow: []string{"*", "json", "fs:*", "filesystem:read_file", "my-server.v2:do_it"}}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%v) = %v, want nil", good, err)
	}
	bad := Permissions{
		Allow: []string{"json", "sh*"},
		Deny:  []string{""},
		Ask:   []string{"a:b:c", "*:exec", "x:"},
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("Validate accepted malformed patterns")
	}
	for _, want := range []string{`permissions.allow: invalid pattern "sh*"`, `permissions.deny: invalid pattern ""`,
		`permissions.ask: invalid pattern "a:b:c"`, `"*:exec"`, `"x:"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate error %q does not mention %s", err, want)
		}
	}
	if strings.Contains(err.Error(), `"json"`) {
		t.Errorf("Validate error %q names the valid pattern json", err)
	}
}

func TestDefaultPermissions(t *testing.T) {
	p := DefaultPermissions()
	if err := p.Validate(); err != nil {
		t.Fatalf("default permissions invalid: %v", err)
	}
	for tool, want := range map[string]Decision{
		"filesystem:read_file":      Allow,
		"filesystem:list_directory": Allow,
		"filesystem:stat":           Allow,
		"filesystem:search_files":   Allow,
		"json:parse":                Allow,
		"math:sum":                  Allow,
		"crypto:sha256":             Allow,
		"collections:group_by":      Allow,
		"filesystem:write_file":     Ask,
		"filesystem:make_directory": Ask,
		"filesystem:move_file":      Ask,
		"filesystem:delete_file":    Ask, // unlisted: default
		"shell:exec":                Ask,
		"tavily:search":             Ask,
	} {
		if got := p.Decide(tool); got != want {
			t.Errorf("default Decide(%q) = %q, want %q", tool, got, want)
		}
	}
	// .pml.json shows an empty deny list, not null, so people see where denies go.
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"deny":[]`) {
		t.Errorf("default permissions JSON %s lacks \"deny\":[]", b)
	}
}
