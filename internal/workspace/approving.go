package workspace

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// stillMissingKeys turns an approval_required that asks for keys the
// workspace still lacks into API_KEY_REQUIRED. Approving cannot supply a
// key: only a person editing .env can, so an unattended approver (`pml exec
// --approve`) stops at once and says which keys go where, instead of
// approving the same missing key again and again.
func (p *Workspace) stillMissingKeys(ans wire.Answer) (wire.Answer, bool) {
	if err := p.missingKeysError(answerItems(ans)); err != nil {
		return wire.ErrorAnswer(err, ans.WorkflowID), true
	}
	return ans, false
}

// answerItems are the items an approval_required answer asks about.
func answerItems(ans wire.Answer) []approval.Item {
	raw, err := json.Marshal(ans.Context["items"])
	if err != nil {
		return nil
	}
	var items []approval.Item
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return items
}

// missingKeysError is the API_KEY_REQUIRED of the keys items ask for that
// the workspace still lacks, saying which keys go where; nil when none is
// missing. The .env is re-read first, so a key added since the run began
// counts.
func (p *Workspace) missingKeysError(items []approval.Item) error {
	if err := p.env.Reload(); err != nil {
		p.log.Warn("reading .env", "err", err)
	}
	var missing, servers []string
	for _, it := range items {
		if it.Type != approval.TypeAPIKey {
			continue
		}
		if m := p.env.Missing(it.Keys); len(m) > 0 {
			missing = append(missing, m...)
			servers = append(servers, it.Server)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	envFile := filepath.Join(p.ws, ".env")
	return pmlerr.New(pmlerr.APIKeyRequired, "%s needs %s: add %s to %s (or export %s), then run again",
		strings.Join(servers, ", "), strings.Join(missing, ", "), keyLines(missing), envFile, strings.Join(missing, ", ")).
		With("servers", servers).With("keys", missing).With("env_file", envFile)
}

// keyLines shows the .env lines to add: "A=… and B=…".
func keyLines(keys []string) string {
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=…"
	}
	return strings.Join(lines, " and ")
}
