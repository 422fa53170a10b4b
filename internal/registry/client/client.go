// Package client is the package side of the registry: it fetches entries
// from a gateway's GET /mcp/{fqdn}, keeps them in a small disk cache that it
// revalidates with If-None-Match (an unchanged entry costs a 304), checks
// every entry's content against its integrity, and checks and records each
// fetch in the workspace lockfile (docs/how-it-works.md, Registry).
package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/registry/fqdn"
)

// MaxEntryBytes bounds an entry's body; capabilities are at most 100 KiB of
// code and metadata is small.
const MaxEntryBytes = 1 << 20

// Client fetches registry entries from one gateway. It keeps no state but
// its disk cache, so it is cheap to build and safe for concurrent use.
type Client struct {
	base     string
	http     *http.Client
	cacheDir string
	// unreachable says why the gateway could not be reached; nil: its
	// address and the error (WithUnreachable).
	unreachable func(error) string
}

// New returns a client for the gateway at baseURL (without /mcp). hc
// carries the gateway's authentication; cacheDir (e.g.
// <workspace>/.pml/registry) holds fetched entries, "" disables the cache.
func New(baseURL string, hc *http.Client, cacheDir string) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), http: hc, cacheDir: cacheDir}
}

// Entry is a fetched, verified registry entry.
type Entry struct {
	FQDN      string // five-part
	Type      registry.Type
	Routing   string
	Integrity string
	// Content is the "sha256-…" this package computed over what it acts on:
	// the code, or the canonical metadata. It is Integrity whenever
	// Integrity is a SHA-256 (checked); a package's own SRI integrity cannot
	// be recomputed here, so the lockfile pins Content beside it.
	Content  string
	Body     []byte             // the code, or the metadata JSON
	Metadata *registry.Metadata // stdio and http entries
	// Revalidated says the gateway answered 304 and the body came from the
	// disk cache.
	Revalidated bool
}

// Fetch returns the current entry for name (four-part: whatever version is
// current; five-part: that version, else an error wrapping
// registry.ErrNotFound). Content that does not match its integrity is an
// INTEGRITY_ERROR: a registry or a cache that lies is caught here, and a
// change the lockfile did not expect is caught by Check.
func (c *Client) Fetch(ctx context.Context, name string) (Entry, error) {
	n, err := fqdn.Parse(name)
	if err != nil {
		return Entry{}, pmlerr.Wrap(pmlerr.InvalidRequest, err)
	}
	cached, haveCache := c.readCache(n.Base())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/mcp/"+n.String(), nil)
	if err != nil {
		return Entry{}, fmt.Errorf("registry %s: %w", name, err)
	}
	if haveCache {
		req.Header.Set("If-None-Match", cached.ETag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Entry{}, c.networkError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxEntryBytes+1))
	if err != nil {
		return Entry{}, c.networkError(err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		if !haveCache || cached.ETag != resp.Header.Get("ETag") {
			return Entry{}, pmlerr.New(pmlerr.NetworkError, "registry %s: 304 for an entry not in the cache", name)
		}
		e, err := verify(n, cached.FQDN, registry.Type(cached.Type), cached.Routing, cached.ETag, cached.Body)
		e.Revalidated = true
		return e, err
	case http.StatusNotFound:
		return Entry{}, notFound(name, body)
	default:
		return Entry{}, pmlerr.New(pmlerr.NetworkError, "gateway %s: registry %s: HTTP %d", c.base, name, resp.StatusCode)
	}
	if len(body) > MaxEntryBytes {
		return Entry{}, pmlerr.New(pmlerr.IntegrityError, "registry %s: entry larger than %d bytes", name, MaxEntryBytes)
	}
	served := strings.TrimPrefix(resp.Request.URL.Path, "/mcp/")
	e, err := verify(n, served, registry.Type(resp.Header.Get("X-PML-Type")), resp.Header.Get("X-PML-Routing"), resp.Header.Get("ETag"), body)
	if err != nil {
		return Entry{}, err
	}
	c.writeCache(n.Base(), cacheEntry{FQDN: e.FQDN, ETag: resp.Header.Get("ETag"), Type: string(e.Type), Routing: e.Routing, Body: body})
	return e, nil
}

// verify checks that what was served under the five-part name served is
// the entry asked for and that its content is what its integrity says.
func verify(asked fqdn.Name, served string, typ registry.Type, side, etag string, body []byte) (Entry, error) {
	fail := func(format string, args ...any) (Entry, error) {
		return Entry{}, pmlerr.New(pmlerr.IntegrityError, "registry entry %s: "+format, append([]any{asked.String()}, args...)...).
			With("fqdn", asked.String())
	}
	n, err := fqdn.Parse(served)
	switch {
	case err != nil || n.Hash == "":
		return fail("served under %q, not a five-part name", served)
	case n.Base() != asked.Base() || asked.Hash != "" && n.Hash != asked.Hash:
		return fail("served as %s", served)
	}
	integrity := strings.Trim(strings.TrimPrefix(etag, "W/"), `"`)
	if h := fqdn.Hash4(integrity); h == "" || h != n.Hash {
		return fail("integrity %q does not match the name's hash %s", integrity, n.Hash)
	}
	e := Entry{FQDN: served, Type: typ, Routing: side, Integrity: integrity, Body: body}
	switch typ {
	case registry.TypeCode:
		if e.Content = fqdn.Integrity(body); e.Content != integrity {
			return fail("the code does not match its integrity %s", integrity)
		}
	case registry.TypeStdio, registry.TypeHTTP:
		var m registry.Metadata
		if err := json.Unmarshal(body, &m); err != nil {
			return fail("metadata is not JSON: %v", err)
		}
		if m.FQDN != served || m.Integrity != integrity || m.Type != typ || string(m.Routing) != side {
			return fail("metadata names %s (%s, %s, %s), headers %s (%s, %s, %s)", m.FQDN, m.Integrity, m.Type, m.Routing, served, integrity, typ, side)
		}
		if e.Content, err = registry.MetadataIntegrity(body); err != nil {
			return fail("%v", err)
		}
		// A package's own integrity (sha512-…) cannot be recomputed here;
		// the lockfile pins Content beside it.
		if strings.HasPrefix(integrity, "sha256-") && e.Content != integrity {
			return fail("the metadata does not match its integrity %s", integrity)
		}
		e.Metadata = &m
	default:
		return fail("unknown type %q", typ)
	}
	return e, nil
}

// notFound reads a 404 body: not_found or hash_mismatch (with the current
// FQDN), both wrapping registry.ErrNotFound.
func notFound(name string, body []byte) error {
	var b struct {
		Error       string `json:"error"`
		Message     string `json:"message"`
		CurrentFQDN string `json:"currentFqdn"`
	}
	_ = json.Unmarshal(body, &b)
	if b.Error == "hash_mismatch" && b.CurrentFQDN != "" {
		return fmt.Errorf("registry %s: %s (current: %s): %w", name, b.Message, b.CurrentFQDN, registry.ErrNotFound)
	}
	return fmt.Errorf("registry %s: %w", name, registry.ErrNotFound)
}

// networkError is a failure to reach the gateway. An error that already
// carries a wire code (the caller's transport turns a refused key into
// UNAUTHORIZED) is kept: the gateway answered, it is not away.
func (c *Client) networkError(err error) error {
	if pe, ok := pmlerr.As(err); ok {
		return pe
	}
	msg := fmt.Sprintf("gateway %s unreachable: %v", c.base, err)
	if c.unreachable != nil {
		msg = c.unreachable(err)
	}
	return &pmlerr.Error{Code: pmlerr.NetworkError, Message: msg, Err: err}
}

// WithUnreachable returns c saying with describe why the gateway could not
// be reached, as the package's other requests say it (where its address
// came from, gatewayclient).
func (c *Client) WithUnreachable(describe func(error) string) *Client {
	cp := *c
	cp.unreachable = describe
	return &cp
}

// Resolve asks the catalog which entry a tool id ("ns:action") calls for
// this key: the capability by that name its own project, org or the public
// would run. ok is false when there is none.
func (c *Client) Resolve(ctx context.Context, toolID string) (registry.Item, bool, error) {
	q := url.Values{"type": {string(registry.TypeCode)}, "name": {toolID}, "limit": {"1"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/mcp?"+q.Encode(), nil)
	if err != nil {
		return registry.Item{}, false, fmt.Errorf("registry resolve %s: %w", toolID, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return registry.Item{}, false, c.networkError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return registry.Item{}, false, pmlerr.New(pmlerr.NetworkError, "gateway %s: registry catalog: HTTP %d", c.base, resp.StatusCode)
	}
	var cat registry.Catalog
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxEntryBytes)).Decode(&cat); err != nil {
		return registry.Item{}, false, pmlerr.New(pmlerr.NetworkError, "gateway %s: registry catalog: %v", c.base, err)
	}
	if len(cat.Items) == 0 {
		return registry.Item{}, false, nil
	}
	return cat.Items[0], true, nil
}
