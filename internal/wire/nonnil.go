package wire

// NonNil is s, or an empty slice for nil: a list in an answer is [] when
// empty, never null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
