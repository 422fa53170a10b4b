package tools

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNeeds(t *testing.T) {
	cases := []struct {
		query string
		want  []string
	}{
		{"read a file", []string{"read a file"}},
		// "and" before a verb starts a step; before a noun it does not.
		{"Find the open issues and pull requests, summarize them and post the summary to Slack.",
			[]string{"Find the open issues and pull requests", "summarize them", "post the summary to Slack"}},
		{"Clone the repo, then create a branch. Push it!", []string{"Clone the repo", "create a branch", "Push it"}},
		// A file named in passing is a need of its own: read from, write to.
		{"Send Ana the notes from notes/may.md", []string{"Send Ana the notes from notes/may.md", "read file markdown"}},
		{"Chart the revenue and put the chart into report.xlsx",
			[]string{"Chart the revenue", "put the chart into report.xlsx"}},
		{"Post the totals to Slack as totals.csv", []string{"Post the totals to Slack as totals.csv", "write file csv"}},
		// Clauses of stop words only are no needs; a version's dots end no sentence.
		{"Tag v2.1.0 and then push it. And so on.", []string{"Tag v2.1.0", "push it"}},
		{"用高德地图查一下驾车路线，再看看明天的天气。", []string{"用高德地图查一下驾车路线", "再看看明天的天气"}},
		// After a comma or colon, a clause that starts with no verb goes on
		// with the one before (a list), and one of manners alone is none.
		{"Compare solar and wind on lifecycle emissions, land use, etc. Could you: - Give me a short summary, - pull out five facts.",
			[]string{"Compare solar and wind on lifecycle emissions, land use, etc", "- Give me a short summary", "- pull out five facts"}},
		{"Hey, please list my repos: the public ones, with stars", []string{"Hey, please list my repos: the public ones, with stars"}},
	}
	for _, c := range cases {
		if got := Needs(c.query); !slices.Equal(got, c.want) {
			t.Errorf("Needs(%q) = %q, want %q", c.query, got, c.want)
		}
	}
	many := strings.Repeat("read the file, ", 50)
	if got := Needs(many); len(got) != MaxNeeds {
		t.Errorf("Needs of 50 steps: %d needs, want %d", len(got), MaxNeeds)
	}
}

func TestEachWordScripts(t *testing.T) {
	var got []string
	eachWord("readFile 查询天气 Москва, 東京タワー x", func(w string) { got = append(got, w) })
	want := []string{"read", "file", "查询", "询天", "天气", "москва", "東京", "京タ", "タワ", "ワー", "x"}
	if !slices.Equal(got, want) {
		t.Fatalf("eachWord = %q, want %q", got, want)
	}
}

// A description in Chinese is found by a query in Chinese; a query in
// English needs an English word of the tool's or its server's.
func TestRankOtherScripts(t *testing.T) {
	infos := []Info{
		{ID: "amap:maps_weather", Description: "根据城市名称或者标准adcode查询指定城市的天气", Server: "mcp-server/amap-maps"},
		{ID: "amap:maps_direction_driving", Description: "驾车路径规划 API 可以根据用户起终点经纬度坐标规划以小客车、轿车通勤出行的方案", Server: "mcp-server/amap-maps"},
		{ID: "weather:get_forecast", Description: "Get future weather forecast for a location."},
		{ID: "files:read", Description: "Read a file."},
	}
	if got := ids(Rank("查一下天津明天的天气", infos, 1)); !slices.Equal(got, []string{"amap:maps_weather"}) {
		t.Errorf("a query in Chinese: %v", got)
	}
	if got := ids(Rank("驾车路线", infos, 1)); !slices.Equal(got, []string{"amap:maps_direction_driving"}) {
		t.Errorf("driving route in Chinese: %v", got)
	}
	if got := ids(Rank("driving directions with amap", infos, 0)); len(got) == 0 || got[0] != "amap:maps_direction_driving" {
		t.Errorf("English words of the tool's name and its server's: %v", got)
	}
	if got := ids(Rank("Погода в Москве", infos, 0)); len(got) != 0 {
		t.Errorf("a script nothing is described in: %v", got)
	}
}

// A server's name and what it says of itself find its tools, whose own
// names are generic, without filling the top hits with its other tools.
func TestRankServerContext(t *testing.T) {
	infos := []Info{
		{ID: "yf:get_news", Description: "Get news for a ticker.", Server: "yahoo-finance\nStock quotes, news and financials from Yahoo Finance."},
		{ID: "yf:get_info", Description: "Get company info.", Server: "yahoo-finance\nStock quotes, news and financials from Yahoo Finance."},
		{ID: "yf:get_holders", Description: "Get holders.", Server: "yahoo-finance\nStock quotes, news and financials from Yahoo Finance."},
		{ID: "hn:get_news", Description: "Get news stories.", Server: "hacker-news"},
		{ID: "rss:get_news", Description: "Get news from a feed.", Server: "rss-reader"},
		{ID: "osm:geocode_address", Description: "Geocode an address.", Server: "osm-mcp-server\nOpenStreetMap search and routing."},
		{ID: "gmaps:geocode", Description: "Geocode an address with Google Maps.", Server: "google-maps"},
	}
	got := ids(Rank("latest stock news from yahoo finance", infos, 0))
	if len(got) < 2 || got[0] != "yf:get_news" {
		t.Fatalf("news from the server named: %v", got)
	}
	if got[1] == "yf:get_info" && got[2] == "yf:get_holders" {
		t.Errorf("the server's other tools fill the top: %v", got)
	}
	if got := ids(Rank("geocode the address with OpenStreetMap", infos, 1)); !slices.Equal(got, []string{"osm:geocode_address"}) {
		t.Errorf("geocode with OpenStreetMap: %v", got)
	}
}

// Bad input answers quickly, with the best it can or nothing, and the
// next call is served.
func TestRankBadInput(t *testing.T) {
	var infos []Info
	for i := range 600 {
		infos = append(infos, Info{ID: "ns" + string(rune('a'+i%26)) + ":read_file_" + strings.Repeat("x", i%7),
			Description: "Read the complete contents of a file from the file system as text.", Server: "files"})
	}
	cases := map[string]string{
		"100 KB":         strings.Repeat("read the spreadsheet and post the summary, ", 100<<10/43),
		"stop words":     "the and of to it was",
		"punctuation":    strings.Repeat("?!.,;:-", 1000),
		"unknown script": strings.Repeat("ᚠᚢᚦᚨᚱᚲ ", 2000),
		"one long word":  strings.Repeat("a", 100<<10),
		"CJK 100 KB":     strings.Repeat("查询天气预报", 6000),
		"a long list":    strings.Repeat("spreadsheet, ", 100<<10/13),
	}
	for name, q := range cases {
		start := time.Now()
		_ = ScoreEach(append([]string{q}, Needs(q)...), infos)
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: %v", name, d)
		}
	}
	if got := Rank("read file", infos, 1); len(got) != 1 {
		t.Fatalf("the next call: %v", got)
	}
	if got := Rank(cases["punctuation"], infos, 0); len(got) != 0 {
		t.Errorf("punctuation found %d tools", len(got))
	}
}

// A need that names no server takes the servers its task names.
func TestScoreTaskNamesServers(t *testing.T) {
	infos := []Info{
		{ID: "slack:slack_post_message", Description: "Post a new message to a Slack channel"},
		{ID: "slack:slack_add_reaction", Description: "Add a reaction emoji to a message"},
		{ID: "discord:discord_send", Description: "Sends a message to a specified Discord text channel"},
		{ID: "discord:discord_add_reaction", Description: "Adds an emoji reaction to a specific Discord message"},
	}
	task := "Send the summary to the #eng channel in Discord and add a reaction to it"
	_, each := ScoreTask(task, Needs(task), infos)
	if len(each) != 2 || each[0][0].Info.ID != "discord:discord_send" || each[1][0].Info.ID != "discord:discord_add_reaction" {
		t.Fatalf("needs %q: %v", Needs(task), each)
	}
}
