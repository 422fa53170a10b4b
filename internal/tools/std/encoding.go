package std

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/pml-go/pml/internal/tools"
)

type encodeArgs struct {
	Data    string `json:"data"`
	URLSafe bool   `json:"url_safe"`
	Form    bool   `json:"form"`
}

func encodingTools() []tools.Func {
	base64Schema := `{"type":"object","properties":{
		"data":{"type":"string"},
		"url_safe":{"type":"boolean","default":false,"description":"Use the URL-safe alphabet (- and _)."}
	},"required":["data"],"additionalProperties":false}`
	urlSchema := `{"type":"object","properties":{
		"data":{"type":"string"},
		"form":{"type":"boolean","default":false,"description":"Form encoding: space is +, as in query strings from HTML forms."}
	},"required":["data"],"additionalProperties":false}`
	dataOnly := `{"type":"object","properties":{"data":{"type":"string"}},"required":["data"],"additionalProperties":false}`
	return []tools.Func{
		tools.Typed(info("encoding:base64_encode", "Base64-encode the UTF-8 bytes of a string, like btoa for Unicode text.", base64Schema, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) {
				return base64Encoding(a.URLSafe).EncodeToString([]byte(a.Data)), nil
			}),
		tools.Typed(info("encoding:base64_decode", "Decode base64 (padding optional) into a UTF-8 string. Binary content that is not UTF-8 fails; hex_encode it instead.", base64Schema, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) {
				s := strings.TrimRight(strings.TrimSpace(a.Data), "=")
				b, err := base64Encoding(a.URLSafe).WithPadding(base64.NoPadding).DecodeString(s)
				if err != nil {
					return nil, fmt.Errorf("data is not valid base64: %w", err)
				}
				return utf8String(b)
			}),
		tools.Typed(info("encoding:url_encode", "Percent-encode a string like encodeURIComponent (or as form data with form: true).", urlSchema, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) {
				if a.Form {
					return url.QueryEscape(a.Data), nil
				}
				return encodeURIComponent(a.Data), nil
			}),
		tools.Typed(info("encoding:url_decode", "Decode a percent-encoded string like decodeURIComponent (with form: true, + is a space).", urlSchema, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) {
				var s string
				var err error
				if a.Form {
					s, err = url.QueryUnescape(a.Data)
				} else {
					s, err = url.PathUnescape(a.Data)
				}
				if err != nil {
					return nil, fmt.Errorf("data is not valid percent-encoding: %w", err)
				}
				return utf8String([]byte(s))
			}),
		tools.Typed(info("encoding:hex_encode", "Hex-encode the UTF-8 bytes of a string (lowercase).", dataOnly, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) { return hex.EncodeToString([]byte(a.Data)), nil }),
		tools.Typed(info("encoding:hex_decode", "Decode hex into a UTF-8 string.", dataOnly, returnsString),
			func(_ context.Context, a encodeArgs) (any, error) {
				b, err := hex.DecodeString(strings.TrimSpace(a.Data))
				if err != nil {
					return nil, fmt.Errorf("data is not valid hex: %w", err)
				}
				return utf8String(b)
			}),
	}
}

func base64Encoding(urlSafe bool) *base64.Encoding {
	if urlSafe {
		return base64.URLEncoding
	}
	return base64.StdEncoding
}

// utf8String refuses decoded bytes that JSON would silently mangle.
func utf8String(b []byte) (any, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("decoded bytes are not UTF-8 text")
	}
	return string(b), nil
}

// encodeURIComponent escapes everything but JavaScript's unreserved set
// A-Z a-z 0-9 - _ . ! ~ * ' ( ).
func encodeURIComponent(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.!~*'()", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}
