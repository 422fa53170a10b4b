//go:build linux

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/testfixture"
	"github.com/pml-go/pml/internal/wire"
)

// parkCode makes 20 calls, then one the static plan cannot see, which
// needs an approval (json is "ask").
const parkCode = `let h = "";
	for (let i = 0; i < 20; i++) h = await mcp.crypto.sha256({data: h + i});
	const ns = ["js", "on"].join("");
	return await mcp[ns].parse({data: JSON.stringify(h.length)});`

func openParkBench(tb testing.TB, maxExecutions string) *Workspace {
	tb.Helper()
	ws := tb.TempDir()
	testfixture.WriteFile(tb, ws, ConfigFile, `{"permissions": {"allow": ["crypto"], "ask": ["json"]}}`)
	tb.Setenv("PML_CLOUD_URL", "")
	tb.Setenv("PML_MAX_EXECUTIONS", maxExecutions)
	tb.Setenv("PML_MAX_QUEUE", "0")
	p, err := Open(context.Background(), ws, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = p.Close() })
	return p
}

func pauseFor(tb testing.TB, p *Workspace) wire.Answer {
	a := p.Execute(context.Background(), wire.ExecuteRequest{Code: parkCode})
	if a.Status != wire.StatusApprovalRequired {
		tb.Fatalf("%+v", a)
	}
	return a
}

func continueOK(tb testing.TB, p *Workspace, a wire.Answer) {
	r := p.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(true)}})
	if r.Status != wire.StatusSuccess || string(r.Result) != "64" {
		tb.Fatalf("%+v", r)
	}
}

// BenchmarkResumeAfterApproval: the continue_workflow of a run paused after
// 20 calls, resumed where it waits (parked) against the same run re-run
// from its journal (the path of a run that ended while parked). p50-ms is
// the continue alone.
func BenchmarkResumeAfterApproval(b *testing.B) {
	for _, mode := range []string{"parked", "replayed"} {
		b.Run(mode, func(b *testing.B) {
			p := openParkBench(b, "1000")
			var ds []time.Duration
			for b.Loop() {
				a := pauseFor(b, p)
				if mode == "replayed" {
					endParkedRun(b, p, a.WorkflowID)
				}
				start := time.Now()
				continueOK(b, p, a)
				ds = append(ds, time.Since(start))
			}
			b.ReportMetric(testfixture.MedianMS(ds), "p50-ms")
		})
	}
}

// endParkedRun ends the run parked under workflow id, as its deadline
// would, keeping the workflow.
func endParkedRun(tb testing.TB, p *Workspace, id string) {
	wf, err := p.workflows.Take(id)
	if err != nil {
		tb.Fatal(err)
	}
	wf.Run.parked.cancel()
	<-wf.Run.parked.done
	p.workflows.Create(wf)
}

// BenchmarkParkedRunCost parks 200 runs at once and reports what each
// costs while it waits: Go heap, goroutine stacks and the process's
// resident memory (the engine's heap lives outside the Go heap), then
// declines them all.
func BenchmarkParkedRunCost(b *testing.B) {
	const n = 200
	p := openParkBench(b, "1000")
	continueOK(b, p, pauseFor(b, p)) // warm: servers, caches, pools
	for b.Loop() {
		heap0, stack0, rss0 := memNow(b)
		answers := make([]wire.Answer, n)
		for i := range answers {
			answers[i] = pauseFor(b, p)
		}
		heap1, stack1, rss1 := memNow(b)
		b.ReportMetric(float64(heap1-heap0)/n/1024, "heap-KiB/parked")
		b.ReportMetric(float64(stack1-stack0)/n/1024, "stack-KiB/parked")
		b.ReportMetric(float64(rss1-rss0)/n/1024, "rss-KiB/parked")
		for _, a := range answers {
			r := p.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: a.WorkflowID, Approved: wire.Bool(false)}})
			if r.Status != wire.StatusAborted {
				b.Fatalf("%+v", r)
			}
		}
	}
}

// memNow is the Go heap in use after a collection, the goroutine stacks in
// use, and the resident set. The resident set can grow less than heap and
// stacks when they reuse memory freed earlier in the process.
func memNow(tb testing.TB) (heap, stack, rss int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	data, err := os.ReadFile(filepath.Join("/proc", "self", "statm"))
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(data))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return int64(ms.HeapInuse), int64(ms.StackInuse), pages * int64(os.Getpagesize())
}

// Runs parked for an approval keep their execution places: an AI client
// that leaves runs waiting meets OVERLOADED, not unbounded memory, and an
// answer gives the place back.
func TestParkedRunsHoldTheirPlaces(t *testing.T) {
	p := openParkBench(t, "2")
	first, _ := pauseFor(t, p), pauseFor(t, p)
	if a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `return await mcp.crypto.sha256({data: "x"})`}); a.ErrorCode != pmlerr.Overloaded {
		t.Fatalf("a third execution beside two parked runs: %+v", a)
	}
	if r := p.Execute(context.Background(), wire.ExecuteRequest{ContinueWorkflow: &wire.ContinueWorkflow{WorkflowID: first.WorkflowID, Approved: wire.Bool(false)}}); r.Status != wire.StatusAborted {
		t.Fatalf("%+v", r)
	}
	if a := p.Execute(context.Background(), wire.ExecuteRequest{Code: `return await mcp.crypto.sha256({data: "x"})`}); a.Status != wire.StatusSuccess {
		t.Fatalf("after a parked run ended: %+v", a)
	}
}
