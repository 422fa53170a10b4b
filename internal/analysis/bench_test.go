package analysis

import (
	"testing"
)

// benchSnippet is ~40 lines of TypeScript with 10 tool calls, a branch, a
// loop and a Promise.all.
const benchSnippet = `interface FileInfo { path: string; size: number }
type Summary = { total: number; names: string[] };
const root: string = args.root ?? "/tmp";
const listing = await mcp.filesystem.list_directory({ path: root });
const files = (listing.entries as FileInfo[]).filter((f) => f.size > 0);
const [meta, config] = await Promise.all([
  mcp.filesystem.get_file_info({ path: root }),
  mcp.json.parse({ text: "{\"depth\": 2}" }),
]);
let summary: Summary = { total: 0, names: [] };
if (meta.size > 1000 && config.depth > 1) {
  const big = await mcp.filesystem.read_file({ path: root + "/big.txt" });
  summary.total += big.length;
} else {
  await mcp.log.info({ message: "small directory" });
}
for (const f of files) {
  const content = await mcp.filesystem.read_file({ path: f.path });
  const parsed = await mcp.json.parse({ text: content });
  summary.names.push(parsed.name as string);
  summary.total += f.size;
}
function label<T extends { name: string }>(x: T): string {
  return x.name.toUpperCase();
}
const hash = await mcp.crypto.sha256({ data: JSON.stringify(summary) });
const stored = await mcp.kv.set({ key: "summary", value: summary, hash: hash.digest });
await mcp.log.info({ message: label({ name: "done" }), id: stored.id });
return {
  total: summary.total,
  names: summary.names,
  hash: hash.digest,
  stored: stored.id,
  count: files.length,
  ok: true,
};
`

func BenchmarkAnalyze(b *testing.B) {
	for b.Loop() {
		if _, err := Analyze(benchSnippet); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeStrip is the esbuild part of BenchmarkAnalyze.
func BenchmarkAnalyzeStrip(b *testing.B) {
	for b.Loop() {
		if _, err := strip(benchSnippet); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeWalk is the rest: parse esbuild's output, walk it, build
// the DAG, the structure and the schema.
func BenchmarkAnalyzeWalk(b *testing.B) {
	st, err := strip(benchSnippet)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		a := &Analysis{mappings: st.mappings, origin: st.origin}
		if err := a.build(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAnalyzeCached(b *testing.B) {
	z := New(16)
	for b.Loop() {
		if _, err := z.Analyze(benchSnippet); err != nil {
			b.Fatal(err)
		}
	}
}
