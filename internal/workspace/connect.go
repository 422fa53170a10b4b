package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/pmlerr"
)

// AuthOAuth is the "auth" of a server whose token `pml connect` stored.
const AuthOAuth = "oauth"

// AddOAuthServer records the server `pml connect --name` authorized in the
// workspace's .pml.json, as {"type":"http","url":URL,"auth":"oauth"}, so
// later runs attach the stored token. It needs an existing .pml.json (run
// `pml init` first): connect must not decide where a workspace is. The rest
// of the file is kept, rewritten as two-space JSON with sorted keys; an
// entry of that name is replaced. Permissions are left as they are.
func AddOAuthServer(ws, name, url string) (string, error) {
	path, data, err := checkOAuthServer(ws, name, url)
	if err != nil {
		return path, err
	}
	doc := map[string]json.RawMessage{}
	if err := json.Unmarshal(data, &doc); err != nil {
		return path, configError(path, describeJSONError(data, err))
	}
	servers, err := objectField(doc, "mcpServers", path)
	if err != nil {
		return path, err
	}
	servers[name], _ = json.Marshal(ServerConfig{Type: "http", URL: url, Auth: AuthOAuth})
	doc["mcpServers"], _ = json.Marshal(servers)
	if err := writeJSON(path, doc); err != nil {
		return path, fmt.Errorf("adding %s to %s: %w", name, path, err)
	}
	return path, nil
}

// CheckOAuthServer says whether AddOAuthServer would accept name and url
// for ws, so `pml connect --name` can refuse before any authorization.
func CheckOAuthServer(ws, name, url string) error {
	_, _, err := checkOAuthServer(ws, name, url)
	return err
}

// checkOAuthServer validates the entry and returns the path and content of
// a .pml.json that loads.
func checkOAuthServer(ws, name, url string) (string, []byte, error) {
	path := filepath.Join(ws, ConfigFile)
	entry := ServerConfig{Type: "http", URL: url, Auth: AuthOAuth}
	if err := entry.validate(name); err != nil {
		return path, nil, pmlerr.New(pmlerr.InvalidRequest, "%v", err)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return path, nil, pmlerr.New(pmlerr.InvalidConfig, "no %s in %s: run `pml init` there first, or connect without --name", ConfigFile, ws)
	}
	if err != nil {
		return path, nil, configError(path, err.Error())
	}
	// Refuse to rewrite a file that would not load: its problem is the user's to see.
	if _, err := LoadConfig(path); err != nil {
		return path, nil, err
	}
	return path, data, nil
}
