package analysis

import (
	"testing"
)

func TestArgsSchema(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"unused", "return 1", ""},
		{"shadowed by a local of another function", "const f = (args: any) => args.x;\nreturn f({ x: 1 })", ""},
		{"plain reads are required", "return args.path + args['mode']",
			`{"type":"object","properties":{"path":{},"mode":{}},"required":["path","mode"]}`},
		{"destructuring with defaults", "const { x, y = 1, z: renamed = 'a' } = args;\nreturn [x, y, renamed]",
			`{"type":"object","properties":{"x":{},"y":{"type":"integer","default":1},"z":{"type":"string","default":"a"}},"required":["x"]}`},
		{"fallbacks", "const n = args.n ?? 10;\nconst s = args.s || 'x';\nconst o = args.o ?? { deep: true };\nreturn [n, s, o]",
			`{"type":"object","properties":{"n":{"type":"integer","default":10},"s":{"type":"string","default":"x"},"o":{"type":"object","default":{"deep":true}}}}`},
		{"typeof", "if (typeof args.count === 'number' && typeof args.name !== 'undefined') {}\nreturn args.name",
			`{"type":"object","properties":{"count":{"type":"number"},"name":{}},"required":["count"]}`},
		{"guards make optional", "if (args.verbose) {}\nconst q = args.q ? 1 : 0;\nconst d = args.d && args.d.x;\nconst m = !args.m;\nif (args.u === undefined || args.v == null) {}\nif ('w' in args) {}\nreturn args.opt?.deep",
			`{"type":"object","properties":{"verbose":{},"q":{},"d":{"type":"object","properties":{"x":{}},"required":["x"]},"m":{},"u":{},"v":{},"w":{},"opt":{"type":"object","properties":{"deep":{}},"required":["deep"]}}}`},
		{"nested paths and aliases", "const opts = args.options;\nreturn opts.depth + args.options.limit * 2",
			`{"type":"object","properties":{"options":{"type":"object","properties":{"depth":{},"limit":{"type":"number"}},"required":["depth","limit"]}},"required":["options"]}`},
		{"methods and iteration tell types", "const u = args.name.toUpperCase();\nconst f = args.price.toFixed(2);\nfor (const t of args.tags) {}\nconst m = args.ids.map((i: any) => i);\nreturn args.list[0]",
			`{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"},"tags":{"type":"array"},"ids":{"type":"array"},"list":{"type":"array"}},"required":["name","price","tags","ids","list"]}`},
		{"comparisons with literals", "if (args.mode === 'fast' || args.level > 3 || args.flag === true) {}\nreturn -args.neg",
			`{"type":"object","properties":{"mode":{"type":"string"},"level":{"type":"number"},"flag":{"type":"boolean"},"neg":{"type":"number"}},"required":["mode","level","flag","neg"]}`},
		{"length is not a property", "return args.items.length",
			`{"type":"object","properties":{"items":{}},"required":["items"]}`},
		{"whole args", "return await mcp.a.b(args)", `{"type":"object","additionalProperties":true}`},
		{"whole args beside a read", "const n = args.n; return JSON.stringify(args) + n", `{"type":"object","properties":{"n":{}},"required":["n"],"additionalProperties":true}`},
		{"destructured", "const {a, b} = args; return a + b", `{"type":"object","properties":{"a":{},"b":{}},"required":["a","b"]}`},
		{"used in a tool call", "await mcp.fs.read({ path: args.path as string })",
			`{"type":"object","properties":{"path":{}},"required":["path"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := Analyze(tt.code)
			if err != nil {
				t.Fatal(err)
			}
			if string(a.ArgsSchema) != tt.want {
				t.Errorf("schema\n got %s\nwant %s", a.ArgsSchema, tt.want)
			}
		})
	}
}
