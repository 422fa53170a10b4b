package std

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/pml-go/pml/internal/tools"
)

const oneText = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`

type text struct {
	Text string `json:"text"`
}

// placeholderRE matches {{ name }} and {{ a.b[0] }} template placeholders.
var placeholderRE = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

func stringTools() []tools.Func {
	return []tools.Func{
		tools.Typed(info("string:upper", "Convert text to upper case.", oneText, returnsString),
			func(_ context.Context, a text) (any, error) { return strings.ToUpper(a.Text), nil }),
		tools.Typed(info("string:lower", "Convert text to lower case.", oneText, returnsString),
			func(_ context.Context, a text) (any, error) { return strings.ToLower(a.Text), nil }),
		tools.Typed(info("string:trim",
			"Remove leading and trailing whitespace, or the given characters, from text.",
			`{"type":"object","properties":{
				"text":{"type":"string"},
				"chars":{"type":"string","description":"Characters to remove instead of whitespace."}
			},"required":["text"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Text  string  `json:"text"`
				Chars *string `json:"chars"`
			}) (any, error) {
				if a.Chars == nil {
					return strings.TrimSpace(a.Text), nil
				}
				return strings.Trim(a.Text, *a.Chars), nil
			}),
		tools.Typed(info("string:split",
			"Split text on a separator into a list of strings; an empty separator splits into characters.",
			`{"type":"object","properties":{
				"text":{"type":"string"},
				"separator":{"type":"string"},
				"limit":{"type":"integer","minimum":1,"description":"Return at most this many parts; the last holds the rest."}
			},"required":["text","separator"],"additionalProperties":false}`, `{"type":"array","items":{"type":"string"}}`),
			func(ctx context.Context, a struct {
				Text      string `json:"text"`
				Separator string `json:"separator"`
				Limit     int    `json:"limit"`
			}) (any, error) {
				n := a.Limit
				if n == 0 {
					n = -1
				}
				// Each part costs a string header in Go and its quotes and
				// comma in JSON: splitting a MiB into characters builds 20 MiB.
				parts := int64(utf8.RuneCountInString(a.Text))
				if a.Separator != "" {
					parts = int64(strings.Count(a.Text, a.Separator)) + 1
				}
				if n > 0 {
					parts = min(parts, int64(n))
				}
				release, err := tools.Reserve(ctx, "string:split", 2*int64(len(a.Text))+19*parts)
				if err != nil {
					return nil, err
				}
				defer release()
				return strings.SplitN(a.Text, a.Separator, n), nil
			}),
		tools.Typed(info("string:join",
			"Join a list of strings with a separator.",
			`{"type":"object","properties":{
				"items":{"type":"array","items":{"type":"string"}},
				"separator":{"type":"string","default":""}
			},"required":["items"],"additionalProperties":false}`, returnsString),
			func(_ context.Context, a struct {
				Items     []string `json:"items"`
				Separator string   `json:"separator"`
			}) (any, error) {
				return strings.Join(a.Items, a.Separator), nil
			}),
		tools.Typed(info("string:replace",
			"Replace occurrences of search in text. With regex, search is a regular expression (RE2 syntax) and replacement may use $1 group references.",
			`{"type":"object","properties":{
				"text":{"type":"string"},
				"search":{"type":"string","minLength":1},
				"replacement":{"type":"string"},
				"all":{"type":"boolean","default":true,"description":"Replace every occurrence, not only the first."},
				"regex":{"type":"boolean","default":false}
			},"required":["text","search","replacement"],"additionalProperties":false}`, returnsString),
			stringReplace),
		tools.Typed(info("string:template",
			`Fill {{name}} placeholders in a template from values; paths work ("{{user.name}}", "{{items[0]}}"). Strings are inserted as is, other values as JSON. A placeholder without a value is an error.`,
			`{"type":"object","properties":{
				"template":{"type":"string"},
				"values":{"type":"object"}
			},"required":["template","values"],"additionalProperties":false}`, returnsString),
			stringTemplate),
		tools.Typed(info("string:length", "Number of characters (Unicode code points) in text.", oneText, `{"type":"integer"}`),
			func(_ context.Context, a text) (any, error) { return utf8.RuneCountInString(a.Text), nil }),
	}
}

func stringReplace(_ context.Context, a struct {
	Text        string `json:"text"`
	Search      string `json:"search"`
	Replacement string `json:"replacement"`
	All         *bool  `json:"all"`
	Regex       bool   `json:"regex"`
}) (any, error) {
	all := a.All == nil || *a.All
	if !a.Regex {
		if all {
			return strings.ReplaceAll(a.Text, a.Search, a.Replacement), nil
		}
		return strings.Replace(a.Text, a.Search, a.Replacement, 1), nil
	}
	re, err := regexp.Compile(a.Search)
	if err != nil {
		return nil, fmt.Errorf("search is not a valid regular expression: %w", err)
	}
	if all {
		return re.ReplaceAllString(a.Text, a.Replacement), nil
	}
	loc := re.FindStringSubmatchIndex(a.Text)
	if loc == nil {
		return a.Text, nil
	}
	var out []byte
	out = re.ExpandString(out, a.Replacement, a.Text, loc)
	return a.Text[:loc[0]] + string(out) + a.Text[loc[1]:], nil
}

func stringTemplate(_ context.Context, a struct {
	Template string          `json:"template"`
	Values   json.RawMessage `json:"values"`
}) (any, error) {
	var missing []string
	var bad error
	out := placeholderRE.ReplaceAllStringFunc(a.Template, func(m string) string {
		name := placeholderRE.FindStringSubmatch(m)[1]
		segs, err := parsePath(name)
		if err != nil {
			bad = err
			return m
		}
		v, ok := lookup(a.Values, segs)
		if !ok {
			missing = append(missing, name)
			return m
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
		return string(v)
	})
	if bad != nil {
		return nil, bad
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no value for placeholder(s) %s", strings.Join(missing, ", "))
	}
	return out, nil
}
