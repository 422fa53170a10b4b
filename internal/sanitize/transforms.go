package sanitize

import "github.com/pml-go/pml/internal/secretmask"

// newTransformed finds the provided secret values after the transforms code
// applies without effort, which the exact replacer misses: case changes,
// base64 (standard and URL, also inside a longer encoded string), hex,
// URL-encoding, and fragments of at least secretmask.FragmentLen bytes of a
// token-like value (what split or slice leave). Values under
// secretmask.DefaultMinLen bytes are left to the exact replacer. Nil when
// there is nothing to find.
func newTransformed(values []string) *secretmask.Set {
	s := secretmask.New(values, secretmask.DefaultMinLen, Redacted)
	if s.Empty() {
		return nil
	}
	return s
}
