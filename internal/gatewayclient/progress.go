package gatewayclient

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pml-go/pml/internal/wire"
)

// relayGrace bounds the wait, after the gateway's answer, for the
// notifications it says came before it: they have been read by then and
// only wait in the SDK's queue, so the bound matters only for a gateway
// that claims more than it sent.
const relayGrace = 2 * time.Second

// progressRelay forwards the progress of gateway runs to the requests of
// the package that wait on them: each execute sent with a progress token of
// its own, and each notification the gateway sends for that token reported
// to the reporter of the package's request.
type progressRelay struct {
	mu      sync.Mutex
	next    uint64
	waiting map[string]*relayed
}

// relayed is one execute in flight with its progress forwarded.
type relayed struct {
	ctx  context.Context // the package's request: its client gets the notifications
	p    wire.Progress
	mu   sync.Mutex
	sent int64
	seen chan struct{} // a notification was forwarded
}

func newProgressRelay() *progressRelay {
	return &progressRelay{waiting: map[string]*relayed{}}
}

// open registers the reporter p of the request whose ctx is given and
// returns the token to send to the gateway; close forgets it.
func (r *progressRelay) open(ctx context.Context, p wire.Progress) (token string, rel *relayed, close func()) {
	rel = &relayed{ctx: ctx, p: p, seen: make(chan struct{}, 1)}
	r.mu.Lock()
	r.next++
	token = "pml-" + strconv.FormatUint(r.next, 10)
	r.waiting[token] = rel
	r.mu.Unlock()
	return token, rel, func() {
		r.mu.Lock()
		delete(r.waiting, token)
		r.mu.Unlock()
	}
}

// handle is the client's ProgressNotificationHandler. The SDK calls it for
// one notification after the other, in the order they arrived. A
// notification for no execute in flight (late, or a token this package
// never sent) and one with values no run reports are dropped.
func (r *progressRelay) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	tok, ok := p.ProgressToken.(string)
	if !ok || !countable(p.Progress) || !countable(p.Total) {
		return
	}
	r.mu.Lock()
	rel := r.waiting[tok]
	r.mu.Unlock()
	if rel == nil {
		return
	}
	rel.p(rel.ctx, int(p.Progress), int(p.Total), p.Message)
	rel.mu.Lock()
	rel.sent++
	rel.mu.Unlock()
	select {
	case rel.seen <- struct{}{}:
	default:
	}
}

// countable is a call count a run can report.
func countable(v float64) bool { return v >= 0 && v <= math.MaxInt32 && v == math.Trunc(v) }

// drain waits until rel has forwarded the notifications the gateway's
// answer says it sent (wire.ProgressMeta), within relayGrace and ctx.
func (rel *relayed) drain(ctx context.Context, meta mcp.Meta) {
	want, _ := meta[wire.ProgressMeta].(float64)
	timeout := time.NewTimer(relayGrace)
	defer timeout.Stop()
	for {
		rel.mu.Lock()
		n := rel.sent
		rel.mu.Unlock()
		if float64(n) >= want {
			return
		}
		select {
		case <-rel.seen:
		case <-timeout.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
