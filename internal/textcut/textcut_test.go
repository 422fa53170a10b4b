package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrefix(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abc", 10, "abc"},
		{"abcdef", 3, "abc"},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"é", 1, ""},              // 2-byte rune: never half of it
		{"aé", 2, "a"},            // the cut lands inside é
		{"aé", 3, "aé"},           // exactly fits
		{"a€b", 3, "a"},           // 3-byte rune cut after its first 2 bytes
		{"a€b", 4, "a€"},          // whole rune kept
		{"😀😀", 5, "😀"},            // 4-byte runes
		{"😀😀", 3, ""},             // nothing fits
		{"\xff\xfeab", 1, "\xff"}, // invalid bytes are their own runes: cut anywhere
	} {
		if got := Prefix(tc.s, tc.n); got != tc.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestPrefixKeepsValidUTF8 cuts a mixed text at every length: each cut is
// valid UTF-8, within budget, and loses less than one character.
func TestPrefixKeepsValidUTF8(t *testing.T) {
	s := strings.Repeat("aé€😀", 8)
	for n := 0; n <= len(s)+1; n++ {
		got := Prefix(s, n)
		if !utf8.ValidString(got) || len(got) > n || !strings.HasPrefix(s, got) {
			t.Fatalf("Prefix(_, %d) = %q", n, got)
		}
		if n <= len(s) && n-len(got) >= utf8.UTFMax {
			t.Fatalf("Prefix(_, %d) dropped %d bytes", n, n-len(got))
		}
	}
}

func TestWordsCutsAtAWord(t *testing.T) {
	if got := Words("count the words of each file", 14); got != "count the" {
		t.Fatalf("Words = %q", got)
	}
	if got := Words("short", 14); got != "short" {
		t.Fatalf("Words = %q", got)
	}
	if got := Words("abcdefghijklmnopqrstuvwxyz", 10); got != "abcdefghij" {
		t.Fatalf("Words = %q", got)
	}
}
