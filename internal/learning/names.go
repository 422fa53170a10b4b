package learning

import (
	"strings"

	"github.com/pml-go/pml/internal/registry"
	"github.com/pml-go/pml/internal/tools"
)

// stopWords are left out of a name made from an intent: "Count the items
// in a JSON file" is count_items_json_file, shorter to call and as clear.
// Fillers that say nothing of what the code does go too.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "in": true, "on": true, "at": true, "to": true,
	"for": true, "and": true, "or": true, "with": true, "from": true, "into": true, "by": true,
	"it": true, "its": true, "as": true, "each": true, "every": true, "all": true, "per": true,
	"this": true, "that": true, "these": true, "those": true, "some": true, "my": true, "our": true,
	"your": true, "their": true, "then": true, "please": true, "using": true, "given": true,
	"chosen": true, "whole": true, "one": true, "two": true, "up": true, "give": true, "get": true,
	"is": true, "are": true, "be": true, "which": true, "what": true, "how": true, "them": true,
}

// maxNameWords bounds the words of a name made from an intent: a name an
// AI reads and writes in code stays short.
const maxNameWords = 4

// maxNameVerbs bounds the verbs a generated name strings together.
const maxNameVerbs = 3

// actionFor names a new capability (docs/how-it-works.md "Learned
// capabilities"): its intent in snake case less its stop words, or, without one, what its tools
// do: the first word of each tool's action, then what the last one works
// on ("filesystem:read_file" then "json:parse" is read_parse_json). The
// shape hash only names code whose tools give no word.
func actionFor(intent, shapeHash string, used []string) string {
	if strings.TrimSpace(intent) != "" {
		var kept []string
		for _, w := range nameWords(intent) {
			switch {
			case len(kept) > 0 && strings.Trim(w, "0123456789") == "":
				// A number belongs to the word before it: SHA-256 is sha256.
				kept[len(kept)-1] += w
			// One letter is no word: "customer's" is customer.
			case !stopWords[w] && len(w) > 1 && !contains(kept, w) && len(kept) < maxNameWords:
				kept = append(kept, w)
			}
		}
		if len(kept) == 0 {
			return registry.DefaultAction(intent, shapeHash)
		}
		return registry.DefaultAction(strings.Join(kept, " "), shapeHash)
	}
	var words []string
	add := func(w string) {
		if w != "" && !contains(words, w) {
			words = append(words, w)
		}
	}
	for _, id := range used {
		if len(words) == maxNameVerbs {
			break
		}
		_, action := tools.Split(id)
		if parts := nameWords(action); len(parts) > 0 {
			add(parts[0])
		}
	}
	if len(used) > 0 {
		ns, action := tools.Split(used[len(used)-1])
		parts := nameWords(action)
		switch {
		case len(parts) > 1:
			add(parts[len(parts)-1])
		case ns != "":
			add(strings.Join(nameWords(ns), "_"))
		}
	}
	return registry.DefaultAction(strings.Join(words, " "), shapeHash)
}

// nameWords splits an identifier into lower-case words on non-alphanumerics
// and camelCase boundaries.
func nameWords(s string) []string {
	var words []string
	var cur strings.Builder
	var prev rune
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			if prev >= 'a' && prev <= 'z' {
				flush()
			}
			cur.WriteRune(r + ('a' - 'A'))
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			cur.WriteRune(r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return words
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
