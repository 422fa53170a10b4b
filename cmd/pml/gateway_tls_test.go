package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/gatewayclient"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

var httpsListening = regexp.MustCompile(`msg=listening addr=(https://\S+)`)

// testPKI writes a throwaway CA and a certificate it signed for 127.0.0.1,
// ::1 and localhost into a temp dir; it returns the files' paths.
func testPKI(t *testing.T) (caFile, certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pml test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", leafDER), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// createKey runs `pml gateway key create` on db and returns the key.
func createKey(t *testing.T, db string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := newGatewayCmd(nil)
	cmd.SetArgs([]string{"key", "create", "--db", db, "--org", "acme", "--project", "web"})
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out.String())
}

// dialExecute dials the gateway at url the way the package does (Dial,
// reading PML_API_KEY and PML_CA_FILE) and runs a server-only execute.
func dialExecute(t *testing.T, url string) (wire.Answer, error) {
	t.Helper()
	ws := t.TempDir()
	r, err := gatewayclient.Dial(url, "PML_CLOUD_URL", approval.NewEnv(ws), ws, "")
	if err != nil {
		return wire.Answer{}, err
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return r.Execute(ctx, wire.ExecuteRequest{Code: "return await mcp.math.add({a: 2, b: 3})"})
}

// `pml gateway --tls-cert --tls-key` serves HTTPS; the package trusts its
// private CA through PML_CA_FILE, and without it says the certificate is
// the trouble.
func TestGatewayTLS(t *testing.T) {
	caFile, certFile, keyFile := testPKI(t)
	db := filepath.Join(t.TempDir(), "gw.db")
	key := createKey(t, db)
	logs, _, _ := runGateway(t, "--db", db, "--metrics-addr", "off", "--tls-cert", certFile, "--tls-key", keyFile)
	url := waitFor(t, logs, httpsListening)
	t.Setenv("PML_API_KEY", key)

	t.Setenv(gatewayclient.CAFileEnv, caFile)
	if a, err := dialExecute(t, url); err != nil || a.Status != wire.StatusSuccess || string(a.Result) != "5" {
		t.Fatalf("with %s: %+v %v", gatewayclient.CAFileEnv, a, err)
	}

	// Untrusted: a NETWORK_ERROR that says what to set.
	t.Setenv(gatewayclient.CAFileEnv, "")
	_, err := dialExecute(t, url)
	if pmlerr.CodeOf(err, "") != pmlerr.NetworkError || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), gatewayclient.CAFileEnv) {
		t.Fatalf("without %s: want NETWORK_ERROR naming the certificate and %s, got %v", gatewayclient.CAFileEnv, gatewayclient.CAFileEnv, err)
	}

	// The gateway still serves, and plain http to it is no answer.
	t.Setenv(gatewayclient.CAFileEnv, caFile)
	if a, err := dialExecute(t, url); err != nil || a.Status != wire.StatusSuccess {
		t.Fatalf("next request: %+v %v", a, err)
	}
	if _, err := dialExecute(t, strings.Replace(url, "https://", "http://", 1)); pmlerr.CodeOf(err, "") != pmlerr.NetworkError {
		t.Fatalf("plain http to the HTTPS gateway: want NETWORK_ERROR, got %v", err)
	}
}

// A CA file that cannot be used is INVALID_CONFIG when the package dials,
// before any request.
func TestCAFileInvalid(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, path := range map[string]string{"missing": filepath.Join(dir, "nope.pem"), "no PEM": garbage} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(gatewayclient.CAFileEnv, path)
			_, err := gatewayclient.Dial("https://127.0.0.1:1", "PML_CLOUD_URL", approval.NewEnv(dir), dir, "")
			if pmlerr.CodeOf(err, "") != pmlerr.InvalidConfig || !strings.Contains(err.Error(), path) {
				t.Fatalf("want INVALID_CONFIG naming %s, got %v", path, err)
			}
		})
	}
	// Relative to the workspace, from the workspace .env.
	caFile, _, _ := testPKI(t)
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(gatewayclient.CAFileEnv+"=ca.pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(gatewayclient.CAFileEnv, "")
	env := approval.NewEnv(dir)
	if err := env.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := gatewayclient.Dial("https://127.0.0.1:1", "PML_CLOUD_URL", env, dir, ""); err != nil {
		t.Fatalf("CA file from .env: %v", err)
	}
}

// Both TLS flags or neither; a bad file stops the gateway at start.
func TestGatewayTLSFlagsInvalid(t *testing.T) {
	_, certFile, keyFile := testPKI(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("nope"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"cert only":   {[]string{"--tls-cert", certFile}, "give both or neither"},
		"key only":    {[]string{"--tls-key", keyFile}, "give both or neither"},
		"missing key": {[]string{"--tls-cert", certFile, "--tls-key", keyFile + ".missing"}, "no such file"},
		"bad cert":    {[]string{"--tls-cert", garbage, "--tls-key", keyFile}, "--tls-cert " + garbage},
		"swapped":     {[]string{"--tls-cert", keyFile, "--tls-key", certFile}, "--tls-cert"},
	} {
		t.Run(name, func(t *testing.T) {
			logs, done, _ := runGateway(t, append([]string{"--metrics-addr", "off"}, c.args...)...)
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want an error with %q, got %v", c.want, err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("the gateway started:\n%s", logs)
			}
		})
	}
}

// Over TLS a connection that presented a valid key stops counting as
// unauthenticated, as over plain http: a stalled newcomer does not close it.
func TestGatewayTLSAuthenticatedConnKept(t *testing.T) {
	caFile, certFile, keyFile := testPKI(t)
	db := filepath.Join(t.TempDir(), "gw.db")
	key := createKey(t, db)
	logs, _, _ := runGateway(t, "--db", db, "--metrics-addr", "off", "--tls-cert", certFile, "--tls-key", keyFile,
		"--max-unauthenticated-conns", "1")
	url := waitFor(t, logs, httpsListening)
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pemBytes)
	tlsCfg := &tls.Config{RootCAs: roots}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	get := func() (status int, reused bool) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url+"/api/v1/routing", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, reused
	}
	if status, _ := get(); status != http.StatusOK {
		t.Fatalf("first request: HTTP %d", status)
	}
	// A newcomer that sends nothing after its handshake: the one
	// unauthenticated connection allowed.
	stalled, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), tlsCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if status, reused := get(); status != http.StatusOK || !reused {
		t.Fatalf("second request: HTTP %d, connection reused %v (want 200 on the kept connection)", status, reused)
	}
}
