package learning

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/analysis"
	"github.com/pml-go/pml/internal/lru"
	"github.com/pml-go/pml/internal/outputtype"
	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/store"
	"github.com/pml-go/pml/internal/tools"
	"github.com/pml-go/pml/internal/tracing"
)

func TestActionFor(t *testing.T) {
	for _, c := range []struct {
		intent string
		used   []string
		want   string
	}{
		{"", []string{"filesystem:read_file", "json:parse"}, "read_parse_json"},
		{"", []string{"crypto:sha256"}, "sha256_crypto"},
		{"", []string{"string:lower", "string:trim", "string:replace", "string:split"}, "lower_trim_replace_string"},
		{"Count the items in a JSON file", nil, "count_items_json_file"},
		{"Sum it", nil, "sum"},
		{"Compute the SHA-256 checksum of a file", nil, "compute_sha256_checksum_file"},
		{"Total the order amounts of each customer's JSON orders file", nil, "total_order_amounts_customer"},
		{"Add days to a date and give it as YYYY-MM-DD", nil, "add_days_date_yyyy"},
		{"the a of", nil, "the_a_of"},
		{"", []string{"fs:readFile"}, "read_file"},
	} {
		if got := actionFor(c.intent, "0123456789abcdef", c.used); got != c.want {
			t.Errorf("actionFor(%q, %v) = %q, want %q", c.intent, c.used, got, c.want)
		}
	}
}

func TestParamsSchemaAndExamples(t *testing.T) {
	// n is a number: a parameter once a run varies it.
	run := func(path, n string) string {
		return `const t = await mcp.fs.read({path: "` + path + `", n: ` + n + `}); return args.limit ?? t`
	}
	lf, ok := analysis.Lift(run("a.json", "2"), run("a.json", "3"))
	if !ok {
		t.Fatal("not lifted")
	}
	s := paramsSchema(json.RawMessage(`{"type":"object","properties":{"limit":{},"path":{},"n":{}},"required":["path","n"]}`), lf.Params, func(string, string) string { return "" })
	got := outputtype.Decode(s)
	if _, has := got["required"]; has {
		t.Fatalf("lifted parameters stay required: %s", s)
	}
	path := outputtype.ObjectOf(outputtype.ObjectOf(got["properties"])["path"])
	if path["type"] != "string" || path["default"] != "a.json" {
		t.Fatalf("path: %v", path)
	}
	next, _ := analysis.Lift(run("b.json", "2.5"), run("b.json", "3.5"))
	for range MaxExamples + 2 {
		s = addExamples(s, next.Params)
	}
	got = outputtype.Decode(s)
	n := outputtype.ObjectOf(outputtype.ObjectOf(got["properties"])["n"])
	if n["type"] != "number" || len(n["examples"].([]any)) != 2 {
		t.Fatalf("n after another value: %v", n)
	}
	path = outputtype.ObjectOf(outputtype.ObjectOf(got["properties"])["path"])
	if ex := path["examples"].([]any); len(ex) != 2 || ex[1] != "b.json" {
		t.Fatalf("path examples: %v", ex)
	}
}

func TestWithDefaults(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","default":"a.json"},"n":{"type":"integer"}}}`)
	for in, want := range map[string]string{
		``:                   `{"path":"a.json"}`,
		`null`:               `{"path":"a.json"}`,
		`{"n":1}`:            `{"n":1,"path":"a.json"}`,
		`{"path":"b"}`:       `{"path":"b"}`,
		`[1]`:                `[1]`,
		`{"path":null}`:      `{"path":null}`,
		`{"n":1,"path":"c"}`: `{"n":1,"path":"c"}`,
	} {
		if got := string(WithDefaults(schema, json.RawMessage(in))); got != want {
			t.Errorf("WithDefaults(%s) = %s, want %s", in, got, want)
		}
	}
}

// A skill checks its arguments like a tool (issue 39 item 5): a lifted
// parameter is required (its first value is an example), an unknown field is
// refused with the nearest name and the declaration, a wrong type too, a
// default the code gives itself stays optional; the next call is served.
func TestCallArgs(t *testing.T) {
	c := store.Capability{ArgsSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","default":"a.json","examples":["a.json","b.json"]},"n":{"type":"integer","default":1}}}`),
		OutputSchema: json.RawMessage(`{"type":"integer"}`)}
	v := tools.NewValidator()
	for in, want := range map[string]string{
		``:                        `missing required field "path"`,
		`{}`:                      `missing required field "path"`,
		`{"n": 2}`:                `missing required field "path"`,
		`{"file": "c.json"}`:      `unknown field(s) "file"`,
		`{"pth": "c.json"}`:       `unknown field(s) "pth"; did you mean "path"?`,
		`{"path": 3}`:             `field "path"`,
		`{"path": "c", "x": "y"}`: `unknown field(s) "x"`,
	} {
		_, err := CallArgs(v, "cap:count", c, json.RawMessage(in))
		pe, ok := pmlerr.As(err)
		if !ok || pe.Code != pmlerr.ToolError || !strings.Contains(pe.Message, want) ||
			!strings.Contains(pe.Message, "mcp.cap.count(args: {") || pe.Details["declaration"] == nil {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	for in, want := range map[string]string{`{"path": "b"}`: `{"n":1,"path":"b"}`, `{"path": "c.json", "n": 3}`: `{"path": "c.json", "n": 3}`} {
		if args, err := CallArgs(v, "cap:count", c, json.RawMessage(in)); err != nil || string(args) != want {
			t.Fatalf("%s: %s %v", in, args, err)
		}
	}
	// Code that never reads args takes no field; code that reads it whole
	// takes any.
	none := store.Capability{}
	if _, err := CallArgs(v, "cap:fixed", none, json.RawMessage(`{"file": "c.json"}`)); err == nil || !strings.Contains(err.Error(), "it takes no arguments") {
		t.Fatalf("a field for code that reads none: %v", err)
	}
	if _, err := CallArgs(v, "cap:fixed", none, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	whole := store.Capability{ArgsSchema: json.RawMessage(`{"type":"object"}`)}
	if _, err := CallArgs(v, "cap:whole", whole, json.RawMessage(`{"any": 1}`)); err != nil {
		t.Fatal(err)
	}
}

func TestEdgesOf(t *testing.T) {
	now := time.Now()
	tr := tracing.Trace{
		Tasks: []tracing.Task{
			{ToolID: "json:parse", StartedAt: now.Add(2 * time.Millisecond)},
			{ToolID: "fs:read", StartedAt: now},
			{ToolID: "fs:read", StartedAt: now.Add(time.Millisecond)},
			{ToolID: "bad id", StartedAt: now.Add(3 * time.Millisecond)},
			{ToolID: "crypto:sha256", StartedAt: now.Add(4 * time.Millisecond)},
		},
		DAG: json.RawMessage(`{"tasks":[{"id":"t1","tool":"fs:read","depends_on":[]},{"id":"t2","tool":"json:parse","depends_on":["t1"]},{"id":"t3","tool":"crypto:sha256","depends_on":["t1"]}]}`),
	}
	got := edgesOf(tr, lru.New[string, [][2]string](8, 1<<20))
	if again := edgesOf(tr, lru.New[string, [][2]string](8, 1<<20)); len(again) != len(got) {
		t.Fatal("edges differ read twice")
	}
	want := []store.ToolEdge{
		{From: "fs:read", To: "crypto:sha256", Feeds: 1},
		{From: "fs:read", To: "json:parse", Feeds: 1, Follows: 1},
		{From: "json:parse", To: "crypto:sha256", Follows: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("edges %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("edges %+v, want %+v", got, want)
		}
	}
	g := buildGraph(got)
	if r := g.related("json:parse", 5); len(r) != 2 || r[0].Tool != "crypto:sha256" && r[0].Tool != "fs:read" {
		t.Fatalf("related %+v", r)
	}
}

func TestGraphTool(t *testing.T) {
	for id, want := range map[string]bool{
		"fs:read": true, "a.b-c_d:e.f": true, "a:": false, ":a": false, "a": false, "a:b:c": false,
		"dir/x:y": false, "a b:c": false, strings.Repeat("a", 128) + ":b": true, strings.Repeat("a", 129) + ":b": false,
		"a:" + strings.Repeat("b", 129): false,
	} {
		if graphTool(id) != want {
			t.Errorf("graphTool(%.20q) = %v, want %v", id, !want, want)
		}
	}
}
