package gatewayclient

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Each certificate failure says what is wrong; other errors get no hint.
func TestCertificateHint(t *testing.T) {
	leaf := &x509.Certificate{}
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("post: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{Cert: leaf}}), CAFileEnv},
		{fmt.Errorf("post: %w", &tls.CertificateVerificationError{Err: x509.HostnameError{Certificate: leaf, Host: "gw.invalid"}}), "does not name the host"},
		{&tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}}, "could not be verified"},
		{errors.New("connection refused"), ""},
	} {
		got := certificateHint(c.err)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("certificateHint(%v) = %q, want it to say %q", c.err, got, c.want)
		}
	}
}
