package tools

// synonyms maps the stem of a word an AI client may use for what a tool
// does to the words tools use for it ("folder" to "directory"), so discover
// finds a tool described in other words than the query's. Ranking weighs
// such a match below one of the query's own words (synonymWeight). Keys and
// values are words; both are compared by their stems (synonymsByStem).
//
// The table is small on purpose: it covers the everyday verbs and nouns of
// files, version control, shells, memory and data tools, as measured over
// test/e2e/testdata/discover_queries.json (README "Discover").
var synonyms = map[string][]string{
	"folder":      {"directory"},
	"dir":         {"directory"},
	"make":        {"create"},
	"new":         {"create"},
	"add":         {"create"},
	"open":        {"read", "create"},
	"load":        {"read"},
	"get":         {"read"},
	"view":        {"read", "show"},
	"look":        {"search", "read"},
	"find":        {"search"},
	"lookup":      {"search"},
	"several":     {"multiple"},
	"many":        {"multiple"},
	"batch":       {"chunk", "multiple"},
	"remember":    {"memory", "entity", "observation", "create"},
	"store":       {"memory", "entity", "observation"},
	"save":        {"write", "memory"},
	"recall":      {"memory", "search"},
	"person":      {"entity"},
	"people":      {"entity"},
	"thing":       {"entity"},
	"fact":        {"observation"},
	"forget":      {"delete"},
	"remove":      {"delete"},
	"erase":       {"delete"},
	"link":        {"relation"},
	"connect":     {"relation"},
	"dump":        {"read", "entire"},
	"undo":        {"reset", "revert"},
	"revert":      {"reset"},
	"aside":       {"stash"},
	"shelve":      {"stash"},
	"later":       {"stash"},
	"uncommitted": {"status", "unstaged", "staged"},
	"change":      {"status", "diff", "modified"},
	"modified":    {"status", "diff"},
	"history":     {"log"},
	"upload":      {"push"},
	"publish":     {"push"},
	"download":    {"pull", "fetch"},
	"latest":      {"pull", "fetch"},
	"update":      {"pull", "fetch"},
	"combine":     {"merge"},
	"integrate":   {"merge"},
	"copy":        {"clone"},
	"switch":      {"checkout"},
	"blame":       {"authorship"},
	"edit":        {"modified", "edit"},
	"execute":     {"run", "exec", "command"},
	"launch":      {"run", "exec", "command"},
	"terminal":    {"shell", "command", "exec"},
	"script":      {"shell", "command"},
	"npm":         {"command"},
	"unique":      {"uuid"},
	"random":      {"uuid"},
	"id":          {"uuid"},
	"sign":        {"hmac"},
	"signature":   {"hmac"},
	"checksum":    {"hash", "sha256"},
	"fingerprint": {"hash"},
	"average":     {"mean"},
	"total":       {"sum"},
	"duplicate":   {"unique"},
	"deduplicate": {"unique"},
	"categorize":  {"group"},
	"order":       {"sort"},
	"word":        {"split"},
	"uppercase":   {"upper"},
	"lowercase":   {"lower"},
	"capitalize":  {"upper"},
	"escape":      {"encode", "url"},
	"environment": {"env"},
	"variable":    {"env"},
	"compress":    {"gzip"},
	"zip":         {"gzip"},
	"time":        {"now", "datetime"},
	"today":       {"now", "date"},
	"timestamp":   {"datetime", "time"},
	"day":         {"diff", "date"},
	"size":        {"info", "sizes"},
	"big":         {"sizes", "info"},
	"metadata":    {"info"},
	"tree":        {"directory_tree"},
	"structure":   {"tree"},
	"text":        {"string"},
	"object":      {"json"},
	"field":       {"key", "query"},
	"nest":        {"query", "path"},
	"record":      {"items"},
	"list":        {"items", "array"},
	"number":      {"math"},
	"image":       {"media"},
	"picture":     {"media", "image"},
	// The generic needs of files, spreadsheets, documents and web pages
	// (README "Discover"): the words tools use for them.
	"spreadsheet": {"sheet", "excel"},
	"workbook":    {"sheet", "excel"},
	"row":         {"record"},
	"webpage":     {"url", "page"},
	"website":     {"url", "site"},
	"site":        {"url", "website"},
	"report":      {"file"},
	"document":    {"file"},
	// Messages and tasks, as chat, mail and to-do tools word them.
	"post":     {"send"},
	"send":     {"post"},
	"answer":   {"reply"},
	"reminder": {"task"},
	"remind":   {"task"},
	"todo":     {"task"},
}

// synonymsByStem is synonyms keyed by the stems of its words, as queries
// are looked up; built once, never changed.
var synonymsByStem = func() map[string][]string {
	out := make(map[string][]string, len(synonyms))
	for w, syns := range synonyms {
		out[stem(w)] = append(out[stem(w)], syns...)
	}
	return out
}()
