package approval

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestNewRequiredBatchesItemsByStake(t *testing.T) {
	items := []Item{
		ToolPermissionItem("shell:exec"),
		APIKeyItem("tavily", []string{"TAVILY_API_KEY"}),
		ToolPermissionItem("filesystem:write_file"),
		DependencyItem("serena:analyze", Dependency{Name: "serena", Version: "1.2.0", Command: "npx", Args: []string{"-y", "serena"}}),
	}
	r := NewRequired("wf-1", items)
	if r.Status != "approval_required" || r.WorkflowID != "wf-1" {
		t.Fatalf("got status %q workflow %q", r.Status, r.WorkflowID)
	}
	if r.ApprovalType != TypeDependency {
		t.Errorf("approval_type = %q, want dependency (highest stake present)", r.ApprovalType)
	}
	var order []string
	for _, it := range r.Context.Items {
		order = append(order, string(it.Type)+"/"+it.Tool+it.Server)
	}
	want := "dependency/serena:analyzeserena api_key_required/tavily tool_permission/shell:exec tool_permission/filesystem:write_file"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("items order = %s, want %s", got, want)
	}
	if items[0].Type != TypeToolPermission {
		t.Error("NewRequired reordered the caller's slice")
	}
	lines := strings.Split(r.Description, "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "- Install the MCP server serena@1.2.0 (runs `npx -y serena`") ||
		!strings.Contains(lines[4], "always") || !strings.Contains(lines[4], "shell:exec, filesystem:write_file") {
		t.Errorf("description = %q", r.Description)
	}
	if got := strings.Join(r.Options, ","); got != "continue,always,abort" {
		t.Errorf("options = %s", got)
	}
	if got := strings.Join(r.Context.AlwaysAllow, ","); got != "shell:exec,filesystem:write_file" {
		t.Errorf("always_allow = %s", got)
	}
}

// A one-call item (a secret read) is never offered "always"; nor is a plan
// without tool permissions.
func TestAlwaysIsNeverOfferedForOneCallItems(t *testing.T) {
	for _, items := range [][]Item{
		{CallItem("filesystem:read_file", "h", "secret_read", ".env", "it holds keys")},
		{APIKeyItem("tavily", []string{"K"})},
		{IntegrityItem("pml.mcp.x.server", "a", "b", time.Now())},
	} {
		r := NewRequired("wf", items)
		if got := strings.Join(r.Options, ","); got != "continue,abort" || r.Context.AlwaysAllow != nil || strings.Contains(r.Description, "always") {
			t.Errorf("%v: options %s, always_allow %v, description %q", items[0].Type, got, r.Context.AlwaysAllow, r.Description)
		}
	}
	mixed := NewRequired("wf", []Item{
		CallItem("filesystem:write_file", "h", "hook_write", ".git/hooks/pre-commit", "hooks run code"),
		ToolPermissionItem("shell:exec"),
	})
	if got := strings.Join(mixed.Context.AlwaysAllow, ","); got != "shell:exec" {
		t.Errorf("mixed always_allow = %s", got)
	}
}

func TestRequiredWireShape(t *testing.T) {
	at := time.Date(2026, 1, 7, 12, 0, 0, 0, time.UTC)
	r := NewRequired("wf-2", []Item{IntegrityItem("pml.mcp.tavily.server", "d7e8", "f9a0", at)})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got["status"] != "approval_required" || got["approval_type"] != "integrity" || got["workflow_id"] != "wf-2" {
		t.Errorf("answer = %s", b)
	}
	item := got["context"].(map[string]any)["items"].([]any)[0].(map[string]any)
	integ := item["integrity"].(map[string]any)
	if integ["fqdn"] != "pml.mcp.tavily.server" || integ["old_hash"] != "d7e8" || integ["new_hash"] != "f9a0" || integ["old_fetched_at"] != "2026-01-07T12:00:00Z" {
		t.Errorf("integrity = %v", integ)
	}
	if _, ok := item["dependency"]; ok {
		t.Errorf("empty fields not omitted: %v", item)
	}
	if !strings.Contains(r.Description, "d7e8") || strings.HasPrefix(r.Description, "- ") {
		t.Errorf("single-item description = %q", r.Description)
	}
}

func TestDependencyJSONUsesEnvRequired(t *testing.T) {
	b, err := json.Marshal(Dependency{Name: "tavily", Command: "npx", EnvRequired: []string{"TAVILY_API_KEY"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"envRequired":["TAVILY_API_KEY"]`) {
		t.Errorf("dependency JSON = %s", b)
	}
}
