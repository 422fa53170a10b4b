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
	if lines := strings.Split(r.Description, "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "- Install the MCP server serena@1.2.0 (runs `npx -y serena`") {
		t.Errorf("description = %q", r.Description)
	}
	if got := strings.Join(r.Options, ","); got != "continue,abort" {
		t.Errorf("options = %s", got)
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
