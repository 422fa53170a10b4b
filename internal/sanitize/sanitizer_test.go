package sanitize

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestSanitizerString(t *testing.T) {
	s := New([]string{"hunter2-very-secret", "abc", "p\"q\\rstu"})
	tests := []struct {
		name, in, want string
	}{
		{"plain text kept", "read 3 files from /tmp/x", "read 3 files from /tmp/x"},
		{"openai key", "key is sk-proj-AbCdEfGhIjKlMnOpQrStUv12 ok", "key is [REDACTED] ok"},
		{"anthropic key", "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAA", "[REDACTED]"},
		{"stripe live key", "sk_live_51HxYzAbCdEfGhIj", "[REDACTED]"},
		{"github pat", "token ghp_0123456789abcdefghijABCDEFGHIJ0123456789", "token [REDACTED]"},
		{"github oauth", "gho_0123456789abcdefghijABCDEFGHIJ0123", "[REDACTED]"},
		{"aws key id", "AWS_ACCESS_KEY_ID AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID [REDACTED]"},
		{"jwt", "got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U end",
			"got [REDACTED] end"},
		{"bearer", "sent Bearer abc123def456ghi", "sent Bearer [REDACTED]"},
		{"bearer prose kept", "use Bearer authentication here", "use Bearer authentication here"},
		{"authorization header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED]"},
		{"authorization in json text", `{"Authorization": "Bearer abcdef123456"`, `{"Authorization": "[REDACTED]"`},
		{"query token", "GET /cb?code=1&access_token=ya29.a0AfH6SMBx&x=1", "GET /cb?code=1&access_token=[REDACTED]&x=1"},
		{"query key", "https://maps.example/api?key=Zx81kdP0qq&q=paris", "https://maps.example/api?key=[REDACTED]&q=paris"},
		{"env line", "DB_PASSWORD=s3cr3tpass", "DB_PASSWORD=[REDACTED]"},
		{"yaml pair", "password: hunter22", "password: [REDACTED]"},
		{"dotted yaml value", "password: my.pass.123", "password: [REDACTED]"},
		{"prose pair kept", "your session: expired", "your session: expired"},
		{"code await kept", "const token = await mcp.auth.get_token()", "const token = await mcp.auth.get_token()"},
		{"code literal", `const apiKey = "letmein"`, `const apiKey = "[REDACTED]"`},
		{"url password", "postgres://app:pa55word@db.internal:5432/x", "postgres://app:[REDACTED]@db.internal:5432/x"},
		{"pem", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\ndone", "key:\n[REDACTED]\ndone"},
		{"pem unterminated", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", "[REDACTED]"},
		{"provided secret", "connecting with hunter2-very-secret now", "connecting with [REDACTED] now"},
		{"provided secret escaped in json text", `{"v":"p\"q\\rstu"}`, `{"v":"[REDACTED]"}`},
		{"short provided secret ignored", "abc", "abc"},
		{"email", "mail bob.smith+x@example.co.uk today", "mail [EMAIL] today"},
		{"card", "card 4111 1111 1111 1111 exp", "card [CARD] exp"},
		{"card contiguous", "4242424242424242", "[CARD]"},
		{"card failing luhn kept", "4111 1111 1111 1112", "4111 1111 1111 1112"},
		{"ms timestamp kept", "at 1732245623123 ms", "at 1732245623123 ms"},
		{"ssn", "ssn 123-45-6789.", "ssn [SSN]."},
		{"invalid ssn kept", "000-12-3456", "000-12-3456"},
		{"us phone", "call (555) 123-4567 or 555.123.4567", "call [PHONE] or [PHONE]"},
		{"intl phone", "tel +33 6 12 34 56 78", "tel [PHONE]"},
		{"date kept", "2024-01-15T10:00:00+01:00", "2024-01-15T10:00:00+01:00"},
		{"ip kept", "10.0.0.1:8080", "10.0.0.1:8080"},
		{"author kept", "author: Jane Austen", "author: Jane Austen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q)\n got  %q\n want %q", tt.in, got, tt.want)
			}
			if again := s.String(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestSanitizerValue(t *testing.T) {
	s := New(nil)
	tests := []struct {
		name, in, want string
	}{
		{"secret keys", `{"api_key":"x","apiKey":"y","X-API-Key":"z","password":"p","accessToken":"t","Authorization":"Basic q"}`,
			`{"Authorization":"[REDACTED]","X-API-Key":"[REDACTED]","accessToken":"[REDACTED]","apiKey":"[REDACTED]","api_key":"[REDACTED]","password":"[REDACTED]"}`},
		{"non-secret keys", `{"author":"Ann","max_tokens":1000,"token_type":"bearer","tokenizer":"bpe","password_file":"/run/pw"}`,
			`{"author":"Ann","max_tokens":1000,"password_file":"/run/pw","token_type":"bearer","tokenizer":"bpe"}`},
		{"secret object and number", `{"credentials":{"user":"a","pass":"b"},"session_id":12345,"auth":true,"token":null}`,
			`{"auth":true,"credentials":"[REDACTED]","session_id":"[REDACTED]","token":null}`},
		{"nested arrays", `{"items":[{"name":"a","secret":"s"},[{"cookie":"c"}]]}`,
			`{"items":[{"name":"a","secret":"[REDACTED]"},[{"cookie":"[REDACTED]"}]]}`},
		{"pii in values", `["bob@example.com",4111111111111111,"123-45-6789"]`, `["[EMAIL]","[CARD]","[SSN]"]`},
		{"numbers kept as written", `{"n":1.50,"big":12345678901234567890}`, `{"big":12345678901234567890,"n":1.50}`},
		{"pii in keys", `{"a@x.com":1,"b@x.com":2}`, `{"[EMAIL]":1,"[EMAIL]#2":2}`},
		{"embedded json", `{"text":"{\"token\": \"abc\", \"n\": 1}"}`, `{"text":"{\"n\":1,\"token\":\"[REDACTED]\"}"}`},
		{"not json becomes string", `token=abcdef123456 oops`, `"token=[REDACTED] oops"`},
		{"html kept", `{"html":"<b>x</b> & y"}`, `{"html":"<b>x</b> & y"}`},
		{"secret in tool result", `{"content":[{"type":"text","text":"export OPENAI_API_KEY=sk-abcdefghijklmnopqrstu"}]}`,
			`{"content":[{"text":"export OPENAI_API_KEY=[REDACTED]","type":"text"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(s.Value(json.RawMessage(tt.in)))
			if got != tt.want {
				t.Errorf("Value(%s)\n got  %s\n want %s", tt.in, got, tt.want)
			}
			if again := string(s.Value(json.RawMessage(got))); again != got {
				t.Errorf("not idempotent: %s -> %s", got, again)
			}
		})
	}
}

func TestSanitizerEmptyValue(t *testing.T) {
	s := New(nil)
	if got := s.Value(nil); got != nil {
		t.Errorf("Value(nil) = %q", got)
	}
}

func TestSanitizerLimits(t *testing.T) {
	s := New(nil)

	long := strings.Repeat("a", MaxStringBytes+1)
	got := s.Value(json.RawMessage(`{"body":"` + long + `"}`))
	var v struct {
		Body struct {
			Truncated bool   `json:"_truncated"`
			Preview   string `json:"preview"`
			Length    int    `json:"original_length"`
		} `json:"body"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if !v.Body.Truncated || len(v.Body.Preview) != PreviewBytes || v.Body.Length != MaxStringBytes+1 {
		t.Errorf("truncated = %+v", v.Body)
	}
	if again := s.Value(got); string(again) != string(got) {
		t.Errorf("truncation not idempotent")
	}

	// A secret cut in half by the preview boundary must not leak its start.
	secret := "sk-" + strings.Repeat("Z", 40)
	text := strings.Repeat("x", PreviewBytes-10) + " " + secret + strings.Repeat(" y", MaxStringBytes)
	str := s.String(text)
	if strings.Contains(str, "sk-ZZ") {
		t.Errorf("preview leaks the secret: ...%s", str[PreviewBytes-20:PreviewBytes+10])
	}
	if !strings.HasSuffix(str, "…[TRUNCATED original_length="+strconv.Itoa(len(text))+"]") {
		t.Errorf("String marker missing: %q", str[len(str)-60:])
	}
	if again := s.String(str); again != str {
		t.Errorf("String truncation not idempotent")
	}

	deep := strings.Repeat(`{"a":`, MaxNesting+5) + "1" + strings.Repeat("}", MaxNesting+5)
	got = s.Value(json.RawMessage(deep))
	want := strings.Repeat(`{"a":`, MaxNesting) + `"[MAX_DEPTH]"` + strings.Repeat("}", MaxNesting)
	if string(got) != want {
		t.Errorf("depth cap:\n got  %s\n want %s", got, want)
	}

	var many []string
	for range MaxValueBytes / 1000 {
		many = append(many, strings.Repeat("b", 1100))
	}
	big, _ := json.Marshal(many)
	got = s.Value(big)
	if len(got) > 2*PreviewBytes || !strings.Contains(string(got), `"_truncated":true`) {
		t.Errorf("size cap: got %d bytes: %.80s", len(got), got)
	}
}

func TestIsSecretKey(t *testing.T) {
	secret := []string{"password", "PASSWORD", "db_password", "apiKey", "API_KEY", "x-api-key", "APIKey", "accesstoken",
		"client_secret", "refreshToken", "Authorization", "set-cookie", "session", "sessionId", "auth", "oauth",
		"private_key", "aws_secret_access_key", "credentials", "passwd", "bearer"}
	plain := []string{"author", "authors", "authority", "max_tokens", "input_tokens", "token_type", "token_count",
		"tokenizer", "password_file", "auth_url", "keyboard", "key", "monkey", "name", "sessions", "expires_in", ""}
	for _, k := range secret {
		if !isSecretKey(k) {
			t.Errorf("isSecretKey(%q) = false", k)
		}
	}
	for _, k := range plain {
		if isSecretKey(k) {
			t.Errorf("isSecretKey(%q) = true", k)
		}
	}
}

// Every name isSecretKey accepts must contain one of kvHints, or the
// pre-filter would skip text the pair rule should redact.
func TestKVHintsCoverSecretNames(t *testing.T) {
	var names []string
	for w := range secretWords {
		names = append(names, w)
	}
	for w := range secretPairs {
		names = append(names, w)
	}
	for w := range secretParams {
		names = append(names, w)
	}
	names = append(names, secretSuffixes...)
	for _, n := range names {
		if !containsAny(n, kvHints) {
			t.Errorf("secret name %q has no hint in kvHints", n)
		}
	}
}

func FuzzSanitizerIdempotent(f *testing.F) {
	for _, seed := range []string{
		`{"a":"b"}`, "token=abcdef123 call 555-123-4567", `{"x":"{\"password\":\"p\"}"}`,
		"4111 1111 1111 1111 123-45-6789 +33 6 12 34 56 78", "Authorization: Bearer abc123def456",
		"https://u:p@h.io/?key=12345678", `["a@b.co",{"cookie":1}]`, "(555) 123-4567(555) 123-4567",
	} {
		f.Add(seed)
	}
	s := New([]string{"s3cret-value"})
	f.Fuzz(func(t *testing.T, in string) {
		once := s.String(in)
		if twice := s.String(once); twice != once {
			t.Errorf("String not idempotent:\n in    %q\n once  %q\n twice %q", in, once, twice)
		}
		v := s.Value(json.RawMessage(in))
		if w := s.Value(v); string(w) != string(v) {
			t.Errorf("Value not idempotent:\n in    %q\n once  %s\n twice %s", in, v, w)
		}
		if len(v) > 0 && !json.Valid(v) {
			t.Errorf("Value produced invalid JSON %q from %q", v, in)
		}
	})
}
