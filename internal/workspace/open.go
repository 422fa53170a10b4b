package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pml-go/pml/internal/admission"
	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/sandbox"
)

// Open builds the package for the workspace around dir. With a cloud URL
// (PML_CLOUD_URL, else .pml.json cloud.url) it talks to that gateway with
// PML_API_KEY; without one it runs the gateway in-process on SQLite under
// .pml/ (local mode), so a fresh machine works with no server and no config.
func Open(ctx context.Context, dir string, log *slog.Logger) (*Workspace, error) {
	ws := FindWorkspace(dir)
	// A malformed .pml.json is logged once, by New's first refreshConfig,
	// and answered by every execute; the package still starts.
	cfg, _ := LoadConfig(filepath.Join(ws, ConfigFile))
	env := approval.NewEnv(ws)
	if err := env.Reload(); err != nil && log != nil {
		log.Warn("reading .env", "err", err)
	}
	url, urlSource := os.Getenv("PML_CLOUD_URL"), "PML_CLOUD_URL"
	if url == "" {
		url, urlSource = cfg.Cloud.URL, filepath.Join(ws, ConfigFile)+" cloud.url"
	}
	limits, err := limitsFromEnv()
	if err != nil {
		return nil, err
	}
	adm, err := admissionFromEnv()
	if err != nil {
		return nil, err
	}
	// In local mode the in-process gateway's runs and the package's are the
	// same process's: one controller admits both.
	ctrl := admission.New(adm, limits)
	// ... and one analyser analyses for both: the in-process gateway finds
	// the package's analysis of the code it forwards in the shared cache.
	analyzer := analysis.New(analyzerEntries)
	var gw gatewayclient.Gateway
	if url != "" {
		r, err := gatewayclient.Dial(url, urlSource, env, ws, filepath.Join(ws, StateDir))
		if err != nil {
			return nil, err
		}
		gw = r
	} else {
		// Local mode serves one tenant: no global layer to share with. Its
		// discovers and runs are this process's AI client's: another
		// process of the workspace has a client of its own.
		off := 0
		svc, closer, err := gateway.Open(ctx, gateway.Options{DB: filepath.Join(ws, StateDir, "gateway.db"), Logger: log, Limits: limits, Admission: ctrl,
			Analyzer: analyzer, Config: gateway.FileConfig{Global: &gateway.GlobalLayer{K: &off}}, OwnDiscovers: true})
		if err != nil {
			return nil, fmt.Errorf("local mode: %w", err)
		}
		gw = &gatewayclient.InProcess{Service: svc, Closer: closer.Close}
	}
	return New(Options{Workspace: ws, Gateway: gw, Logger: log, Limits: limits, Admission: ctrl, Analyzer: analyzer})
}

// admissionFromEnv reads the package's admission limits (docs/configuration.md): PML_MAX_EXECUTIONS, PML_MAX_RUNNING, PML_MAX_QUEUE and
// PML_QUEUE_WAIT_MS; unset ones take the defaults. The package serves one
// tenant, so there is no per-tenant cap.
func admissionFromEnv() (admission.Limits, error) {
	l := admission.Limits{MaxExecutionsPerTenant: -1}
	for _, v := range []struct {
		name string
		to   *int
	}{
		{"PML_MAX_EXECUTIONS", &l.MaxExecutions},
		{"PML_MAX_RUNNING", &l.MaxRunning},
	} {
		if s := os.Getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				return l, fmt.Errorf("%s=%q: want a positive number", v.name, s)
			}
			*v.to = n
		}
	}
	if s := os.Getenv("PML_MAX_QUEUE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return l, fmt.Errorf("PML_MAX_QUEUE=%q: want a number, 0 for no queue", s)
		}
		l.MaxQueue = admission.QueueLength(n)
	}
	if s := os.Getenv("PML_QUEUE_WAIT_MS"); s != "" {
		ms, err := strconv.Atoi(s)
		if err != nil || ms <= 0 {
			return l, fmt.Errorf("PML_QUEUE_WAIT_MS=%q: want a positive number of milliseconds", s)
		}
		l.QueueWait = time.Duration(ms) * time.Millisecond
	}
	return l, nil
}

// limitsFromEnv reads the package's execution limits (docs/configuration.md): PML_TIMEOUT_MS, the wall clock of a run (default 5 min);
// PML_CPU_BUDGET_MS, the CPU time a run may spend running JS (default 30 s); and
// PML_RPC_TIMEOUT_MS, the bound on each mcp.* call (default 30 s), after
// which a local server that never answers fails the call with RPC_TIMEOUT.
// A request's options can lower the first two, never raise them.
func limitsFromEnv() (sandbox.Limits, error) {
	var l sandbox.Limits
	for _, v := range []struct {
		name string
		into *time.Duration
	}{{"PML_TIMEOUT_MS", &l.Timeout}, {"PML_CPU_BUDGET_MS", &l.CPUBudget}, {"PML_RPC_TIMEOUT_MS", &l.RPCTimeout}} {
		s := os.Getenv(v.name)
		if s == "" {
			continue
		}
		ms, err := strconv.Atoi(s)
		if err != nil || ms <= 0 {
			return l, fmt.Errorf("%s=%q: want a positive number of milliseconds", v.name, s)
		}
		*v.into = time.Duration(ms) * time.Millisecond
	}
	return l, nil
}
