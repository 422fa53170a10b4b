package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mcpInitialize posts an MCP initialize to url's /mcp naming host in the
// Host header and returns the status.
func mcpInitialize(t *testing.T, url, key, host string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// A request on loopback that names another host is refused (DNS
// rebinding) unless --public-host names it: a reverse proxy on the same
// machine forwards its public name.
func TestGatewayPublicHost(t *testing.T) {
	for name, c := range map[string]struct {
		args []string
		want map[string]int
	}{
		"default": {nil, map[string]int{
			"gateway.example.com": http.StatusForbidden,
			"localhost:8080":      http.StatusOK,
		}},
		"public hosts": {[]string{"--public-host", "gateway.example.com", "--public-host", "second.example.com"}, map[string]int{
			"gateway.example.com":              http.StatusOK,
			"GATEWAY.Example.com:443":          http.StatusOK,
			"second.example.com":               http.StatusOK,
			"evil.example":                     http.StatusForbidden,
			"gateway.example.com.evil.invalid": http.StatusForbidden,
			"example.com":                      http.StatusForbidden,
			"[::1]:8080":                       http.StatusOK,
		}},
	} {
		t.Run(name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "gw.db")
			key := createKey(t, db)
			logs, _, _ := runGateway(t, append([]string{"--db", db, "--metrics-addr", "off"}, c.args...)...)
			url := waitFor(t, logs, mainListening)
			for host, want := range c.want {
				if got := mcpInitialize(t, url, key, host); got != want {
					t.Errorf("Host %s: HTTP %d, want %d", host, got, want)
				}
			}
			// Still served after the refusals.
			if got := mcpInitialize(t, url, key, strings.TrimPrefix(url, "http://")); got != http.StatusOK {
				t.Fatalf("next request: HTTP %d", got)
			}
		})
	}
}

// A --public-host that is not a bare host name stops the gateway at start.
func TestGatewayPublicHostInvalid(t *testing.T) {
	for _, bad := range []string{"", "https://gateway.example.com", "gateway.example.com:443", "gateway.example.com/mcp"} {
		logs, done, _ := runGateway(t, "--metrics-addr", "off", "--public-host", bad)
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "--public-host") {
				t.Fatalf("%q: want a --public-host error, got %v", bad, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%q: the gateway started:\n%s", bad, logs)
		}
	}
}
