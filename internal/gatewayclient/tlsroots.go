package gatewayclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"

	"github.com/pml-go/pml/internal/approval"
	"github.com/pml-go/pml/internal/pmlerr"
)

// CAFileEnv names a PEM bundle of certificate authorities the package
// trusts for the gateway, besides the system's: for a gateway whose
// certificate a private CA signed.
const CAFileEnv = "PML_CA_FILE"

// gatewayRoots returns the roots the package verifies the gateway's
// certificate with: nil (the system's) unless CAFileEnv is set (the process
// environment first, then the workspace .env of ws), then the system's plus
// that bundle. A relative path is taken from ws, since the MCP client that
// starts the package picks its working directory. A file that cannot be
// read or holds no certificate is INVALID_CONFIG: the person meant to trust
// a CA, and silently trusting only the system's would fail later and
// further from the cause.
func gatewayRoots(env *approval.Env, ws string) (*x509.CertPool, error) {
	path := os.Getenv(CAFileEnv)
	if path == "" && env != nil {
		path, _ = env.Lookup(CAFileEnv)
	}
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(ws, path)
	}
	bad := func(format string, args ...any) error {
		return pmlerr.New(pmlerr.InvalidConfig, "%s %s: "+format, append([]any{CAFileEnv, path}, args...)...).With("ca_file", path)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, bad("%v", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, bad("no PEM certificate in it")
	}
	return pool, nil
}

// certificateHint says what to do about a gateway certificate the package
// does not trust, or "" when err is about something else.
func certificateHint(err error) string {
	var verify *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	switch {
	case errors.As(err, &unknown):
		return "; the gateway's certificate is signed by an authority this machine does not trust: set " + CAFileEnv +
			" to a PEM file of that authority's certificate"
	case errors.As(err, &host):
		return "; the gateway's certificate does not name the host in the gateway URL"
	case errors.As(err, &verify):
		return "; the gateway's certificate could not be verified"
	}
	return ""
}
