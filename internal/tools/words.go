package tools

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// eachWord calls fn with each lower-case word of text, split on
// non-alphanumerics and camelCase boundaries. A run of a script written
// without spaces between words (Chinese, Japanese, Korean, Thai, …) gives
// its character bigrams (a lone character itself), so a description in
// Chinese is found by the words of a query in Chinese.
func eachWord(text string, fn func(string)) {
	start := -1
	var prev rune
	// run holds the byte offsets of the characters of the current run of
	// an unspaced script, and its end.
	var run []int
	flush := func(end int) {
		switch len(run) {
		case 0:
			return
		case 1:
			fn(text[run[0]:end])
		default:
			for k := 0; k+1 < len(run); k++ {
				stop := end
				if k+2 < len(run) {
					stop = run[k+2]
				}
				fn(text[run[k]:stop])
			}
		}
		run = run[:0]
	}
	for i, r := range text {
		ascii := r < utf8.RuneSelf
		if !ascii && unspaced(r) {
			if start >= 0 {
				fn(strings.ToLower(text[start:i]))
				start = -1
			}
			run = append(run, i)
			prev = r
			continue
		}
		if len(run) > 0 {
			flush(i)
		}
		var word, upper bool
		if ascii {
			// Most of every text ranked: the same rules without the
			// Unicode tables.
			upper = 'A' <= r && r <= 'Z'
			word = upper || 'a' <= r && r <= 'z' || '0' <= r && r <= '9'
		} else {
			word = unicode.IsLetter(r) || unicode.IsDigit(r) || (start >= 0 && unicode.IsMark(r))
			upper = unicode.IsUpper(r)
		}
		switch {
		case word && start >= 0 && upper && unicode.IsLower(prev):
			fn(strings.ToLower(text[start:i]))
			start = i
		case word && start < 0:
			start = i
		case !word && start >= 0:
			fn(strings.ToLower(text[start:i]))
			start = -1
		}
		prev = r
	}
	flush(len(text))
	if start >= 0 {
		fn(strings.ToLower(text[start:]))
	}
}

// unspaced reports whether r is a letter of a script that does not put
// spaces between words.
func unspaced(r rune) bool {
	return r >= 0x0E00 && (r >= 0x3040 && r <= 0x30FF || // kana, with the prolonged sound mark
		unicode.In(r, unicode.Han, unicode.Hangul, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar))
}

// fieldWords are the words of one whitespace-separated field of a query:
// a URL stands for "url" and its host's names, a file name or path for
// "file" and what its extension says (fileKinds), not for its directory and
// base names, which are the user's, not a tool's; anything else is its own
// words.
func fieldWords(field string) (own, implied []string) {
	f := strings.Trim(field, "\"'`()[]{}<>,;:!?")
	f = strings.TrimRight(f, ".")
	if scheme, rest, ok := strings.Cut(f, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, "/.") {
		host, _, _ := strings.Cut(rest, "/")
		labels := strings.Split(host, ".")
		for i, l := range labels {
			if i == len(labels)-1 && len(labels) > 1 || l == "www" {
				continue // the top-level domain, www
			}
			eachWord(l, func(w string) { own = append(own, w) })
		}
		return own, []string{"url"}
	}
	if ext, ok := fileExtension(f); ok {
		return nil, append([]string{"file"}, fileKinds[ext]...)
	}
	eachWord(f, func(w string) { own = append(own, w) })
	if len(own) == 1 && wellKnownFiles[own[0]] {
		return own, []string{"file"}
	}
	return own, nil
}

// wellKnownFiles are file names a user says without their extension.
var wellKnownFiles = map[string]bool{"readme": true, "changelog": true, "license": true, "makefile": true, "dockerfile": true}

// fileExtension returns the extension of f when f names a file: it ends
// in a known extension (fileKinds) after a name.
func fileExtension(f string) (string, bool) {
	dot := strings.LastIndexByte(f, '.')
	if dot <= 0 || dot == len(f)-1 {
		return "", false
	}
	ext := strings.ToLower(f[dot+1:])
	if _, ok := fileKinds[ext]; !ok {
		return "", false
	}
	return ext, true
}

// fileKinds maps a file extension to the words tools use for that kind of
// file: the generic needs of reading and writing files, spreadsheets and
// documents (README "Discover").
var fileKinds = map[string][]string{
	"md": {"markdown"}, "markdown": {"markdown"}, "txt": {"text"}, "log": {"log"},
	"csv": {"csv"}, "tsv": {"csv"}, "xlsx": {"excel", "spreadsheet"}, "xls": {"excel", "spreadsheet"},
	"json": {"json"}, "yaml": {"yaml"}, "yml": {"yaml"}, "xml": {"xml"}, "toml": nil, "ini": nil,
	"pdf": {"pdf"}, "docx": {"document"}, "doc": {"document"}, "pptx": {"presentation"}, "html": {"html"},
	"png": {"image"}, "jpg": {"image"}, "jpeg": {"image"}, "gif": {"image"}, "svg": {"image"}, "webp": {"image"},
	"zip": {"archive"}, "gz": {"archive"}, "tar": {"archive"}, "mp3": {"audio"}, "wav": {"audio"}, "mp4": {"video"},
	"go": {"code"}, "py": {"code"}, "js": {"code"}, "ts": {"code"}, "tsx": {"code"}, "jsx": {"code"},
	"java": {"code"}, "rs": {"code"}, "rb": {"code"}, "c": {"code"}, "cpp": {"code"}, "sh": {"script"}, "sql": {"sql"},
}

// Needs splits a task-sized query into the needs it states, so that
// discover gives each its share of the top hits (docs/how-it-works.md
// "Discover and the tool graph"): sentences, clauses after a semicolon, a
// comma or a colon, and the parts an "and", "then" or "also" joins when a
// verb follows it ("read the file and post it"; not "issues and pull
// requests"). A clause after a comma or colon states a need of its own only
// when it starts with a verb ("read the file, summarize it"); else it goes
// on with the clause before it (a list: "lifecycle emissions, land use,
// etc."), where each item, a need of its own, would take a turn in the top
// hits. A part with no word but stop words is dropped; past MaxNeeds
// parts, the rest join the last. A query of one need is itself.
func Needs(query string) []string {
	q := clip(query, maxQueryBytes)
	var parts []string
	for _, sentence := range splitSentences(q) {
		parts = append(parts, splitClauses(sentence)...)
	}
	var needs []string
	for _, p := range parts {
		own, implied := queryWords(p)
		if !hasContent(own) && len(implied) == 0 {
			continue
		}
		needs = append(needs, strings.TrimSpace(p))
		if file := passingFile(p); file != "" {
			needs = append(needs, file)
		}
	}
	if len(needs) > MaxNeeds {
		needs = append(needs[:MaxNeeds-1], strings.Join(needs[MaxNeeds-1:], ", "))
	}
	if len(needs) <= 1 {
		return []string{query}
	}
	return needs
}

// passingFile is the generic need a file named in passing states ("email
// the notes from notes/may.md": read the file; "post the summary and keep
// it in summary.md": write it): "read file" or "write file" and what its
// extension says, by the word before the name, unless the part already
// starts with a verb of files, which makes it that need itself.
func passingFile(part string) string {
	fields := strings.Fields(part)
	if len(fields) == 0 || fileVerbs[strings.ToLower(fields[0])] {
		return ""
	}
	for i, f := range fields {
		f = strings.TrimRight(strings.Trim(f, "\"'`()[]{}<>,;:!?"), ".")
		ext, ok := fileExtension(f)
		if !ok || i == 0 {
			continue
		}
		verb := ""
		switch strings.ToLower(fields[i-1]) {
		case "from", "at", "in", "of":
			verb = "read"
		case "to", "as", "into":
			verb = "write"
		default:
			continue
		}
		return strings.Join(append([]string{verb, "file"}, fileKinds[ext]...), " ")
	}
	return ""
}

// fileVerbs are verbs a step that reads or writes a file starts with.
var fileVerbs = map[string]bool{"read": true, "open": true, "load": true, "save": true, "write": true, "store": true,
	"append": true, "edit": true, "create": true, "export": true, "import": true, "put": true, "keep": true}

// hasContent reports whether words has one that is not a stop word.
func hasContent(words []string) bool {
	for _, w := range words {
		if !isStopWord(w) {
			return true
		}
	}
	return false
}

// splitSentences splits q after sentence punctuation followed by a space
// (a dot inside a file name or version does not end a sentence), and at
// line breaks and CJK sentence and clause punctuation.
func splitSentences(q string) []string {
	var out []string
	// A clause after a comma or colon that starts with no verb goes on
	// with the part before it (Needs): that part then starts at from.
	start, from := 0, 0
	add := func(end int) {
		if len(out) > 0 && (q[start-1] == ',' || q[start-1] == ':') && !startsWithVerb(q[start:end]) {
			out[len(out)-1] = q[from:end]
			return
		}
		out, from = append(out, q[start:end]), start
	}
	for i, r := range q {
		end := -1
		switch r {
		case '\n', '。', '；', '！', '？', '，', '、':
			end = i
		case '.', ';', '!', '?', ':', ',':
			if next := i + 1; next == len(q) || q[next] == ' ' || q[next] == '\t' {
				end = i
			}
		}
		if end >= 0 {
			add(end)
			start = end + len(string(r))
		}
	}
	add(len(q))
	return out
}

// startsWithVerb reports whether part's first word, after joiners and list
// marks ("- ", "* "), is one of verbs.
func startsWithVerb(part string) bool {
	for w := range strings.FieldsSeq(part) {
		w = strings.ToLower(strings.Trim(w, "-*•"))
		if w != "" && !joiner[w] {
			return verbs[w]
		}
	}
	return false
}

// splitClauses splits a sentence at "and", "then", "also", … (joiner)
// when a verb follows it (possibly after another of them) that starts a
// step: what follows the verb is a stop word ("post the summary", "push
// it"), a name, or nothing; not a plain word, as in "issues and pull
// requests". A joiner that starts the sentence is dropped.
func splitClauses(s string) []string {
	words := strings.Fields(s)
	for len(words) > 0 && joiner[strings.ToLower(words[0])] {
		words = words[1:]
	}
	var out []string
	var cur []string
	for i := 0; i < len(words); i++ {
		w := strings.ToLower(words[i])
		if joiner[w] && len(cur) > 0 {
			k := i + 1
			for k < len(words) && joiner[strings.ToLower(words[k])] {
				k++
			}
			if k < len(words) && verbs[strings.ToLower(words[k])] && startsStep(words[k+1:]) {
				out = append(out, strings.Join(cur, " "))
				cur = nil
				i = k - 1
				continue
			}
		}
		cur = append(cur, words[i])
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

// startsStep reports whether rest, the words after a verb, make it start
// a step: none, or a first one that is a stop word or not a plain
// lower-case word (a name, a number, a path, a quote).
func startsStep(rest []string) bool {
	if len(rest) == 0 {
		return true
	}
	w := rest[0]
	r, _ := utf8.DecodeRuneInString(w)
	return isStopWord(strings.ToLower(w)) || !unicode.IsLower(r) || strings.ContainsAny(w, "./#@")
}

// joiner are the words that join two steps of a task.
var joiner = map[string]bool{"and": true, "then": true, "also": true, "afterwards": true, "finally": true, "next": true}

// verbs are common English verbs of the imperative a user states a step
// with; a joiner followed by one starts a need.
var verbs = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range strings.Fields(`add append analyze analyse answer apply approve archive ask assign attach book build
		calculate call cancel change check clean clear click clone close comment commit compare compile compute
		configure convert copy count crawl create delete deploy describe detect download draft draw drop edit email
		export extract fetch fill filter find fix follow fork format generate get give grab import insert install
		invite keep label leave let link list load log look make mark mention merge message move notify open order
		parse pick plot post prepare print publish pull push put query read rebase record reply remind remember
		remove rename render reopen report rerun research reset resize restart restore resolve retrieve return
		review revert roll run save scale schedule scrape search send set share show sort split squash stage start
		stop store submit summarize summarise switch sync tag take tell test text track translate turn update
		upload use validate verify visualize wait watch write`) {
		m[v] = true
	}
	return m
}()
