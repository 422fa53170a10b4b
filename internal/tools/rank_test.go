package tools

import (
	"slices"
	"testing"
)

var rankInfos = []Info{
	{ID: "filesystem:read_file", Description: "Read the content of a file as text."},
	{ID: "filesystem:write_file", Description: "Write text to a file, creating parent directories."},
	{ID: "filesystem:list_directory", Description: "List the entries of a directory."},
	{ID: "json:parse", Description: "Parse a JSON string into a value."},
	{ID: "json:stringify", Description: "Serialize a value to a JSON string."},
	{ID: "crypto:sha256", Description: "SHA-256 hash of a string, hex encoded."},
	{ID: "crypto:hash", Description: "Hash a string with md5, sha1, sha256 or sha512."},
	{ID: "string:upper", Description: "Convert text to upper case."},
}

func ids(infos []Info) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.ID
	}
	return out
}

func TestRank(t *testing.T) {
	cases := []struct {
		query string
		limit int
		first []string // expected prefix of the result
		none  []string // ids that must not appear
	}{
		{"read file", 0, []string{"filesystem:read_file"}, []string{"json:parse"}},
		{"reading files", 1, []string{"filesystem:read_file"}, nil},
		{"json:stringify", 0, []string{"json:stringify"}, nil},
		{"JSON", 2, []string{"json:parse", "json:stringify"}, nil},
		{"directories", 0, []string{"filesystem:list_directory"}, nil},
		{"listDirectory", 1, []string{"filesystem:list_directory"}, nil},
		{"sha256", 0, []string{"crypto:sha256", "crypto:hash"}, []string{"string:upper"}},
		{"hashing", 0, []string{"crypto:hash"}, nil},
		{"zebra", 0, nil, ids(rankInfos)},
	}
	for _, c := range cases {
		got := ids(Rank(c.query, rankInfos, c.limit))
		if len(got) < len(c.first) || !slices.Equal(got[:len(c.first)], c.first) {
			t.Errorf("Rank(%q) = %v, want it to start with %v", c.query, got, c.first)
		}
		if c.limit > 0 && len(got) > c.limit {
			t.Errorf("Rank(%q, limit %d) returned %d tools", c.query, c.limit, len(got))
		}
		for _, n := range c.none {
			if slices.Contains(got, n) {
				t.Errorf("Rank(%q) = %v, must not contain %s", c.query, got, n)
			}
		}
	}
}

func TestRankEmptyQueryReturnsAllSortedByID(t *testing.T) {
	got := ids(Rank("  ", rankInfos, 0))
	want := ids(rankInfos)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("Rank(\"\") = %v, want %v", got, want)
	}
	if got := Rank("", rankInfos, 3); len(got) != 3 {
		t.Fatalf("Rank(\"\", limit 3) returned %d tools", len(got))
	}
}

func TestTokenize(t *testing.T) {
	got := tokenize("readFile list_directories JSON:parse")
	want := []string{"read", "file", "list", "directori", "json", "pars"} // Porter2 stems
	if !slices.Equal(got, want) {
		t.Fatalf("tokenize = %v, want %v", got, want)
	}
}

// A query in other words than the tools' finds them through stems, stop
// words and synonyms; a tool using the query's own word ranks above one
// found through a synonym; a query of stop words only still ranks.
func TestRankParaphrases(t *testing.T) {
	infos := []Info{
		{ID: "git:git_status", Description: "Show the working tree status including staged, unstaged, and untracked files."},
		{ID: "git:git_commit", Description: "Create a new commit with staged changes in the repository."},
		{ID: "filesystem:create_directory", Description: "Create a new directory or ensure a directory exists."},
		{ID: "filesystem:read_file", Description: "Read the complete contents of a file as text."},
		{ID: "notes:folder", Description: "Tag a note with a folder."},
	}
	cases := []struct {
		query, want string
		within      int // the want tool's rank at worst
	}{
		// "commit" names git_commit outright; the status tool comes next.
		{"which files changed and are not committed yet", "git:git_status", 2},
		{"make a new folder", "filesystem:create_directory", 1},
		{"open a file", "filesystem:read_file", 1},
		{"folder", "notes:folder", 1},
	}
	for _, c := range cases {
		if got := ids(Rank(c.query, infos, c.within)); !slices.Contains(got, c.want) {
			t.Errorf("Rank(%q) = %v, want %s in the first %d", c.query, got, c.want, c.within)
		}
	}
	if got := Rank("the", infos, 0); len(got) == 0 {
		t.Error("Rank(the) found nothing, want the tools that use the word")
	}
	if got := ids(Rank("folder", infos, 0)); !slices.Contains(got, "filesystem:create_directory") {
		t.Errorf("Rank(folder) = %v, want the directory tool through its synonym", got)
	}
}

// Direct is a tool's score by what it says of itself: its learned words
// lift Score, not Direct, and a tool that learned none scores the same
// both ways.
func TestDirectLeavesLearnedWordsOut(t *testing.T) {
	infos := []Info{
		{ID: "weather:get_forecast", Description: "Get the weather forecast for a city."},
		{ID: "stocks:get_history", Description: "Get the price history of a stock.", Learned: "historical prices chart nvda "},
	}
	hits := Score("historical prices of NVDA, and the weather forecast", infos)
	by := map[string]Scored{}
	for _, h := range hits {
		by[h.Info.ID] = h
	}
	h := by["stocks:get_history"]
	if h.Score <= h.Direct || h.Direct <= 0 {
		t.Fatalf("a tool whose learned words match: Score %.3f, Direct %.3f; want Score above a positive Direct", h.Score, h.Direct)
	}
	if h := by["weather:get_forecast"]; h.Score <= 0 || h.Direct != h.Score {
		t.Fatalf("a tool without learned words: Score %.3f, Direct %.3f", h.Score, h.Direct)
	}
}
