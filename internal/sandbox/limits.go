package sandbox

import "time"

// MaxTimeout caps Limits.Timeout.
const MaxTimeout = 5 * time.Minute

// Limits bound one execution. Zero fields take the defaults of DefaultLimits.
type Limits struct {
	MemoryBytes    int64         // engine heap per execution; default 64 MiB -> MEMORY_LIMIT
	Timeout        time.Duration // wall clock; default 30s, capped at MaxTimeout -> EXECUTION_TIMEOUT
	RPCTimeout     time.Duration // per mcp.* call; default 30s -> RPC_TIMEOUT
	MaxLogBytes    int           // console output kept; default 64 KiB
	MaxResultBytes int           // serialized return value; default 8 MiB
}

// DefaultLimits returns the limits a zero field stands for.
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes:    64 << 20,
		Timeout:        30 * time.Second,
		RPCTimeout:     30 * time.Second,
		MaxLogBytes:    64 << 10,
		MaxResultBytes: 8 << 20,
	}
}

// withDefaults fills zero (and negative) fields and applies the caps.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = d.MemoryBytes
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	l.Timeout = min(l.Timeout, MaxTimeout)
	if l.RPCTimeout <= 0 {
		l.RPCTimeout = d.RPCTimeout
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = d.MaxLogBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	return l
}
