package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/upstream"
)

// BYOK (bring your own key): a hosted server whose config references
// ${VAR}s — an http server's headers or url, a stdio server's env — needs the
// user's keys. The gateway never stores them: the package sends them with
// each call of such a server's tools, the gateway starts a short-lived
// connection with the keys substituted, and drops it after the call. The
// keys are not logged and not traced (traces record args, not the env).

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// envRequired lists the ${VAR}s a server config references.
func envRequired(cfg upstream.ServerConfig) []string {
	var refs []string
	collect := func(s string) {
		for _, m := range varRef.FindAllStringSubmatch(s, -1) {
			refs = append(refs, m[1])
		}
	}
	collect(cfg.URL)
	collect(cfg.Command)
	for _, a := range cfg.Args {
		collect(a)
	}
	for _, v := range cfg.Headers {
		collect(v)
	}
	for _, v := range cfg.Env {
		collect(v)
	}
	if cfg.Auth != nil {
		collect(cfg.Auth.ClientID)
		collect(cfg.Auth.ClientSecret)
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// byokServer is a hosted server that needs the caller's keys.
type byokServer struct {
	cfg  upstream.ServerConfig
	keys []string
	log  *slog.Logger
}

// call runs one tool with the caller's keys substituted into the config.
func (b byokServer) call(ctx context.Context, tool string, args json.RawMessage, env map[string]string) (json.RawMessage, error) {
	var missing []string
	for _, k := range b.keys {
		if env[k] == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, pmlerr.New(pmlerr.APIKeyRequired, "%s needs %s: add %s to the workspace .env; the package sends it with each call",
			b.cfg.Name, strings.Join(missing, ", "), plural(len(missing))).With("keys", missing).With("server", b.cfg.Name)
	}
	cfg := b.cfg
	expand := func(s string) string {
		return varRef.ReplaceAllStringFunc(s, func(m string) string { return env[varRef.FindStringSubmatch(m)[1]] })
	}
	cfg.URL, cfg.Command = expand(cfg.URL), expand(cfg.Command)
	cfg.Args = slices.Clone(cfg.Args)
	for i, a := range cfg.Args {
		cfg.Args[i] = expand(a)
	}
	cfg.Headers, cfg.Env = maps.Clone(cfg.Headers), maps.Clone(cfg.Env)
	for k, v := range cfg.Headers {
		cfg.Headers[k] = expand(v)
	}
	for k, v := range cfg.Env {
		cfg.Env[k] = expand(v)
	}
	if cfg.Auth != nil {
		a := *cfg.Auth
		a.ClientID, a.ClientSecret = expand(a.ClientID), expand(a.ClientSecret)
		cfg.Auth = &a
	}
	// One connection per call: keys live exactly as long as the call.
	pool := upstream.NewPool(upstream.Options{Logger: b.log})
	defer pool.Close()
	out, err := pool.Add(cfg).Call(ctx, tool, args)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.cfg.Name, err)
	}
	return out, nil
}

func plural(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// byokFor returns the BYOK server serving tool, if any.
func (s *Service) byokFor(tool string) (byokServer, bool) {
	ns, _ := tools.Split(tool)
	b, ok := s.byok[ns]
	return b, ok
}
