package sanitize

import (
	"regexp"
	"strings"
)

// Markers written in place of what the sanitizer removes. They contain no
// digit, '@' or secret-looking text, so no rule changes a marker.
const (
	Redacted  = "[REDACTED]"
	MaskEmail = "[EMAIL]"
	MaskPhone = "[PHONE]"
	MaskCard  = "[CARD]"
	MaskSSN   = "[SSN]"
	TooDeep   = "[MAX_DEPTH]"
)

// Secret-looking values, redacted wherever they appear.
var (
	// A PEM private key block; an unterminated one (a truncated file) is
	// redacted to the end of the string.
	pemRe = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)`)
	// Vendor token formats: OpenAI/Anthropic sk-…, Stripe sk_/rk_ live/test,
	// GitHub ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_, GitLab glpat-, Slack
	// xox?-, Google AIza…, AWS access key ids (AKIA/ASIA), and JWTs.
	tokenRe = regexp.MustCompile(`\b(?:` +
		`sk-[A-Za-z0-9_-]{16,}` +
		`|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}` +
		`|gh[pousr]_[A-Za-z0-9]{30,}` +
		`|github_pat_[A-Za-z0-9_]{22,}` +
		`|glpat-[A-Za-z0-9_-]{20,}` +
		`|xox[abprs]-[A-Za-z0-9-]{10,}` +
		`|AIza[0-9A-Za-z_-]{35}` +
		`|(?:AKIA|ASIA)[0-9A-Z]{16}` +
		`|eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*` +
		`)`)
	// "Authorization: <scheme> <credentials>" as a header line, in JSON text
	// or in code; the scheme is kept for the reader.
	authHeaderRe = regexp.MustCompile(`(?i)(\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?)((?:bearer|basic|token|digest|negotiate)\s+)?([^\s"',;]+)`)
	bearerRe     = regexp.MustCompile(`(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}`)
	// Credentials in a URL: scheme://user:password@host.
	urlCredRe = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@`)
	// name=value, name: value, "name": "value" in text (query strings, env
	// lines, log lines, JSON or code held in a string). Whether the name is
	// secret is decided by isSecretKey; the value is quoted or bare.
	kvRe = regexp.MustCompile(`(?i)(^|[^a-z0-9_.\-])([a-z][a-z0-9_.\-]*)(["']?\s*[:=]\s*)("(?:[^"\\]|\\.)*"|'[^'\\]*'|[a-z0-9_.\-+/=~%!@#$^*]+)`)
)

// Names that are secret as a query parameter although too generic as a JSON
// key ("?key=…" is how several APIs take their key).
var secretParams = map[string]bool{"key": true, "sig": true, "signature": true, "x-amz-signature": true, "x-amz-credential": true}

// Personal data, masked.
var (
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`)
	// Contiguous 13–19 digits or the usual 4-4-4-x / 4-6-5 groupings;
	// checked with Luhn and an issuer prefix before masking.
	cardRe = regexp.MustCompile(`\b(?:\d{13,19}|\d{4}[ -]\d{4}[ -]\d{4}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{5})\b`)
	ssnRe  = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
	// International (+CC …, 8–15 digits) or North American (555) 123-4567 /
	// 555-123-4567 / 555.123.4567. Bare digit runs are not phones: too many
	// ids and timestamps look like one.
	intlPhoneRe = regexp.MustCompile(`(^|[^\w+])(\+\d[\d ().-]{6,22}\d)\b`)
	usPhoneRe   = regexp.MustCompile(`(?:\(\d{3}\)\s?|\b\d{3}[ .-])\d{3}[ .-]\d{4}\b`)
)

// Literal fragments without which a rule cannot match. Go's regexp costs
// tens of microseconds per kilobyte per expression, so each rule only runs on
// text that contains its fragment.
var (
	tokenHints = []string{"sk-", "sk_", "rk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "AIza", "AKIA", "ASIA", "eyJ"}
	// Every name isSecretKey or secretParams accepts contains one of these.
	kvHints = []string{"auth", "bearer", "pass", "pw", "secret", "token", "jwt", "credential", "cookie", "session", "key", "sig"}
)

// maxRulePasses bounds applyRules' search for a fixed point.
const maxRulePasses = 4

// applyRules runs the rules until the text stops changing: one rule's marker
// can expose a match to another (a mask ends a word that hid the next
// number), and a second sanitization must not find anything new.
func (s *Sanitizer) applyRules(str string) string {
	for range maxRulePasses {
		next := s.applyRulesOnce(str)
		if next == str {
			break
		}
		str = next
	}
	return str
}

// applyRulesOnce runs every string rule over s once. The order matters only
// for readability of the result: secrets first, then personal data.
func (s *Sanitizer) applyRulesOnce(str string) string {
	if str == "" {
		return str
	}
	// Invalid bytes would come back from a JSON round trip as U+FFFD anyway;
	// fixing them first keeps sanitizing idempotent.
	str = s.redactSecrets(strings.ToValidUTF8(str, "\uFFFD"))
	if strings.Contains(str, "@") {
		str = emailRe.ReplaceAllLiteralString(str, MaskEmail)
	}
	return maskNumbers(str)
}

// redactSecrets runs the rules that remove secrets (not personal data):
// whole secrets first, then name/value pairs.
func (s *Sanitizer) redactSecrets(str string) string {
	if strings.Contains(str, "PRIVATE KEY-----") {
		str = pemRe.ReplaceAllLiteralString(str, Redacted)
	}
	if s.secrets != nil {
		str = s.secrets.Replace(str)
	}
	if s.transformed != nil {
		str = s.transformed.Mask(str)
	}
	if containsAny(str, tokenHints) {
		str = tokenRe.ReplaceAllLiteralString(str, Redacted)
	}
	lower := strings.ToLower(str)
	if strings.Contains(lower, "authorization") {
		str = authHeaderRe.ReplaceAllString(str, "${1}${2}"+Redacted)
	}
	if strings.Contains(lower, "bearer") {
		str = bearerRe.ReplaceAllStringFunc(str, redactBearer)
	}
	if strings.Contains(str, "://") {
		str = urlCredRe.ReplaceAllString(str, "${1}"+Redacted+"@")
	}
	if containsAny(lower, kvHints) {
		str = redactPairs(str)
	}
	return str
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// minNumberDigits is the fewest digits of anything maskNumbers masks (an
// international phone number).
const minNumberDigits = 8

// maskNumbers masks cards, SSNs and phone numbers. It runs their expressions
// only on runs of digits and separators holding enough digits, each with one
// byte of context on both sides so \b still sees the neighbours.
func maskNumbers(str string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(str); {
		if !isNumberByte(str[i]) {
			i++
			continue
		}
		j, digits := i, 0
		for ; j < len(str) && isNumberByte(str[j]); j++ {
			if str[j] >= '0' && str[j] <= '9' {
				digits++
			}
		}
		if digits >= minNumberDigits {
			lo, hi := max(i-1, last), min(j+1, len(str))
			seg := str[lo:hi]
			if m := maskNumberRun(seg); m != seg {
				b.WriteString(str[last:lo])
				b.WriteString(m)
				last = hi
			}
		}
		i = j
	}
	if last == 0 {
		return str
	}
	b.WriteString(str[last:])
	return b.String()
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '+'
}

func maskNumberRun(seg string) string {
	seg = cardRe.ReplaceAllStringFunc(seg, maskCard)
	seg = ssnRe.ReplaceAllStringFunc(seg, maskSSN)
	seg = intlPhoneRe.ReplaceAllStringFunc(seg, maskIntlPhone)
	return usPhoneRe.ReplaceAllLiteralString(seg, MaskPhone)
}

// redactPairs redacts the values of secret-named pairs. A pair whose name is
// not secret is kept, but its value is searched again, so the value of an
// innocent name cannot hide a "token=…" inside it.
func redactPairs(str string) string {
	locs := kvRe.FindAllStringSubmatchIndex(str, -1)
	if locs == nil {
		return str
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		name, sep, value := str[m[4]:m[5]], str[m[6]:m[7]], str[m[8]:m[9]]
		b.WriteString(str[last:m[4]])
		b.WriteString(name)
		b.WriteString(sep)
		switch {
		case !isSecretKey(name) && !(strings.Contains(sep, "=") && secretParams[strings.ToLower(name)]):
			if quoted(value) {
				b.WriteString(value[:1] + redactPairs(value[1:len(value)-1]) + value[len(value)-1:])
			} else {
				b.WriteString(redactPairs(value))
			}
		case quoted(value):
			if len(value) > 2 {
				b.WriteString(value[:1] + Redacted + value[:1])
			} else {
				b.WriteString(value)
			}
		case looksSecret(value) && !(strings.Contains(value, ".") && isCodeExpr(sep, value)):
			b.WriteString(Redacted)
		default:
			b.WriteString(value)
		}
		last = m[1]
	}
	b.WriteString(str[last:])
	return b.String()
}

// redactBearer redacts "Bearer <token>" unless the word after bearer reads
// as prose ("Bearer authentication").
func redactBearer(m string) string {
	scheme := bearerRe.FindStringSubmatch(m)[1]
	if !looksSecret(m[len(scheme):]) {
		return m
	}
	return scheme + Redacted
}

func quoted(v string) bool {
	return len(v) >= 2 && (v[0] == '"' || v[0] == '\'')
}

// looksSecret tells a bare value that could be a secret from a word of prose
// or code ("token = await", "session: expired"): at least 6 characters and a
// digit, a symbol, or 20 characters.
func looksSecret(v string) bool {
	if len(v) < 6 {
		return false
	}
	return len(v) >= 20 || strings.ContainsAny(v, "0123456789+/=~%!@#$^*")
}

// isCodeExpr tells "token = mcp.auth.get" (code: spaced separator, dotted
// name, no digit) from "token=ya29.a0Af…" or "password: my.pass.123".
func isCodeExpr(sep, value string) bool {
	return strings.ContainsAny(sep, " \t") && !strings.ContainsAny(value, "0123456789")
}

func maskCard(m string) string {
	digits := onlyDigits(m)
	if len(digits) < 13 || len(digits) > 19 || !cardIssuer(digits) || !luhn(digits) {
		return m
	}
	return MaskCard
}

// cardIssuer accepts the prefixes of Visa, Mastercard, Amex, Discover, JCB,
// Diners and UnionPay; this keeps millisecond timestamps (1…) and most ids out.
func cardIssuer(d string) bool {
	switch d[0] {
	case '4', '6':
		return true
	case '5':
		return d[1] >= '1' && d[1] <= '5'
	case '2':
		return d[1] >= '2' && d[1] <= '7'
	case '3':
		return d[1] == '0' || d[1] == '4' || d[1] == '5' || d[1] == '6' || d[1] == '7' || d[1] == '8'
	}
	return false
}

func luhn(d string) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// maskSSN masks only numbers the SSA could issue: area not 000, 666 or
// 9xx, group not 00, serial not 0000.
func maskSSN(m string) string {
	area, group, serial := m[0:3], m[4:6], m[7:11]
	if area == "000" || area == "666" || area[0] == '9' || group == "00" || serial == "0000" {
		return m
	}
	return MaskSSN
}

func maskIntlPhone(m string) string {
	sub := intlPhoneRe.FindStringSubmatch(m)
	n := len(onlyDigits(sub[2]))
	if n < 8 || n > 15 {
		return m
	}
	return sub[1] + MaskPhone
}

func onlyDigits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
