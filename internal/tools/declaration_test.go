package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDeclaration(t *testing.T) {
	cases := []struct {
		name string
		info Info
		want string
	}{
		{
			name: "inline object keeps property order",
			info: Info{ID: "filesystem:read_file", Description: "Read a file.", InputSchema: json.RawMessage(
				`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)},
			want: "/** Read a file. */\nmcp.filesystem.read_file(args: { path: string; limit?: number }): Promise<unknown>",
		},
		{
			name: "no schema, no required field: optional open args",
			info: Info{ID: "crypto:uuid"},
			want: "mcp.crypto.uuid(args?: Record<string, unknown>): Promise<unknown>",
		},
		{
			name: "enums, arrays of unions, nullable types, quoted keys and non-identifier names",
			info: Info{ID: "my-server:do-it", InputSchema: json.RawMessage(`{"type":"object","properties":{
				"mode":{"enum":["a","b",3]},
				"xs":{"type":"array","items":{"type":["string","number"]}},
				"maybe":{"type":["string","null"]},
				"content-type":{"const":"json"},
				"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"boolean"}]},
				"old":{"type":"array","items":[{"type":"integer"}]},
				"any":{},
				"nope":false
			},"required":["mode"]}`)},
			want: `mcp["my-server"]["do-it"](args: { mode: "a" | "b" | 3; xs?: (string | number)[]; maybe?: string | null; "content-type"?: "json"; pair?: [string, boolean]; old?: [number]; any?: unknown; nope?: never }): Promise<unknown>`,
		},
		{
			name: "descriptions make a multi-line literal with nested objects and defaults",
			info: Info{ID: "db:query", Description: "Run a query.\nReturns rows.", InputSchema: json.RawMessage(`{
				"type":"object",
				"properties":{
					"sql":{"type":"string","description":"The SQL text."},
					"opts":{"type":"object","description":"Options.","properties":{
						"limit":{"type":"integer","default":10,"description":"Max rows."},
						"explain":{"type":"boolean"}
					}},
					"params":{"type":"object","additionalProperties":{"type":"string"}}
				},
				"required":["sql"]}`)},
			want: "/**\n * Run a query.\n * Returns rows.\n */\n" +
				"mcp.db.query(args: {\n" +
				"  /** The SQL text. */\n" +
				"  sql: string;\n" +
				"  /** Options. */\n" +
				"  opts?: {\n" +
				"    /** Max rows. (default: 10) */\n" +
				"    limit?: number;\n" +
				"    explain?: boolean;\n" +
				"  };\n" +
				"  params?: Record<string, string>;\n" +
				"}): Promise<unknown>",
		},
		{
			name: "refs, anyOf of objects in arrays, allOf, and index signatures beside properties",
			info: Info{ID: "x:y", InputSchema: json.RawMessage(`{
				"type":"object",
				"$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]},
				         "node":{"type":"object","properties":{"next":{"$ref":"#/$defs/node"}}}},
				"properties":{
					"p":{"$ref":"#/$defs/pt"},
					"shapes":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/pt"},{"type":"string"}]}},
					"both":{"allOf":[{"$ref":"#/$defs/pt"},{"type":"object","properties":{"y":{"type":"number"}}}]},
					"bag":{"type":"object","properties":{"k":{"type":"string"}},"additionalProperties":{"type":"number"}},
					"list":{"$ref":"#/$defs/node"},
					"ext":{"$ref":"https://example.invalid/s.json"}
				},
				"required":["p"]}`)},
			want: `mcp.x.y(args: { p: { x: number }; shapes?: ({ x: number } | string)[]; both?: { x: number } & { y?: number }; bag?: { k?: string; [key: string]: number }; list?: { next?: { next?: { next?: { next?: unknown } } } }; ext?: unknown }): Promise<unknown>`,
		},
		{
			name: "output schema types the result, its own $defs resolved",
			info: Info{ID: "weather:now", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"temperature":{"type":"number"},"unit":{"$ref":"#/$defs/unit"}},
				"required":["temperature"],"$defs":{"unit":{"enum":["C","F"]}}}`)},
			want: `mcp.weather.now(args: { city: string }): Promise<{ temperature: number; unit?: "C" | "F" }>`,
		},
		{
			name: "an output schema that does not parse leaves the result unknown",
			info: Info{ID: "a:b", OutputSchema: json.RawMessage(`{"type":`)},
			want: "mcp.a.b(args?: Record<string, unknown>): Promise<unknown>",
		},
		{
			name: "comment terminators in descriptions are escaped",
			info: Info{ID: "a:b", Description: "ends */ here"},
			want: "/** ends *\\/ here */\nmcp.a.b(args?: Record<string, unknown>): Promise<unknown>",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Declaration(c.info); got != c.want {
				t.Errorf("Declaration() =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// A compact declaration keeps what a call needs (names, types, required,
// enums) and drops the rest: the description, optional properties'
// comments, defaults, nested result fields, a result that repeats the
// arguments; a long comment is cut to its first sentence.
func TestCompactDeclaration(t *testing.T) {
	info := Info{ID: "git:commit", Description: "Create a commit.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{
			"message":{"type":"string","description":"Commit message, e.g. a summary. Keep it short and say why the change is made, not what."},
			"amend":{"type":"boolean","default":false,"description":"Amend the previous commit."},
			"mode":{"type":"string","enum":["a","b"]}},"required":["message","mode"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"hash":{"type":"string","description":"The hash."},"status":{"type":"object","properties":{"clean":{"type":"boolean"}}}},"required":["hash"]}`)}
	want := `mcp.git.commit(args: { /** Commit message, e.g. a summary. */ message: string; amend?: boolean; mode: "a" | "b" }): Promise<{ hash: string; status?: object }>`
	if got := CompactDeclaration(info); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	same := Info{ID: "m:put", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number","description":"A number."}},"required":["n"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`)}
	if got := CompactDeclaration(same); got != `mcp.m.put(args: { /** A number. */ n: number }): Promise<typeof args>` {
		t.Fatalf("a result repeating the arguments: %s", got)
	}
	if got := ShortDescription(strings.Repeat("word ", 40)); len(got) > 100 || !strings.HasSuffix(got, "...") {
		t.Fatalf("long description: %q", got)
	}
	if got := ShortDescription("First sentence here. " + strings.Repeat("More words ", 20)); got != "First sentence here." {
		t.Fatalf("description cut at a sentence: %q", got)
	}
}
