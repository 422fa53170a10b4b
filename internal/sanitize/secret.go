package sanitize

import "strings"

// HasSecret reports whether text holds a secret by the rules that redact
// secrets from traces: vendor keys, JWTs, PEM private keys, Authorization and
// Bearer credentials, URL passwords, secret-named name=value pairs, and the
// secret values the sanitizer was given. Personal data (e-mails, phone and
// card numbers) does not count. Text is judged whole, whatever its size.
func (s *Sanitizer) HasSecret(text string) bool {
	text = strings.ToValidUTF8(text, "\uFFFD")
	return s.redactSecrets(text) != text
}

// Flag names the first rule of the sanitizer that text breaks: "a
// secret" (HasSecret's rules), "an e-mail address", "a phone number", "a card
// number" or "a social security number"; "" when none does. Shared
// capabilities are checked with it before another project may see them
// (docs/security.md "Tenants and names").
func (s *Sanitizer) Flag(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if s.redactSecrets(text) != text {
		return "a secret"
	}
	out := s.applyRules(text)
	if out == text {
		return ""
	}
	for _, m := range []struct{ mark, rule string }{
		{MaskEmail, "an e-mail address"}, {MaskCard, "a card number"}, {MaskSSN, "a social security number"}, {MaskPhone, "a phone number"},
	} {
		if strings.Count(out, m.mark) > strings.Count(text, m.mark) {
			return m.rule
		}
	}
	return "personal data"
}
