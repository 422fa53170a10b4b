package wire

import (
	"encoding/json"
	"testing"
)

// tools_used keeps its two JSON shapes byte for byte: ids on success,
// references on execute_locally, absent when unset, [] when empty.
func TestToolsUsedWireBytes(t *testing.T) {
	cases := []struct {
		name string
		a    Answer
		want string
	}{
		{"ids", Answer{Status: StatusSuccess, ToolsUsed: ToolIDs([]string{"math:add", "fs:read"})},
			`{"status":"success","tools_used":["math:add","fs:read"]}`},
		{"no ids", Answer{Status: StatusSuccess, ToolsUsed: ToolIDs([]string{})}, `{"status":"success","tools_used":[]}`},
		{"refs", Answer{Status: StatusExecuteLocally, ToolsUsed: ToolRefs([]ToolRef{
			{ID: "cap:x", FQDN: "acme.web.cap.x.1a2b", Routing: "client"}, {ID: "fs:read", Routing: "client"}})},
			`{"status":"execute_locally","tools_used":[{"id":"cap:x","fqdn":"acme.web.cap.x.1a2b","routing":"client"},{"id":"fs:read","routing":"client"}]}`},
		{"no refs", Answer{Status: StatusExecuteLocally, ToolsUsed: ToolRefs([]ToolRef{})}, `{"status":"execute_locally","tools_used":[]}`},
		{"unset", Answer{Status: StatusError}, `{"status":"error"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, err := json.Marshal(c.a)
			if err != nil || string(body) != c.want {
				t.Fatalf("marshal: %s %v, want %s", body, err, c.want)
			}
			var back Answer
			if err := json.Unmarshal(body, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != c.want {
				t.Fatalf("round trip: %s, want %s", again, c.want)
			}
		})
	}
}

func TestToolsUsedTypedAfterDecoding(t *testing.T) {
	var a Answer
	if err := json.Unmarshal([]byte(`{"status":"execute_locally","tools_used":[{"id":"fs:read","routing":"client"}]}`), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.ToolsUsed.Refs) != 1 || a.ToolsUsed.Refs[0] != (ToolRef{ID: "fs:read", Routing: "client"}) || a.ToolsUsed.IDs != nil {
		t.Fatalf("refs: %+v", a.ToolsUsed)
	}
	if err := json.Unmarshal([]byte(`{"status":"success","tools_used":["fs:read"]}`), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.ToolsUsed.IDs) != 1 || a.ToolsUsed.IDs[0] != "fs:read" || a.ToolsUsed.Refs != nil {
		t.Fatalf("ids: %+v", a.ToolsUsed)
	}
}

// A tools_used that is neither shape makes the answer undecodable, and the
// next answer still decodes.
func TestToolsUsedRejectsOtherShapes(t *testing.T) {
	for _, bad := range []string{`[1,2]`, `{"id":"x"}`, `"fs:read"`, `[["fs:read"]]`} {
		var a Answer
		if err := json.Unmarshal([]byte(`{"status":"success","tools_used":`+bad+`}`), &a); err == nil {
			t.Errorf("tools_used %s accepted: %+v", bad, a.ToolsUsed)
		}
	}
	var a Answer
	if err := json.Unmarshal([]byte(`{"status":"success","tools_used":null}`), &a); err != nil || !a.ToolsUsed.IsZero() {
		t.Fatalf("null: %+v %v", a.ToolsUsed, err)
	}
}
