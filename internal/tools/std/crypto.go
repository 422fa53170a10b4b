package std

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"

	"github.com/pml-go/pml/internal/tools"
)

// hashes are the algorithms crypto:hash and crypto:hmac accept. md5 and sha1
// are there for checksums and legacy APIs, not for security.
var hashes = map[string]func() hash.Hash{
	"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha384": sha512.New384, "sha512": sha512.New,
}

const hashEnum = `["md5","sha1","sha256","sha384","sha512"]`

func cryptoTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("crypto:sha256",
			"SHA-256 digest of a UTF-8 string, as lowercase hex.",
			`{"type":"object","properties":{"data":{"type":"string"}},"required":["data"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Data string `json:"data"`
			}) (any, error) {
				sum := sha256.Sum256([]byte(a.Data))
				return hex.EncodeToString(sum[:]), nil
			}),
		tools.Typed(info("crypto:hash",
			"Digest of a UTF-8 string with md5, sha1, sha256, sha384 or sha512, as hex (default) or base64.",
			`{"type":"object","properties":{
				"data":{"type":"string"},
				"algorithm":{"enum":`+hashEnum+`,"default":"sha256"},
				"encoding":{"enum":["hex","base64"],"default":"hex"}
			},"required":["data"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Data      string `json:"data"`
				Algorithm string `json:"algorithm"`
				Encoding  string `json:"encoding"`
			}) (any, error) {
				mk, err := hashFunc(a.Algorithm)
				if err != nil {
					return nil, err
				}
				h := mk()
				h.Write([]byte(a.Data))
				return encodeDigest(h.Sum(nil), a.Encoding), nil
			}),
		tools.Typed(info("crypto:hmac",
			"HMAC of a UTF-8 string with a key (sha256 by default), as hex (default) or base64; for signing webhooks and API requests.",
			`{"type":"object","properties":{
				"data":{"type":"string"},
				"key":{"type":"string"},
				"algorithm":{"enum":`+hashEnum+`,"default":"sha256"},
				"encoding":{"enum":["hex","base64"],"default":"hex"}
			},"required":["data","key"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Data      string `json:"data"`
				Key       string `json:"key"`
				Algorithm string `json:"algorithm"`
				Encoding  string `json:"encoding"`
			}) (any, error) {
				mk, err := hashFunc(a.Algorithm)
				if err != nil {
					return nil, err
				}
				mac := hmac.New(mk, []byte(a.Key))
				mac.Write([]byte(a.Data))
				return encodeDigest(mac.Sum(nil), a.Encoding), nil
			}),
		tools.Typed(info("crypto:uuid",
			"A new random UUID (version 4), like crypto.randomUUID().",
			`{"type":"object","properties":{},"additionalProperties":false}`, returnsString),
			func(context.Context, struct{}) (any, error) { return newUUID(), nil }),
	}
}

func hashFunc(algorithm string) (func() hash.Hash, error) {
	if algorithm == "" {
		algorithm = "sha256"
	}
	mk, ok := hashes[algorithm]
	if !ok {
		return nil, fmt.Errorf("unknown algorithm %q", algorithm)
	}
	return mk, nil
}

func encodeDigest(sum []byte, encoding string) string {
	if encoding == "base64" {
		return base64.StdEncoding.EncodeToString(sum)
	}
	return hex.EncodeToString(sum)
}

// newUUID returns an RFC 9562 version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it crashes the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
