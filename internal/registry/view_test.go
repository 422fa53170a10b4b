package registry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/store"
)

func TestViewForHidesTheOwnersValues(t *testing.T) {
	owner := store.Scope{Org: "acme", Project: "web"}
	c := store.Capability{Scope: owner, Description: "Read q3-plan.txt and count",
		ArgsSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","default":"q3-plan.txt","examples":["q3-plan.txt","other.txt"]},"n":{"type":"integer","enum":[7]},"opts":{"type":"object","properties":{"k":{"type":"string","const":"zz"}}}},"required":["n"]}`)}
	// The owner sees its values, the lifted parameter required, its first
	// value an example and no default (RequireLifted).
	const ownView = `{"properties":{"n":{"enum":[7],"type":"integer"},"opts":{"properties":{"k":{"const":"zz","type":"string"}},"type":"object"},"path":{"examples":["q3-plan.txt","other.txt"],"type":"string"}},"required":["n","path"],"type":"object"}`
	if got := ViewFor(c, owner, nil); string(got.ArgsSchema) != ownView || got.Description != c.Description {
		t.Fatalf("the owner's own view: %s %+v", got.ArgsSchema, got)
	}
	for _, viewer := range []store.Scope{{Org: "acme", Project: "api"}, {Org: "globex", Project: "web"}} {
		got := ViewFor(c, viewer, nil)
		text := string(got.ArgsSchema) + got.Description
		for _, v := range []string{"q3-plan", "other.txt", "7", "zz"} {
			if strings.Contains(text, v) {
				t.Errorf("%v sees %q: %s", viewer, v, text)
			}
		}
		var s struct {
			Required   []string                  `json:"required"`
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(got.ArgsSchema, &s); err != nil {
			t.Fatal(err)
		}
		if strings.Join(s.Required, ",") != "n,path" || s.Properties["path"]["type"] != "string" {
			t.Errorf("%v: parameters and types: %+v", viewer, s)
		}
		if got.Description != "Read <path> and count" {
			t.Errorf("description %q", got.Description)
		}
	}
}
