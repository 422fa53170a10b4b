package sandbox

import "time"

// MaxTimeout caps Limits.Timeout and Limits.CPUBudget.
const MaxTimeout = 5 * time.Minute

// Limits bound one execution (docs/limits.md). Zero fields take the
// defaults of DefaultLimits.
type Limits struct {
	MemoryBytes    int64         // engine heap per execution; default 64 MiB -> MEMORY_LIMIT
	Timeout        time.Duration // wall clock, waiting on tools included; default and cap 5 min -> EXECUTION_TIMEOUT
	CPUBudget      time.Duration // CPU time of the thread running the JS (wall time outside Linux); default 30 s, capped at Timeout -> EXECUTION_TIMEOUT
	RPCTimeout     time.Duration // per mcp.* call; default 30s -> RPC_TIMEOUT
	MaxCallBytes   int64         // arguments plus results moved through mcp.*; default 64 MiB -> MEMORY_LIMIT
	MaxLogBytes    int           // console output kept; default 64 KiB
	MaxResultBytes int           // serialized return value; default 8 MiB

	// parkAfter is how long the code waits on tools before its VM heap is
	// put away (parkHeap); 0: defaultParkAfter. Tests shorten it; it is not
	// a limit, and withDefaults leaves it alone.
	parkAfter time.Duration
}

// DefaultLimits returns the limits a zero field stands for.
func DefaultLimits() Limits {
	return Limits{
		MemoryBytes:    64 << 20,
		Timeout:        MaxTimeout,
		CPUBudget:      30 * time.Second,
		RPCTimeout:     30 * time.Second,
		MaxCallBytes:   64 << 20,
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
	if l.CPUBudget <= 0 {
		l.CPUBudget = d.CPUBudget
	}
	l.CPUBudget = min(l.CPUBudget, l.Timeout)
	if l.RPCTimeout <= 0 {
		l.RPCTimeout = d.RPCTimeout
	}
	if l.MaxCallBytes <= 0 {
		l.MaxCallBytes = d.MaxCallBytes
	}
	if l.MaxLogBytes <= 0 {
		l.MaxLogBytes = d.MaxLogBytes
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = d.MaxResultBytes
	}
	return l
}

// ForRequest returns l lowered to what a request asks: options.timeout_ms
// for the wall clock and options.cpu_budget_ms for the CPU budget, each in
// milliseconds. A request can lower a limit, never raise it past what the
// gateway or package is configured with; 0 leaves a limit unchanged.
func (l Limits) ForRequest(timeoutMS, cpuBudgetMS int) Limits {
	l = l.withDefaults()
	if timeoutMS > 0 {
		l.Timeout = min(l.Timeout, time.Duration(timeoutMS)*time.Millisecond)
	}
	if cpuBudgetMS > 0 {
		l.CPUBudget = min(l.CPUBudget, time.Duration(cpuBudgetMS)*time.Millisecond)
	}
	return l.withDefaults()
}
