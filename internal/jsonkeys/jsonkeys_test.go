package jsonkeys_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/pml-go/pml/internal/jsonkeys"
)

type inner struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

type base struct {
	URL string `json:"url,omitempty"`
}

type server struct {
	base
	Hosted bool `json:"hosted"`
}

type doc struct {
	Version     string            `json:"version"`
	Permissions inner             `json:"permissions"`
	Servers     map[string]server `json:"servers"`
	List        []inner           `json:"list"`
	Raw         json.RawMessage   `json:"raw"`
	Hidden      string            `json:"-"`
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in, path, nearest string
	}{
		{`{"version":"1","permissions":{"allow":["x"]},"servers":{"a":{"url":"u","hosted":true}},"raw":{"any":1}}`, "", ""},
		{`{"VERSION":"1"}`, "", ""}, // encoding/json matches names case-insensitively
		{`{"permisions":{}}`, "permisions", "permissions"},
		{`{"permissions":{"allwo":[]}}`, "permissions.allwo", "allow"},
		{`{"servers":{"a":{"ulr":"u"}}}`, "servers.a.ulr", "url"}, // embedded fields count
		{`{"list":[{"allow":[]},{"dney":[]}]}`, "list[1].dney", "deny"},
		{`{"zzzzzz":1}`, "zzzzzz", ""},
		{`{"Hidden":"x"}`, "Hidden", ""}, // a json:"-" field is not a key
	} {
		err := jsonkeys.Check([]byte(tc.in), &doc{})
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.in, err)
			}
			continue
		}
		var u *jsonkeys.Unknown
		if !errors.As(err, &u) || u.Path != tc.path || u.Nearest != tc.nearest {
			t.Errorf("%s: got %v, want path %q nearest %q", tc.in, err, tc.path, tc.nearest)
		}
	}
	if err := jsonkeys.Check([]byte(`{`), &doc{}); err == nil {
		t.Error("malformed JSON passed")
	}
}
