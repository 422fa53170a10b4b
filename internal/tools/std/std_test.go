package std

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/tools"
)

// ok is a happy-path case: the exact JSON result, or a regexp it must match
// when want starts with "~".
type ok struct{ tool, args, want string }

var happy = []ok{
	{"json:parse", `{"data": "{\"b\": 1, \"a\": [true, null, 12345678901234567890]}"}`, `{"b":1,"a":[true,null,12345678901234567890]}`},
	{"json:parse", `{"data": " \"x\" "}`, `"x"`},
	{"json:stringify", `{"data": {"b": 1, "a": [1, 2]}}`, `"{\"b\":1,\"a\":[1,2]}"`},
	{"json:stringify", `{"data": {"a": 1}, "indent": 2}`, `"{\n  \"a\": 1\n}"`},
	{"json:stringify", `{"data": [1], "indent": "\t"}`, `"[\n\t1\n]"`},
	{"json:stringify", `{"data": null}`, `"null"`},
	{"json:query", `{"data": {"user": {"tags": ["a", {"x": 9}]}}, "path": "user.tags[1].x"}`, `9`},
	{"json:query", `{"data": {"items": [{"id": "i0"}]}, "path": "$.items.0.id"}`, `"i0"`},
	{"json:query", `{"data": {"a.b": {"c": 2}}, "path": "[\"a.b\"].c"}`, `2`},
	{"json:query", `{"data": {"a": 1}, "path": "b.c"}`, `null`},
	{"json:query", `{"data": {"a": 1}, "path": "b", "default": "none"}`, `"none"`},
	{"json:query", `{"data": {"z": 1, "a": 2}, "path": ""}`, `{"z": 1, "a": 2}`},

	{"math:add", `{"a": 2, "b": 3.5}`, `5.5`},
	{"math:subtract", `{"a": 2, "b": 3}`, `-1`},
	{"math:multiply", `{"a": 4, "b": 2.5}`, `10`},
	{"math:divide", `{"a": 1, "b": 4}`, `0.25`},
	{"math:sum", `{"values": [1, 2, 3.5]}`, `6.5`},
	{"math:sum", `{"values": []}`, `0`},
	{"math:mean", `{"values": [1, 2, 3, 4]}`, `2.5`},
	{"math:min", `{"values": [3, -1, 2]}`, `-1`},
	{"math:max", `{"values": [3, -1, 2]}`, `3`},
	{"math:round", `{"value": 2.345, "decimals": 2}`, `2.35`},
	{"math:round", `{"value": -2.5}`, `-3`},

	{"string:upper", `{"text": "héllo"}`, `"HÉLLO"`},
	{"string:lower", `{"text": "ÀBC"}`, `"àbc"`},
	{"string:trim", `{"text": "  x y \n"}`, `"x y"`},
	{"string:trim", `{"text": "--x--", "chars": "-"}`, `"x"`},
	{"string:split", `{"text": "a,b,c", "separator": ","}`, `["a","b","c"]`},
	{"string:split", `{"text": "a,b,c", "separator": ",", "limit": 2}`, `["a","b,c"]`},
	{"string:split", `{"text": "hé", "separator": ""}`, `["h","é"]`},
	{"string:join", `{"items": ["a", "b"], "separator": "-"}`, `"a-b"`},
	{"string:replace", `{"text": "a-a-a", "search": "a", "replacement": "b"}`, `"b-b-b"`},
	{"string:replace", `{"text": "a-a-a", "search": "a", "replacement": "b", "all": false}`, `"b-a-a"`},
	{"string:replace", `{"text": "x1 y22", "search": "([a-z])(\\d+)", "replacement": "$2$1", "regex": true}`, `"1x 22y"`},
	{"string:replace", `{"text": "x1 y22", "search": "([a-z])(\\d+)", "replacement": "<$1>", "regex": true, "all": false}`, `"<x> y22"`},
	{"string:template", `{"template": "Hi {{ name }}, {{user.age}} {{tags[1]}} {{obj}}", "values": {"name": "Ann", "user": {"age": 30}, "tags": ["a", "b"], "obj": {"k": true}}}`, `"Hi Ann, 30 b {\"k\": true}"`},
	{"string:length", `{"text": "héllo"}`, `5`},

	{"datetime:now", `{}`, `~^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$`},
	{"datetime:now", `{"timezone": "Asia/Tokyo"}`, `~^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+09:00"$`},
	{"datetime:now", `{"format": "unix"}`, `~^\d{10}$`},
	{"datetime:format", `{"time": "2024-03-05T14:07:09.123Z", "format": "YYYY-MM-DD HH:mm:ss.SSS"}`, `"2024-03-05 14:07:09.123"`},
	{"datetime:format", `{"time": "2024-03-05T14:07:09Z", "format": "dddd D MMMM YY, h:mm A [at] H[h]", "timezone": "Europe/Paris"}`, `"Tuesday 5 March 24, 3:07 PM at 15h"`},
	{"datetime:format", `{"time": 1700000000000, "format": "iso"}`, `"2023-11-14T22:13:20.000Z"`},
	{"datetime:format", `{"time": "2024-03-05", "format": "unix_ms"}`, `1709596800000`},
	{"datetime:format", `{"time": "2024-03-05T10:00:00+02:00", "format": "X|x|Z|ZZ"}`, `"1709625600|1709625600000|+02:00|+0200"`},
	{"datetime:format", `{"time": "Tue, 05 Mar 2024 10:00:00 GMT", "format": "date"}`, `"2024-03-05"`},
	{"datetime:parse", `{"text": "05/03/2024 14:30", "format": "DD/MM/YYYY HH:mm"}`, `"2024-03-05T14:30:00.000Z"`},
	{"datetime:parse", `{"text": "2024-03-05 14:30", "timezone": "America/New_York"}`, `"2024-03-05T14:30:00.000-05:00"`},
	{"datetime:parse", `{"text": "March 5, 2024"}`, `"2024-03-05T00:00:00.000Z"`},
	{"datetime:add", `{"time": "2024-01-31T00:00:00Z", "months": 1, "hours": 1.5}`, `"2024-03-02T01:30:00.000Z"`},
	{"datetime:add", `{"time": "2024-03-05T10:00:00+02:00", "days": -5, "milliseconds": 250}`, `"2024-02-29T10:00:00.250+02:00"`},
	{"datetime:diff", `{"from": "2024-03-01", "to": "2024-03-05T12:00:00Z", "unit": "days"}`, `4.5`},
	{"datetime:diff", `{"from": 1000, "to": 0}`, `-1000`},

	{"crypto:sha256", `{"data": "abc"}`, `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
	{"crypto:hash", `{"data": "abc", "algorithm": "md5"}`, `"900150983cd24fb0d6963f7d28e17f72"`},
	{"crypto:hash", `{"data": "abc", "algorithm": "sha1", "encoding": "base64"}`, `"qZk+NkcGgWq6PiVxeFDCbJzQ2J0="`},
	{"crypto:hash", `{"data": "abc"}`, `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
	{"crypto:hmac", `{"data": "The quick brown fox jumps over the lazy dog", "key": "key"}`, `"f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"`},
	{"crypto:hmac", `{"data": "The quick brown fox jumps over the lazy dog", "key": "key", "algorithm": "md5"}`, `"80070713463e7749b90c2dc24911e275"`},
	{"crypto:uuid", `{}`, `~^"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"$`},

	{"encoding:base64_encode", `{"data": "héllo?"}`, `"aMOpbGxvPw=="`},
	{"encoding:base64_encode", `{"data": "ÿþ", "url_safe": true}`, `"w7_Dvg=="`},
	{"encoding:base64_encode", `{"data": "\u00ff\u00fe"}`, `"w7/Dvg=="`},
	{"encoding:base64_decode", `{"data": "aMOpbGxvPw"}`, `"héllo?"`},
	{"encoding:base64_decode", `{"data": "w7_Dvg==", "url_safe": true}`, `"ÿþ"`},
	{"encoding:url_encode", `{"data": "a b&c=d/é!"}`, `"a%20b%26c%3Dd%2F%C3%A9!"`},
	{"encoding:url_encode", `{"data": "a b&c", "form": true}`, `"a+b%26c"`},
	{"encoding:url_decode", `{"data": "a%20b%2Bc+d"}`, `"a b+c+d"`},
	{"encoding:url_decode", `{"data": "a+b%26c", "form": true}`, `"a b&c"`},
	{"encoding:hex_encode", `{"data": "hé"}`, `"68c3a9"`},
	{"encoding:hex_decode", `{"data": "68C3A9"}`, `"hé"`},

	{"collections:sort", `{"items": [3, "b", null, 1.5, "a", true, [1], {"k": 1}]}`, `[null,true,1.5,3,"a","b",[1],{"k": 1}]`},
	{"collections:sort", `{"items": [{"n": 2, "id": "x"}, {"n": 1}, {"n": 2, "id": "y"}], "key": "n", "descending": true}`, `[{"n": 2, "id": "x"},{"n": 2, "id": "y"},{"n": 1}]`},
	{"collections:unique", `{"items": [1, 1.0, {"a": 1, "b": 2}, {"b": 2, "a": 1}, "1"]}`, `[1,{"a": 1, "b": 2},"1"]`},
	{"collections:unique", `{"items": [{"id": 1, "v": "a"}, {"id": 1, "v": "b"}, {"v": "c"}], "key": "id"}`, `[{"id": 1, "v": "a"},{"v": "c"}]`},
	{"collections:group_by", `{"items": [{"s": "b", "i": 1}, {"s": "a"}, {"s": "b", "i": 2}, {"s": 3}, {}], "key": "s"}`, `{"b":[{"s": "b", "i": 1},{"s": "b", "i": 2}],"a":[{"s": "a"}],"3":[{"s": 3}],"undefined":[{}]}`},
	{"collections:chunk", `{"items": [1, 2, 3, 4, 5], "size": 2}`, `[[1,2],[3,4],[5]]`},
	{"collections:chunk", `{"items": [], "size": 2}`, `[]`},
	{"collections:flatten", `{"items": [1, [2, [3, [4]]]]}`, `[1,2,[3,[4]]]`},
	{"collections:flatten", `{"items": [1, [2, [3, [4]]]], "depth": 5}`, `[1,2,3,4]`},
	{"collections:flatten", `{"items": [[1], 2], "depth": 0}`, `[[1],2]`},
	{"collections:pick", `{"data": {"a": 1, "b": 2, "c": 3}, "keys": ["c", "a", "z"]}`, `{"c":3,"a":1}`},
	{"collections:pick", `{"data": [{"a": 1, "b": 2}, {"b": 3}], "keys": ["b"]}`, `[{"b":2},{"b":3}]`},
}

// bad is a failure case: the error must be TOOL_ERROR and name field.
type bad struct{ tool, args, field string }

var failures = []bad{
	{"json:parse", `{}`, `"data"`},
	{"json:parse", `{"data": 1}`, `"data"`},
	{"json:parse", `{"data": "{\n\"a\": }"}`, "line 2"},
	{"json:stringify", `{}`, `"data"`},
	{"json:stringify", `{"data": 1, "indent": 11}`, `"indent"`},
	{"json:query", `{"data": {}}`, `"path"`},
	{"json:query", `{"data": {}, "path": "a[x]"}`, "not an array index"},
	{"math:add", `{"a": 1}`, `"b"`},
	{"math:add", `{"a": "1", "b": 2}`, `"a"`},
	{"math:add", `{"a": 1, "b": 2, "c": 3}`, `"c"`},
	{"math:add", `{"a": 1e308, "b": 1e308}`, "finite"},
	{"math:subtract", `{"b": 1}`, `"a"`},
	{"math:multiply", `{"a": 1, "b": null}`, `"b"`},
	{"math:divide", `{"a": 1, "b": 0}`, "division by zero"},
	{"math:divide", `{"a": 1}`, `"b"`},
	{"math:sum", `{"values": [1, "2"]}`, `"values[]"`},
	{"math:mean", `{"values": []}`, "empty"},
	{"math:min", `{"values": []}`, "empty"},
	{"math:max", `{}`, `"values"`},
	{"math:round", `{"value": 1, "decimals": 16}`, `"decimals"`},
	{"string:upper", `{"text": 1}`, `"text"`},
	{"string:lower", `{}`, `"text"`},
	{"string:trim", `{"text": "x", "chars": 1}`, `"chars"`},
	{"string:split", `{"text": "x"}`, `"separator"`},
	{"string:join", `{"items": [1]}`, `"items[]"`},
	{"string:replace", `{"text": "x", "search": "", "replacement": ""}`, `"search"`},
	{"string:replace", `{"text": "x", "search": "(", "replacement": "", "regex": true}`, "regular expression"},
	{"string:template", `{"template": "{{a}} {{b}}", "values": {"a": 1}}`, "b"},
	{"string:template", `{"template": "x", "values": []}`, `"values"`},
	{"string:length", `{"text": null}`, `"text"`},
	{"datetime:now", `{"timezone": "Mars/Olympus"}`, "Mars/Olympus"},
	{"datetime:now", `{"tz": "UTC"}`, `"tz"`},
	{"datetime:format", `{"time": "yesterday-ish"}`, "yesterday-ish"},
	{"datetime:format", `{"time": true}`, `"time"`},
	{"datetime:parse", `{"text": "05/03/2024", "format": "YYYY-MM-DD"}`, "does not match"},
	{"datetime:parse", `{}`, `"text"`},
	{"datetime:add", `{"time": "2024-01-01", "days": 1.5}`, `"days"`},
	{"datetime:diff", `{"from": "2024-01-01", "to": "2024-01-02", "unit": "fortnights"}`, `"unit"`},
	{"crypto:sha256", `{"data": 5}`, `"data"`},
	{"crypto:hash", `{"data": "x", "algorithm": "crc32"}`, `"algorithm"`},
	{"crypto:hmac", `{"data": "x"}`, `"key"`},
	{"crypto:uuid", `{"version": 7}`, `"version"`},
	{"encoding:base64_encode", `{}`, `"data"`},
	{"encoding:base64_decode", `{"data": "%%%"}`, "base64"},
	{"encoding:base64_decode", `{"data": "//79"}`, "UTF-8"},
	{"encoding:url_encode", `{"data": []}`, `"data"`},
	{"encoding:url_decode", `{"data": "%zz"}`, "percent-encoding"},
	{"encoding:hex_encode", `{"data": {}}`, `"data"`},
	{"encoding:hex_decode", `{"data": "xyz"}`, "hex"},
	{"collections:sort", `{"items": {}}`, `"items"`},
	{"collections:unique", `{}`, `"items"`},
	{"collections:group_by", `{"items": []}`, `"key"`},
	{"collections:chunk", `{"items": [1], "size": 0}`, `"size"`},
	{"collections:flatten", `{"items": [], "depth": -1}`, `"depth"`},
	{"collections:pick", `{"data": [1], "keys": ["a"]}`, "data[0]"},
	{"collections:pick", `{"data": {}, "keys": []}`, `"keys"`},
}

func call(t *testing.T, tool, args string) (json.RawMessage, error) {
	t.Helper()
	return New().Call(context.Background(), tool, json.RawMessage(args))
}

func TestHappyPaths(t *testing.T) {
	for _, c := range happy {
		out, err := call(t, c.tool, c.args)
		if err != nil {
			t.Errorf("%s(%s): %v", c.tool, c.args, err)
			continue
		}
		if pattern, isRE := strings.CutPrefix(c.want, "~"); isRE {
			if !regexp.MustCompile(pattern).Match(out) {
				t.Errorf("%s(%s) = %s, want match of %s", c.tool, c.args, out, pattern)
			}
			continue
		}
		if !jsonEqual(t, out, c.want) {
			t.Errorf("%s(%s) = %s, want %s", c.tool, c.args, out, c.want)
		}
	}
}

// jsonEqual compares JSON texts ignoring insignificant whitespace only: key
// order and number spelling must match.
func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var g, w strings.Builder
	if err := compact(&g, got); err != nil {
		t.Fatalf("result %s is not JSON: %v", got, err)
	}
	if err := compact(&w, []byte(want)); err != nil {
		t.Fatalf("want %s is not JSON: %v", want, err)
	}
	return g.String() == w.String()
}

func compact(b *strings.Builder, data []byte) error {
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	out, err := json.Marshal(v) // json.Marshal of RawMessage compacts it
	b.Write(out)
	return err
}

func TestValidationFailures(t *testing.T) {
	for _, c := range failures {
		_, err := call(t, c.tool, c.args)
		pe, isPML := pmlerr.As(err)
		if !isPML || pe.Code != pmlerr.ToolError {
			t.Errorf("%s(%s) = %v, want TOOL_ERROR", c.tool, c.args, err)
			continue
		}
		if !strings.Contains(pe.Message, c.field) {
			t.Errorf("%s(%s) message %q does not mention %s", c.tool, c.args, pe.Message, c.field)
		}
	}
}

// TestEveryToolIsTested keeps the two tables above complete as tools are added.
func TestEveryToolIsTested(t *testing.T) {
	infos, err := New().Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) < 25 {
		t.Errorf("only %d tools", len(infos))
	}
	v := tools.NewValidator()
	for _, info := range infos {
		if !slices.ContainsFunc(happy, func(c ok) bool { return c.tool == info.ID }) {
			t.Errorf("%s has no happy-path case", info.ID)
		}
		if !slices.ContainsFunc(failures, func(c bad) bool { return c.tool == info.ID }) {
			t.Errorf("%s has no failure case", info.ID)
		}
		if !slices.Contains(Namespaces(), info.Namespace()) {
			t.Errorf("%s is outside Namespaces() %v", info.ID, Namespaces())
		}
		if len(info.Description) < 15 {
			t.Errorf("%s: description %q is too thin", info.ID, info.Description)
		}
		// A schema that fails to compile would make every call an internal error.
		if err := v.Validate(info.InputSchema, json.RawMessage(`{}`)); err != nil {
			if _, isPML := pmlerr.As(err); !isPML {
				t.Errorf("%s: schema does not compile: %v", info.ID, err)
			}
		}
		if d := tools.Declaration(info); strings.Contains(d, "unknown;") && info.ID != "json:stringify" && info.ID != "json:query" {
			t.Errorf("%s: declaration has untyped fields:\n%s", info.ID, d)
		}
	}
}

func TestNowIsCurrent(t *testing.T) {
	out, err := call(t, "datetime:now", `{"format": "unix_ms"}`)
	if err != nil {
		t.Fatal(err)
	}
	var ms int64
	if err := json.Unmarshal(out, &ms); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(time.UnixMilli(ms)); d < 0 || d > time.Minute {
		t.Fatalf("datetime:now is %v away from the clock", d)
	}
}

func TestUUIDsDiffer(t *testing.T) {
	a, _ := call(t, "crypto:uuid", `{}`)
	b, _ := call(t, "crypto:uuid", `{}`)
	if string(a) == string(b) {
		t.Fatalf("two uuids are equal: %s", a)
	}
}
