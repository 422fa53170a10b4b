package tracing

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
