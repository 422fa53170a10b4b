package sandbox

import "time"

// WithTimeoutMS returns l with its wall clock lowered to ms milliseconds, as
// a request's options.timeout_ms may ask; a request can lower the limit,
// never raise it. ms <= 0 leaves l unchanged.
func (l Limits) WithTimeoutMS(ms int) Limits {
	if ms <= 0 {
		return l
	}
	base := l.Timeout
	if base <= 0 {
		base = DefaultLimits().Timeout
	}
	l.Timeout = min(base, time.Duration(ms)*time.Millisecond, MaxTimeout)
	return l
}
