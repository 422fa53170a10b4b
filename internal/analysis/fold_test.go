package analysis

import (
	"slices"
	"testing"
)

// Each form of a string built from constants folds to the string it builds
// (docs/security.md "What another project sees of a shared capability").
func TestFold(t *testing.T) {
	tests := []struct {
		name, code string
		want       []string // Text of each Folded, in order
		parts      []string // Parts of the first, when it has holes
		line       int      // Line of the first
	}{
		{"concatenation", `const k = "sk_live_" + "51H8xY2abcdefghij";` + "\n" + `return await mcp.x.y({k})`,
			[]string{"sk_live_51H8xY2abcdefghij"}, nil, 1},
		{"concatenation of three", "await mcp.x.y({});\n" + `return "alice.smith" + "@" + "corp-internal.example"`,
			[]string{"alice.smith@corp-internal.example"}, nil, 2},
		{"typescript", `const u: string = "alice.smith"; const d: string = "corp-internal.example"; return await mcp.x.y({to: u + "@" + d})`,
			[]string{"alice.smith@corp-internal.example"}, nil, 1},
		{"template with constant parts", "const u = args.user;\nreturn `${u}@corp-internal.example`",
			[]string{"x@corp-internal.example"}, []string{"@corp-internal.example"}, 2},
		{"template of constants", "return `${\"sk_live_\"}${\"51H8xY2abcdefghij\"}`",
			[]string{"sk_live_51H8xY2abcdefghij"}, nil, 1},
		{"concatenation with an expression", `return args.user + "@corp-internal.example"`,
			[]string{"x@corp-internal.example"}, []string{"@corp-internal.example"}, 1},
		{"join", `return ["sk", "live", "51H8xY2abcdefghij"].join("_")`,
			[]string{"sk_live_51H8xY2abcdefghij"}, nil, 1},
		{"join, default separator, null and holes", `return ["a", null, , 1].join()`,
			[]string{"a,,,1"}, nil, 1},
		{"fromCharCode", `return String.fromCharCode(115, 107, 95, 108, 105, 118, 101, 95) + "51H8xY2abcdefghij"`,
			[]string{"sk_live_51H8xY2abcdefghij"}, nil, 1},
		{"nested: a join in a template", "return `${[\"alice\", \"smith\"].join(\".\")}@corp-internal.example`",
			[]string{"alice.smith@corp-internal.example"}, nil, 1},
		{"a URL's credentials from args", "return `postgres://${args.user}:${args.pw}@db.example.com/app`",
			[]string{"postgres://:@db.example.com/app"}, []string{"postgres://", ":", "@db.example.com/app"}, 1},
		{"a shadowed String is not folded", `const String = {fromCharCode: (...a) => ""}; return String.fromCharCode(65)`,
			nil, nil, 0},
		{"plain literals are not repeated", `return await mcp.x.y({a: "alice", b: 1 + 2})`, nil, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Fold(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, f := range got {
				texts = append(texts, f.Text)
			}
			if len(texts) < len(tt.want) || !slices.Equal(texts[:len(tt.want)], tt.want) || (tt.want == nil && texts != nil) {
				t.Fatalf("folded %q, want %q", texts, tt.want)
			}
			if tt.want == nil {
				return
			}
			first := got[0]
			if tt.parts != nil && !slices.Equal(first.Parts, tt.parts) {
				t.Errorf("parts %q, want %q", first.Parts, tt.parts)
			}
			if tt.parts == nil && !first.Constant() {
				t.Errorf("%q is not constant: parts %q", first.Text, first.Parts)
			}
			if first.Line != tt.line {
				t.Errorf("line %d, want %d", first.Line, tt.line)
			}
		})
	}
}
