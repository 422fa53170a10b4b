package httpapi

import (
	"fmt"
	"strconv"
)

// MaxPage bounds the page parameter of the list endpoints, so that the
// offset it makes stays far from overflowing.
const MaxPage = 1 << 20

// PositiveParam reads the query parameter name: def when s is empty, else
// an integer from 1 to maxVal. Out of range is an error naming the
// parameter, never quietly clamped.
func PositiveParam(name, s string, def, maxVal int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxVal {
		return 0, fmt.Errorf("%s=%q: want an integer from 1 to %d", name, s, maxVal)
	}
	return n, nil
}
