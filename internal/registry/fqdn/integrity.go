package fqdn

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Integrity returns the integrity value of content: "sha256-" followed by the
// lowercase hex SHA-256. Hex rather than SRI's base64 so that the FQDN hash is
// literally its first four digits.
func Integrity(content []byte) string {
	sum := sha256.Sum256(content)
	return "sha256-" + hex.EncodeToString(sum[:])
}

// digestLen is the digest size in bytes of each accepted algorithm.
var digestLen = map[string]int{"sha256": 32, "sha384": 48, "sha512": 64}

// Hash4 returns the four lowercase hex digits an FQDN carries for integrity:
// the first two bytes of its digest. It accepts our "sha256-<hex>" form and
// also SRI's "<alg>-<base64>" form (what npm reports for a package, which is
// what a stdio server's FQDN is derived from). It returns "" for anything
// else, so a caller never mistakes a malformed value for a hash.
func Hash4(integrity string) string {
	alg, digest, ok := strings.Cut(integrity, "-")
	size, known := digestLen[alg]
	if !ok || !known {
		return ""
	}
	var raw []byte
	var err error
	switch len(digest) {
	case 2 * size:
		raw, err = hex.DecodeString(digest)
	case base64.StdEncoding.EncodedLen(size):
		raw, err = base64.StdEncoding.DecodeString(digest)
	default:
		return ""
	}
	if err != nil || len(raw) != size {
		return ""
	}
	return hex.EncodeToString(raw[:2])
}
