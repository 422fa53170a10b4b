package analysis

import "testing"

func TestShapeOf(t *testing.T) {
	base := ShapeOf(`const s = await mcp.math.add({ a: 1, b: 2 }); return s * 2;`)
	for _, same := range []string{
		"const s = await mcp.math.add({a: 7, b: 'x'})\n// a comment\nreturn s * 2",
		"/* c */ const s=await mcp.math.add({ a: 1.5, b: `t` });return s*2;;",
	} {
		if got := ShapeOf(same); got.Hash != base.Hash {
			t.Errorf("%q: a different shape from the base", same)
		}
	}
	for _, other := range []string{
		`const s = await mcp.math.add({ a: 1, c: 2 }); return s * 2;`,
		`const s = await mcp.math.mul({ a: 1, b: 2 }); return s * 2;`,
		`const s = await mcp.math.add({ a: 1, b: 2 }); return s + 2;`,
	} {
		if ShapeOf(other).Hash == base.Hash {
			t.Errorf("%q: the base's shape", other)
		}
	}
	for code, want := range map[string]bool{
		`return await mcp.math.add({a: 1, b: 2})`:                             true,
		`await mcp.math.add({a: args.a ?? 1, b: 1});`:                         true,
		`mcp.json.parse({ data: "[1]" })`:                                     true,
		`return await mcp.math.add({a: (1 + 2), b: f(3)})`:                    true,
		`return (await mcp.math.add({a: 1, b: 2})) * 2`:                       false,
		`return await mcp.math.add({a: await mcp.math.add({a:1,b:1}), b: 2})`: false,
		`return await mcp.math.add({a: 1}).then(x => x)`:                      false,
		`return 1`:                            false,
		`const x = 1`:                         false,
		`return await mcp.math.add(`:          false,
		`return await mcp["math"]["add"]({})`: false,
	} {
		if got := ShapeOf(code).DirectCall; got != want {
			t.Errorf("DirectCall(%q) = %v, want %v", code, got, want)
		}
	}
}
