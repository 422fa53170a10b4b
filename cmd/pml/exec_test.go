package main

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// closedGatewayURL is the address of a loopback port nothing listens on.
func closedGatewayURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// With the gateway down, `pml exec` says where its URL came from, as `pml
// traces` does (issue 33, section 3, item 4).
func TestExecUnreachableGatewaySaysWhereItsURLCameFrom(t *testing.T) {
	ws := localWorkspace(t)
	url := closedGatewayURL(t)
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "cloud": {"url": "`+url+`"}, "permissions": {"allow": ["*"]}}`)
	t.Setenv("PML_API_KEY", "pml_test")
	want := "could not reach the gateway at " + url + " (from " + filepath.Join(ws, ".pml.json") + " cloud.url): "
	out, _, err := runPML(t, "exec", `return await mcp.json.parse({data: "1"})`)
	var a wire.Answer
	if code, _ := exitCode(err); code != exitError || json.Unmarshal([]byte(out), &a) != nil ||
		a.ErrorCode != pmlerr.NetworkError || !strings.HasPrefix(a.Error, want) {
		t.Fatalf("exit %d, want NETWORK_ERROR %q…:\n%s", code, want, out)
	}
	_, _, err = runPML(t, "traces")
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("pml traces says it otherwise: %v", err)
	}

	t.Setenv("PML_CLOUD_URL", url)
	out, _, _ = runPML(t, "exec", `return await mcp.json.parse({data: "1"})`)
	if !strings.Contains(out, "could not reach the gateway at "+url+" (from PML_CLOUD_URL): ") {
		t.Fatalf("with PML_CLOUD_URL:\n%s", out)
	}
}

// `pml exec --approve` says on stderr what it approved in the command
// line's terms, not continue_workflow's (issue 33, section 3, item 6).
func TestExecApproveSaysWhatItApproved(t *testing.T) {
	ws := localWorkspace(t)
	testfixture.WriteFile(t, ws, ".pml.json", `{"version": "1", "permissions": {"allow": ["filesystem:read_file"], "ask": ["filesystem:write_file"]}}`)
	out, stderr, err := runPML(t, "exec", "--approve", `await mcp.filesystem.write_file({path: "out.txt", content: "x"}); return 1`)
	var a wire.Answer
	if err != nil || json.Unmarshal([]byte(out), &a) != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("pml exec --approve: %v\n%s\n%s", err, out, stderr)
	}
	want := "pml: approved for this run: filesystem:write_file (to stop asking, add it to permissions.allow in " + filepath.Join(ws, ".pml.json") + ")\n"
	if stderr != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr, want)
	}
}
