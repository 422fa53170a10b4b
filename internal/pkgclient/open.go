package pkgclient

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gateway"
	"github.com/pml-go/pml/internal/sandbox"
)

// Open builds the package for the workspace around dir. With a cloud URL
// (PML_CLOUD_URL, else .pml.json cloud.url) it talks to that gateway with
// PML_API_KEY; without one it runs the gateway in-process on SQLite under
// .pml/ (local mode), so a fresh machine works with no server and no config.
func Open(ctx context.Context, dir string, log *slog.Logger) (*Package, error) {
	ws := FindWorkspace(dir)
	cfg, cfgErr := LoadConfig(filepath.Join(ws, ConfigFile))
	if cfgErr != nil && log != nil {
		log.Error("config", "err", cfgErr) // reported again on every execute; the package still starts
	}
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
	var gw Gateway
	if url != "" {
		if err := checkCloudURL(url, urlSource, insecureAllowed()); err != nil {
			return nil, err
		}
		key, source := apiKey(env, ws)
		r := NewRemote(url, key, filepath.Join(ws, StateDir))
		r.auth.source = source
		gw = r
	} else {
		svc, closer, err := gateway.Open(ctx, gateway.Options{DB: filepath.Join(ws, StateDir, "gateway.db"), Logger: log, Limits: limits})
		if err != nil {
			return nil, fmt.Errorf("local mode: %w", err)
		}
		gw = &InProcess{Service: svc, Closer: closer.Close}
	}
	return New(Options{Workspace: ws, Gateway: gw, Logger: log, Limits: limits})
}

// limitsFromEnv reads PML_RPC_TIMEOUT_MS, the bound on each mcp.* call of a
// run (default 30 s): a local server that never answers fails its call with
// RPC_TIMEOUT after this long.
func limitsFromEnv() (sandbox.Limits, error) {
	var l sandbox.Limits
	if v := os.Getenv("PML_RPC_TIMEOUT_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return l, fmt.Errorf("PML_RPC_TIMEOUT_MS=%q: want a positive number of milliseconds", v)
		}
		l.RPCTimeout = time.Duration(ms) * time.Millisecond
	}
	return l, nil
}
