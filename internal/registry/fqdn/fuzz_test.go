package fqdn

import "testing"

// FuzzParse checks that Parse never panics, that whatever it accepts it
// prints back unchanged, and that every valid Name survives String and Parse.
func FuzzParse(f *testing.F) {
	f.Add("casys.pml.fs.read_json.a7f3", "pml", "std", "filesystem", "read_file", "b2c4")
	f.Add("pml.std.filesystem.read_file", "a", "b", "c", "d", "")
	f.Add("a..b.c.d", "x.y", "", "-", "_", "ABCD")
	f.Add("....", "a", "b", "c", "d", "0000")
	f.Fuzz(func(t *testing.T, s, org, project, ns, action, hash string) {
		if n, err := Parse(s); err == nil {
			if n.String() != s {
				t.Fatalf("Parse(%q).String() = %q", s, n.String())
			}
			if err := n.Validate(); err != nil {
				t.Fatalf("Parse(%q) accepted a name Validate rejects: %v", s, err)
			}
		}
		n := Name{org, project, ns, action, hash}
		if n.Validate() != nil {
			return
		}
		got, err := Parse(n.String())
		if err != nil {
			t.Fatalf("valid %#v: Parse(%q): %v", n, n.String(), err)
		}
		if got != n {
			t.Fatalf("round trip %#v -> %q -> %#v", n, n.String(), got)
		}
	})
}
