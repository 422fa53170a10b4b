package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/pml-go/pml/internal/approval"
)

// alwaysAllow adds toolIDs to the allow list of .pml.json: the person's
// "always" answer, written by the package itself (no tool can write
// .pml.json). The rest of the file is kept, fields the package does not
// know included; it is rewritten as two-space JSON with sorted keys. A
// workspace without .pml.json gets one with the default permissions plus
// the tools. It returns the tools it added (those not already listed).
func (p *Workspace) alwaysAllow(toolIDs []string) ([]string, error) {
	if len(toolIDs) == 0 {
		return nil, nil
	}
	p.cfgWrite.Lock()
	defer p.cfgWrite.Unlock()
	path := filepath.Join(p.ws, ConfigFile)
	doc := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		def, _ := json.Marshal(approval.DefaultPermissions())
		doc["version"], doc["permissions"] = json.RawMessage(`"1"`), def
	case err != nil:
		return nil, configError(path, err.Error())
	default:
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, configError(path, describeJSONError(data, err))
		}
	}
	perms, err := objectField(doc, "permissions", path)
	if err != nil {
		return nil, err
	}
	var allow []string
	if raw := perms["allow"]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &allow); err != nil {
			return nil, configError(path, "permissions.allow: "+err.Error())
		}
	}
	var added []string
	for _, t := range toolIDs {
		if !slices.Contains(allow, t) {
			allow = append(allow, t)
			added = append(added, t)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	perms["allow"], _ = json.Marshal(allow)
	doc["permissions"], _ = json.Marshal(perms)
	if err := writeJSON(path, doc); err != nil {
		return nil, fmt.Errorf("always allow %v: %w", added, err)
	}
	p.log.Info("added to the allow list of "+ConfigFile, "tools", added)
	p.invalidateLocal()
	return added, nil
}

// objectField decodes doc[key], an object of .pml.json at path, keeping its
// fields as they are; absent or null is empty.
func objectField(doc map[string]json.RawMessage, key, path string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	if raw := doc[key]; len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil, configError(path, key+": "+err.Error())
		}
	}
	return out, nil
}
