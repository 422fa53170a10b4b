package tracing

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// A secret transformed by a tool or by the code (upper-cased, encoded, cut
// into fragments) does not reach a stored trace; ordinary text around it
// stays.
func TestTraceRedactsTransformedSecrets(t *testing.T) {
	const token = "ghp_9fKq2LmX7vB4nR8tY1wZ3cD6hJ0sA5eUpQ"
	const dsn = "postgres://app@localhost:5432/dev"
	s := NewSanitizer([]string{token, dsn})
	parts := strings.Split(token, "_")
	forms := map[string]string{
		"upper":         strings.ToUpper(token),
		"lower":         strings.ToLower(token),
		"base64":        base64.StdEncoding.EncodeToString([]byte(token)),
		"base64url raw": base64.RawURLEncoding.EncodeToString([]byte(token)),
		"basic auth":    base64.StdEncoding.EncodeToString([]byte("me:" + token)),
		"hex":           hex.EncodeToString([]byte(token)),
		"url-encoded":   url.QueryEscape("x=" + token),
		"fragment":      parts[1],
		"slice":         token[6:20],
		"dsn upper":     strings.ToUpper(dsn),
	}
	result, _ := json.Marshal(forms)
	args, _ := json.Marshal(map[string]any{"text": "prefix " + token[3:30] + " suffix", "n": 1})
	tr := s.Trace(Trace{
		Code:  `const t = (await mcp.x.get({})).toUpperCase(); return t.split("_")`,
		Logs:  []string{"log " + strings.ToUpper(token), "plain localhost log"},
		Error: "failed with " + hex.EncodeToString([]byte(token)),
		Tasks: []Task{{TaskID: "t1", Tool: "x:get", ToolID: "x:get", Args: args, Result: result}},
	})
	out, _ := json.Marshal(tr)
	for name, form := range forms {
		if strings.Contains(string(out), form) {
			t.Errorf("%s form %q reached the trace: %s", name, form, out)
		}
	}
	for _, piece := range []string{token[3:30], strings.ToUpper(token[10:18])} {
		if strings.Contains(strings.ToUpper(string(out)), strings.ToUpper(piece)) {
			t.Errorf("%q reached the trace", piece)
		}
	}
	if tr.Logs[1] != "plain localhost log" || !strings.Contains(string(tr.Tasks[0].Args), `"prefix [REDACTED] suffix"`) {
		t.Errorf("ordinary text changed: %q %s", tr.Logs[1], tr.Tasks[0].Args)
	}
	// Sanitizing twice gives the result of sanitizing once.
	again, _ := json.Marshal(s.Trace(tr))
	if string(again) != string(out) {
		t.Errorf("not idempotent:\n%s\n%s", out, again)
	}
}
