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
	return personalRule(text, out)
}

// FlagPersonal names the first personal-data rule text breaks, as Flag
// does, without the secret rules: for a string built from parts, whose
// parts that are not constant are written as a placeholder (analysis.Folded),
// where a placeholder after "Bearer " would read as a credential while one
// before "@corp.example" is what makes an address of it.
func (s *Sanitizer) FlagPersonal(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	out := text
	if strings.Contains(out, "@") {
		out = emailRe.ReplaceAllLiteralString(out, MaskEmail)
	}
	if out = maskNumbers(out); out == text {
		return ""
	}
	return personalRule(text, out)
}

// personalRule names the personal-data rule whose marker out, the
// sanitized text, has more of than text.
func personalRule(text, out string) string {
	for _, m := range []struct{ mark, rule string }{
		{MaskEmail, "an e-mail address"}, {MaskCard, "a card number"}, {MaskSSN, "a social security number"}, {MaskPhone, "a phone number"},
	} {
		if strings.Count(out, m.mark) > strings.Count(text, m.mark) {
			return m.rule
		}
	}
	return "personal data"
}
