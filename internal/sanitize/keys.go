package sanitize

import (
	"strings"
	"unicode"
)

// A key is secret when one of its words (split on separators and camelCase)
// is one of secretWords, ends with one of secretSuffixes (for run-together
// lowercase keys such as "accesstoken"), or two adjacent words join into one
// of secretPairs. Words are matched whole, so "author", "authority",
// "tokenizer" and the LLM counter "max_tokens" are not secrets; "auth" is.
var secretWords = map[string]bool{
	"auth": true, "oauth": true, "authorization": true, "bearer": true,
	"password": true, "passwords": true, "passwd": true, "pwd": true, "pw": true, "passphrase": true,
	"secret": true, "secrets": true, "token": true, "jwt": true,
	"credential": true, "credentials": true, "cookie": true, "cookies": true,
	"session": true, "sessionid": true, "apikey": true, "apikeys": true,
}

var secretSuffixes = []string{
	"token", "secret", "password", "passwd", "apikey", "privatekey", "accesskey",
	"secretkey", "sessionid", "credential", "credentials", "cookie",
}

var secretPairs = map[string]bool{
	"apikey": true, "privatekey": true, "accesskey": true, "secretkey": true,
	"signingkey": true, "encryptionkey": true, "masterkey": true,
}

// metaWords, as the last word of a key, name something about a secret rather
// than the secret itself: "token_type", "token_count", "password_file",
// "auth_url", "session_ttl".
var metaWords = map[string]bool{
	"count": true, "counts": true, "type": true, "kind": true, "limit": true,
	"length": true, "len": true, "size": true, "ttl": true, "expires": true,
	"expiry": true, "expiration": true, "in": true, "at": true, "url": true,
	"uri": true, "endpoint": true, "name": true, "file": true, "path": true,
	"required": true, "enabled": true, "mode": true, "method": true,
	"provider": true, "scheme": true,
}

// isSecretKey reports whether the value under key must be redacted.
func isSecretKey(key string) bool {
	words := keyWords(key)
	if len(words) == 0 || (len(words) > 1 && metaWords[words[len(words)-1]]) {
		return false
	}
	for i, w := range words {
		if secretWords[w] {
			return true
		}
		if i+1 < len(words) && secretPairs[w+words[i+1]] {
			return true
		}
		for _, suf := range secretSuffixes {
			if strings.HasSuffix(w, suf) {
				return true
			}
		}
	}
	return false
}

// keyWords splits a key into lowercase words: on every non-alphanumeric rune,
// at lower→upper ("apiKey") and at the end of an acronym ("APIKey").
func keyWords(key string) []string {
	var words []string
	rs := []rune(key)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(rs))
	return words
}
