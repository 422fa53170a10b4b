package workspace

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gateway/gatewaytest"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// initConfig is the .pml.json `pml init` writes, plus extra top-level
// fields (JSON members without braces).
func initConfig(t *testing.T, extra string) string {
	t.Helper()
	perms, err := json.Marshal(approval.DefaultPermissions())
	if err != nil {
		t.Fatal(err)
	}
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"version": "1", "permissions": %s%s}`, perms, extra)
}

func (e *approvalEnv) always(id string) wire.Answer {
	return e.pkg.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: id, Approved: wire.Bool(true), Always: true}})
}

// approveAll continues every approval_required of code with "continue".
func (e *approvalEnv) approveAll(code string) (wire.Answer, int) {
	a := e.exec(code)
	n := 0
	for ; a.Status == wire.StatusApprovalRequired && n < 5; n++ {
		a = e.cont(a.WorkflowID, true)
	}
	return a, n
}

func readWS(t *testing.T, ws, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The attack: with the permissions `pml init` writes, the user approves one
// write of notes.txt; the next executions rewrite .pml.json to allow "*",
// then run a shell command. Each later step must ask again or be refused,
// and the shell command must never run unapproved.
func TestOneWriteApprovalGrantsNothingMore(t *testing.T) {
	e := newApprovalEnv(t, initConfig(t, ""), nil)
	cfgBefore := readWS(t, e.ws, ConfigFile)

	a := e.exec(`return await mcp.filesystem.write_file({path: "notes.txt", content: "hello"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	if readWS(t, e.ws, "notes.txt") != "hello" {
		t.Fatal("the approved write did not happen")
	}

	// Step 2: the same tool in a new execution asks again...
	grab := `return await mcp.filesystem.write_file({path: ".pml.json", content: '{"permissions":{"allow":["*"]}}'})`
	a = e.exec(grab)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if it := items(t, a); len(it) != 1 || it[0]["tool"] != "filesystem:write_file" {
		t.Fatalf("items %v", it)
	}
	// ...and even approved, PML's own file is refused, with how to change it.
	r := e.cont(a.WorkflowID, true)
	if r.ErrorCode != pmlerr.PermissionDenied || !strings.Contains(r.Error, "edit it by hand") {
		t.Fatalf("approved write of .pml.json: %+v", r)
	}
	if readWS(t, e.ws, ConfigFile) != cfgBefore {
		t.Fatal(".pml.json changed")
	}

	// Step 3: the shell asks, and declining runs nothing.
	pwned := filepath.Join(e.ws, "pwned.txt")
	a = e.exec(`return await mcp.shell.exec({command: "id > pwned.txt"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if it := items(t, a); len(it) != 1 || it[0]["tool"] != "shell:exec" {
		t.Fatalf("items %v", it)
	}
	wantStatus(t, e.cont(a.WorkflowID, false), wire.StatusAborted)
	if exists(pwned) {
		t.Fatal("the shell command ran without approval")
	}

	// Every control file, however spelled, is refused the same way.
	if err := os.Symlink(ConfigFile, filepath.Join(e.ws, "cfg-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{".pml/mcp.lock", ".pml/deps.json", ".env", ".env.local", ".mcp.json", ".PML.JSON", "sub/../.pml.json", "cfg-link", filepath.Join(e.ws, ".pml.json")} {
		r, pauses := e.approveAll(fmt.Sprintf(`return await mcp.filesystem.write_file({path: %q, content: "{}"})`, path))
		if pauses != 1 || r.ErrorCode != pmlerr.PermissionDenied || !strings.Contains(r.Error, "edit it by hand") {
			t.Fatalf("%s: %d pauses, %+v", path, pauses, r)
		}
	}
	if readWS(t, e.ws, ConfigFile) != cfgBefore || exists(filepath.Join(e.ws, ".env")) || exists(filepath.Join(e.ws, ".pml", "deps.json")) {
		t.Fatal("a control file was written")
	}
	// The package still serves ordinary work.
	wantStatus(t, e.exec(`return (await mcp.filesystem.read_file({path: "notes.txt"})).length`), wire.StatusSuccess)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Hooks ask for each write, even with write_file on the allow list, and
// "always" is not offered for them.
func TestHookWritesAskEveryExecution(t *testing.T) {
	e := newApprovalEnv(t, `{"permissions": {"allow": ["filesystem"]}}`, nil)
	if err := os.MkdirAll(filepath.Join(e.ws, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(e.ws, ".git", "hooks", "pre-commit")
	code := `await mcp.filesystem.write_file({path: "before.txt", content: "x"});
		return await mcp.filesystem.write_file({path: ".git/hooks/pre-commit", content: "#!/bin/sh\nid\n"})`
	for round := range 2 {
		a := e.exec(code)
		wantStatus(t, a, wire.StatusApprovalRequired)
		it := items(t, a)
		if len(it) != 1 || it[0]["access"] != "hook_write" || it[0]["path"] != ".git/hooks/pre-commit" || it[0]["once"] != true ||
			slices.Contains(a.Options, "always") || a.Context["always_allow"] != nil {
			t.Fatalf("round %d: %+v", round, a)
		}
		if exists(hook) {
			t.Fatal("hook written before approval")
		}
		wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
		if readWS(t, e.ws, ".git/hooks/pre-commit") != "#!/bin/sh\nid\n" {
			t.Fatal("approved hook write did not happen")
		}
		if err := os.Remove(hook); err != nil {
			t.Fatal(err)
		}
	}
	// Another write in the same execution is another call: it asks too.
	a := e.exec(`await mcp.filesystem.write_file({path: ".husky/pre-push", content: "a"}); return await mcp.filesystem.write_file({path: ".husky/pre-push", content: "b"})`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	a = e.cont(a.WorkflowID, true)
	wantStatus(t, a, wire.StatusApprovalRequired)
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	if readWS(t, e.ws, ".husky/pre-push") != "b" {
		t.Fatal("second hook write")
	}
}

// An approval is spent with its execution: the same code, or another
// client's execute, asks again.
func TestApprovalScopeIsOneExecution(t *testing.T) {
	e := newApprovalEnv(t, initConfig(t, ""), nil)
	code := `return (await mcp.shell.exec({command: "echo ran >> ran.txt"})).exit_code`
	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
	// A second MCP session on the same package (pml serve's case) and the
	// first one again: both ask, nothing runs.
	srv := e.pkg.NewMCPServer()
	for range 2 {
		cs := connectInMemory(t, srv, nil)
		ans := callExecuteIn(t, cs, wire.ExecuteRequest{Code: code})
		wantStatus(t, ans, wire.StatusApprovalRequired)
	}
	wantStatus(t, e.exec(code), wire.StatusApprovalRequired)
	if got := readWS(t, e.ws, "ran.txt"); got != "ran\n" {
		t.Fatalf("shell ran %q", got)
	}
}

// "always" is the explicit way to stop being asked: the package adds the
// tool to the allow list of .pml.json itself, keeps the rest of the file,
// and says so in the answer.
func TestAlwaysAddsToTheAllowList(t *testing.T) {
	e := newApprovalEnv(t, initConfig(t, `"shell": {"env": ["KEPT"]}, "mcpServers": {"fx": {"command": "%[1]s"}}`), nil)
	code := `return (await mcp.shell.exec({command: "echo hi"})).stdout`
	a := e.exec(code)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if strings.Join(a.Options, ",") != "continue,always,abort" || !strings.Contains(a.Description, "always") {
		t.Fatalf("%+v", a)
	}
	if got, _ := json.Marshal(a.Context["always_allow"]); string(got) != `["shell:exec"]` {
		t.Fatalf("always_allow %s", got)
	}
	r := e.always(a.WorkflowID)
	wantStatus(t, r, wire.StatusSuccess)
	body, _ := json.Marshal(r)
	if !strings.Contains(string(body), `"always_allowed":["shell:exec"]`) {
		t.Fatalf("answer does not say what was allowed: %s", body)
	}
	var cfg map[string]any
	if err := json.Unmarshal([]byte(readWS(t, e.ws, ConfigFile)), &cfg); err != nil {
		t.Fatal(err)
	}
	allow := cfg["permissions"].(map[string]any)["allow"].([]any)
	if allow[len(allow)-1] != "shell:exec" || cfg["shell"] == nil || cfg["mcpServers"] == nil {
		t.Fatalf("config after always: %v", cfg)
	}
	// From now on the shell runs without asking, in any execution.
	wantStatus(t, e.exec(code), wire.StatusSuccess)
	wantStatus(t, e.exec(`return (await mcp.shell.exec({command: "echo again"})).stdout`), wire.StatusSuccess)

	// "always" never covers a one-call item: a secret read asks again.
	if err := os.WriteFile(filepath.Join(e.ws, "server.key"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := `return await mcp.filesystem.read_file({path: "server.key"})`
	a = e.exec(read)
	wantStatus(t, a, wire.StatusApprovalRequired)
	if slices.Contains(a.Options, "always") {
		t.Fatalf("always offered for a secret read: %v", a.Options)
	}
	wantStatus(t, e.always(a.WorkflowID), wire.StatusSuccess)
	a = e.exec(read)
	wantStatus(t, a, wire.StatusApprovalRequired)

	// always with approved false is refused before anything happens.
	bad := e.pkg.NewMCPServer()
	cs := connectInMemory(t, bad, nil)
	res := callExecuteRaw(t, cs, map[string]any{"continue_workflow": map[string]any{"workflow_id": a.WorkflowID, "approved": false, "always": true}})
	if res.ErrorCode != pmlerr.InvalidRequest {
		t.Fatalf("%+v", res)
	}
	wantStatus(t, e.cont(a.WorkflowID, true), wire.StatusSuccess)
}

// Without a .pml.json, "always" writes one: the init defaults plus the tool.
func TestAlwaysWithoutConfigFile(t *testing.T) {
	e := newApprovalEnv(t, "", nil)
	a := e.exec(`return (await mcp.shell.exec({command: "true"})).exit_code`)
	wantStatus(t, a, wire.StatusApprovalRequired)
	wantStatus(t, e.always(a.WorkflowID), wire.StatusSuccess)
	cfg, err := LoadConfig(filepath.Join(e.ws, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Permissions.Decide("shell:exec") != approval.Allow || cfg.Permissions.Decide("filesystem:write_file") != approval.Ask ||
		cfg.Permissions.Decide("filesystem:read_file") != approval.Allow {
		t.Fatalf("permissions %+v", cfg.Permissions)
	}
}

const token = "ghp_R4nd0mT0kenValue1234567890abcdEF"

const dotEnv = "GITHUB_TOKEN=" + token + "\nOPENAI_API_KEY=sk-proj-Zq81Lm0Pq7Xv3Bn5Kd2Hf9Tg\nPML_API_KEY=pml_0a1b2c3d4e5f6a7b8c9d\nSHORT=1\n"

// read_file is allowed by default, yet .env and PML's state ask for each
// read; an approved read returns the values, anything else masks them.
func TestSecretFilesAskAndValuesAreMasked(t *testing.T) {
	e := newApprovalEnv(t, initConfig(t, `"mcpServers": {"fx": {"command": "%[1]s", "env": {"TOK": "${GITHUB_TOKEN}"}}}`), nil)
	if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte(dotEnv), 0o600); err != nil {
		t.Fatal(err)
	}
	e.pkg = e.open(nil) // the package reads .env at start
	read := `return await mcp.filesystem.read_file({path: ".env"})`
	a := e.exec(read)
	wantStatus(t, a, wire.StatusApprovalRequired)
	it := items(t, a)
	if len(it) != 1 || it[0]["access"] != "secret_read" || it[0]["path"] != ".env" || slices.Contains(a.Options, "always") {
		t.Fatalf("%+v", a)
	}
	wantStatus(t, e.cont(a.WorkflowID, false), wire.StatusAborted)
	a = e.exec(read)
	wantStatus(t, a, wire.StatusApprovalRequired)
	r := e.cont(a.WorkflowID, true)
	wantStatus(t, r, wire.StatusSuccess)
	if !strings.Contains(string(r.Result), "ghp_R4nd0mT0kenValue1234567890abcdEF") {
		t.Fatalf("the approved read was masked: %s", r.Result)
	}
	wantStatus(t, e.exec(read), wire.StatusApprovalRequired) // asked again

	// The package's own state holds secrets too.
	for _, path := range []string{".pml/deps.json", ".pml/client-id"} {
		if err := os.MkdirAll(filepath.Join(e.ws, StateDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.ws, path), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		a := e.exec(fmt.Sprintf(`return await mcp.filesystem.read_file({path: %q})`, path))
		wantStatus(t, a, wire.StatusApprovalRequired)
	}

	// A tool result carrying a .env value (the server got it through its
	// config), transformed by the code, in a log and in an error: masked.
	code := `const tok = await mcp.fx.env({name: "TOK"});
		console.log("token " + tok.toUpperCase());
		const parts = tok.split("_");
		if (tok.length < 0) throw new Error(tok);
		return {raw: tok, upper: tok.toUpperCase(), tail: parts[1], hex: await mcp.encoding.hex_encode({data: tok}).catch(() => "")}`
	r, _ = e.approveAll(code) // fx asks
	wantStatus(t, r, wire.StatusSuccess)
	out, _ := json.Marshal(r)
	for _, leak := range []string{"R4nd0mT0kenValue", "R4ND0MT0KENVALUE", "r4nd0mt0kenvalue"} {
		if strings.Contains(strings.ToUpper(string(out)), strings.ToUpper(leak)) {
			t.Fatalf("secret reached the AI client: %s", out)
		}
	}
	if !strings.Contains(string(r.Result), `"raw":"[REDACTED]"`) || !strings.Contains(strings.Join(r.Logs, "\n"), "token [REDACTED]") ||
		strings.Contains(string(out), hex.EncodeToString([]byte(token))[:16]) {
		t.Fatalf("%s", out)
	}
	// The stored trace holds none of those forms either.
	var stored []byte
	trWaitFor(t, "the trace", func() bool {
		tr, err := e.svc.Store().TraceByID(context.Background(), gateway.LocalScope, r.TraceID)
		stored, _ = json.Marshal(tr)
		return err == nil
	})
	if !strings.Contains(string(stored), "[REDACTED]") {
		t.Fatalf("trace: %s", stored)
	}
	for _, form := range []string{token, strings.ToUpper(token), strings.Split(token, "_")[1], hex.EncodeToString([]byte(token))} {
		if strings.Contains(string(stored), form) {
			t.Fatalf("%q reached the trace: %s", form, stored)
		}
	}
	r, _ = e.approveAll(`const tok = await mcp.fx.env({name: "TOK"}); throw new Error("bad " + tok)`)
	if r.Status != wire.StatusError || strings.Contains(r.Error, "R4nd0m") || !strings.Contains(r.Error, "[REDACTED]") {
		t.Fatalf("error: %+v", r)
	}
	// Short values are not masked ("1" would shred every answer).
	r = e.exec(`return [1, "1"]`)
	if string(r.Result) != `[1,"1"]` {
		t.Fatalf("%s", r.Result)
	}
}

// Processes the package starts get a minimal environment: no gateway key,
// no exported tokens; what .pml.json lists for the shell, and what a
// server's config lists for it.
func TestChildrenGetAMinimalEnvironment(t *testing.T) {
	t.Setenv("PML_API_KEY", "pml_process_key_0123456789")
	t.Setenv("GITHUB_TOKEN", "ghp_exported_0123456789")
	t.Setenv("NODE_ENV", "staging")
	e := newApprovalEnv(t, `{"permissions": {"allow": ["shell", "fx"]}, "shell": {"env": ["NODE_ENV", "FROM_FILE"]},
		"mcpServers": {"fx": {"command": "%[1]s", "env": {"LISTED": "yes"}}}}`, nil)
	if err := os.WriteFile(filepath.Join(e.ws, ".env"), []byte("FROM_FILE=file-value\nOTHER=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.pkg = e.open(nil) // the package reads .env at start
	a := e.exec(`return (await mcp.shell.exec({command: "env"})).stdout`)
	wantStatus(t, a, wire.StatusSuccess)
	var env string
	_ = json.Unmarshal(a.Result, &env)
	for _, leak := range []string{"PML_API_KEY", "GITHUB_TOKEN", "OTHER="} {
		if strings.Contains(env, leak) {
			t.Fatalf("%s reached the shell:\n%s", leak, env)
		}
	}
	if !strings.Contains(env, "NODE_ENV=staging") || !strings.Contains(env, "PATH=") || !strings.Contains(env, "FROM_FILE=") {
		t.Fatalf("configured variables missing:\n%s", env)
	}
	a = e.exec(`return [await mcp.fx.env({name: "PML_API_KEY"}), await mcp.fx.env({name: "GITHUB_TOKEN"}), await mcp.fx.env({name: "LISTED"}), (await mcp.fx.env({name: "PATH"})).length > 0]`)
	if string(a.Result) != `["","","yes",true]` {
		t.Fatalf("server environment: %+v", a)
	}
	// A malformed name is a config error naming it; the package serves on.
	if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(`{"shell": {"env": ["BAD NAME"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if a := e.exec(`return 1`); a.ErrorCode != pmlerr.InvalidConfig || !strings.Contains(a.Error, `"BAD NAME"`) {
		t.Fatalf("%+v", a)
	}
	if err := os.WriteFile(filepath.Join(e.ws, ConfigFile), []byte(`{"permissions": {"allow": ["shell"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.exec(`return (await mcp.shell.exec({command: "true"})).exit_code`), wire.StatusSuccess)
}

// connectInMemory opens a new MCP client session on srv (with opts, which
// may be nil), as another AI client would; both sides close with the test.
func connectInMemory(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	s, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, opts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func callExecuteIn(t *testing.T, s *mcp.ClientSession, req wire.ExecuteRequest) wire.Answer {
	t.Helper()
	return callExecuteRaw(t, s, req)
}

func callExecuteRaw(t *testing.T, s *mcp.ClientSession, args any) wire.Answer {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "execute", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	return gatewaytest.DecodeAnswer(t, res)
}
