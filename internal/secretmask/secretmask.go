// Package secretmask finds known secret values in text, also after the
// transforms code applies without effort: a change of case, base64 (standard
// and URL alphabets, padded or not, and inside a longer encoded string),
// hex, URL-encoding, JSON escaping, and, for values that look like tokens,
// any fragment of at least FragmentLen bytes (what split or slice leave).
//
// The base64 forms are matched at the three byte alignments, so base64 of a
// longer string holding the value (an HTTP Basic credential), and of a
// token's fragment of 6 bytes or more, is found too.
//
// What it cannot catch: a value shorter than the minimum length, a fragment
// shorter than FragmentLen or of a value that does not look like a token,
// and any other transform (a hash, encryption, reversal, compression,
// characters interleaved or substituted, an encoding applied twice).
package secretmask

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// FragmentLen is the shortest run of a token-like value that is masked on
// its own, case ignored.
const FragmentLen = 8

// DefaultMinLen is the shortest value masked: masking "1" or "dev" everywhere
// would shred text and protect nothing.
const DefaultMinLen = 8

// Set holds the values to find. It is immutable and safe for concurrent use.
type Set struct {
	marker string
	whole  *strings.Replacer   // every variant of every value, exact
	grams  map[uint64]struct{} // FragmentLen-byte windows of token-like values' variants, ASCII case folded
	bloom  *[bloomWords]uint64 // a filter in front of grams: most windows miss it
}

const bloomWords = 1 << 10 // 64K bits

// New returns the Set of values at least minLen bytes long (minLen <= 0
// means DefaultMinLen), masking with marker. Without any such value the Set
// finds nothing.
func New(values []string, minLen int, marker string) *Set {
	if minLen <= 0 {
		minLen = DefaultMinLen
	}
	s := &Set{marker: marker}
	seen := map[string]bool{}
	var whole []string
	for _, v := range values {
		if len(v) < minLen {
			continue
		}
		fragments := tokenLike(v)
		for _, x := range variants(v) {
			if len(x) >= minLen && !seen[x] {
				seen[x] = true
				whole = append(whole, x)
			}
			if fragments {
				s.addGrams(x)
			}
		}
	}
	if len(whole) > 0 {
		slices.SortFunc(whole, func(a, b string) int { return len(b) - len(a) }) // longest first
		pairs := make([]string, 0, 2*len(whole))
		for _, x := range whole {
			pairs = append(pairs, x, marker)
		}
		s.whole = strings.NewReplacer(pairs...)
	}
	return s
}

// Empty reports whether the Set finds nothing.
func (s *Set) Empty() bool { return s == nil || (s.whole == nil && s.grams == nil) }

// Mask returns str with every occurrence found replaced by the Set's marker
// (overlapping fragments merged into one marker).
func (s *Set) Mask(str string) string {
	if s.Empty() || str == "" {
		return str
	}
	if spans := s.fragmentSpans(str); len(spans) > 0 {
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			b.WriteString(str[last:sp[0]])
			b.WriteString(s.marker)
			last = sp[1]
		}
		b.WriteString(str[last:])
		str = b.String()
	}
	if s.whole != nil {
		str = s.whole.Replace(str)
	}
	return str
}

// Contains reports whether Mask would change str.
func (s *Set) Contains(str string) bool {
	return s.Mask(str) != str
}

// variants are the forms of v that code produces without effort.
func variants(v string) []string {
	b := []byte(v)
	out := []string{v, strings.ToLower(v), strings.ToUpper(v),
		hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)),
		url.QueryEscape(v), url.PathEscape(v)}
	if enc, err := json.Marshal(v); err == nil {
		out = append(out, string(enc[1:len(enc)-1]))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b))
		raw := enc.WithPadding(base64.NoPadding)
		// v inside a longer encoded string starts at one of three
		// alignments; keep the characters that only v's bytes determine.
		for pad := range 3 {
			e := raw.EncodeToString(append(make([]byte, pad), b...))
			skip := []int{0, 2, 3}[pad]
			end := 4 * ((pad + len(b)) / 3)
			if end > skip {
				out = append(out, e[skip:end])
			}
		}
	}
	return out
}

// tokenLike reports whether v looks like a generated key or token (long,
// no spaces or URL punctuation, letters and digits mixed), whose fragments
// are worth masking. A URL or a word-like value is masked whole only: its
// fragments ("localhost", "production") occur everywhere.
func tokenLike(v string) bool {
	if len(v) < 16 {
		return false
	}
	var letter, digit bool
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			letter = true
		case c >= '0' && c <= '9':
			digit = true
		case strings.IndexByte("_-+/=.~", c) >= 0:
		default:
			return false
		}
	}
	return letter && digit
}

func fold(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func bloomIndex(k uint64) (int, uint64) {
	h := (k * 0x9E3779B97F4A7C15) >> 48
	return int(h >> 6), 1 << (h & 63)
}

func (s *Set) addGrams(x string) {
	if len(x) < FragmentLen {
		return
	}
	if s.grams == nil {
		s.grams, s.bloom = map[uint64]struct{}{}, new([bloomWords]uint64)
	}
	var k uint64
	for i := 0; i < len(x); i++ {
		k = k<<8 | uint64(fold(x[i]))
		if i >= FragmentLen-1 {
			s.grams[k] = struct{}{}
			w, bit := bloomIndex(k)
			s.bloom[w] |= bit
		}
	}
}

// fragmentSpans are the merged byte ranges of str covered by windows found
// in grams, widened to whole UTF-8 characters.
func (s *Set) fragmentSpans(str string) [][2]int {
	if s.grams == nil || len(str) < FragmentLen {
		return nil
	}
	var spans [][2]int
	var k uint64
	for i := 0; i < len(str); i++ {
		k = k<<8 | uint64(fold(str[i]))
		if i < FragmentLen-1 {
			continue
		}
		if w, bit := bloomIndex(k); s.bloom[w]&bit == 0 {
			continue
		}
		if _, ok := s.grams[k]; !ok {
			continue
		}
		lo, hi := i-FragmentLen+1, i+1
		if n := len(spans); n > 0 && lo <= spans[n-1][1] {
			spans[n-1][1] = hi
			continue
		}
		spans = append(spans, [2]int{lo, hi})
	}
	for i := range spans {
		for spans[i][0] > 0 && !utf8.RuneStart(str[spans[i][0]]) {
			spans[i][0]--
		}
		for spans[i][1] < len(str) && !utf8.RuneStart(str[spans[i][1]]) {
			spans[i][1]++
		}
	}
	return spans
}
