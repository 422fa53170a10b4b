package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pml-go/pml/internal/buildinfo"
)

func TestVersionCommand(t *testing.T) {
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		root := newRootCmd()
		root.SetArgs(args)
		root.SetOut(&out)
		root.SetErr(io.Discard)
		err := root.Execute()
		return out.String(), err
	}
	out, err := run("version")
	if err != nil || !strings.HasPrefix(out, "pml ") || !strings.Contains(out, "engine:  QuickJS") {
		t.Fatalf("version: %v\n%s", err, out)
	}
	out, err = run("version", "--json")
	var in buildinfo.Info
	if err != nil || json.Unmarshal([]byte(out), &in) != nil || in != buildinfo.Read() {
		t.Fatalf("version --json: %v %q", err, out)
	}
	var st *exitStatus
	if _, err := run("version", "extra"); !errors.As(err, &st) || st.code != exitUsage {
		t.Fatalf("an argument: %v, want a usage error", err)
	}
}

// /healthz and the metrics listener name the build too.
func TestGatewayShowsBuild(t *testing.T) {
	logs, _, _ := runGateway(t, "--metrics-addr", "127.0.0.1:0")
	public := waitFor(t, logs, mainListening)
	metrics := waitFor(t, logs, metricsListening)
	in := buildinfo.Read()
	if status, body := httpGet(t, public+"/healthz"); status != 200 || !strings.Contains(body, `"engine":"`+in.Engine+`"`) {
		t.Fatalf("/healthz: %d %s", status, body)
	}
	if status, body := httpGet(t, metrics+"/metrics"); status != 200 || !strings.Contains(body, `pml_build_info{build_date="`+in.BuildDate+`",commit="`+in.Commit+`"`) {
		t.Fatalf("/metrics: %d, no pml_build_info", status)
	}
}
