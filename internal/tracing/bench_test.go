package tracing

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func BenchmarkSanitizeString1KB(b *testing.B) {
	s := NewSanitizer([]string{"hunter2-very-secret"})
	line := strings.Repeat("GET /api?q=hello world from bob 200 OK took 12ms ", 20)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		s.String(line)
	}
}

func BenchmarkSanitizeTrace(b *testing.B) {
	s := NewSanitizer([]string{"hunter2-very-secret"})
	var tasks []Task
	for range 10 {
		tasks = append(tasks, Task{
			TaskID: "t1", ToolID: "fs:read",
			Args:   json.RawMessage(`{"path":"/home/bob/project/README.md","api_key":"x"}`),
			Result: json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("lorem ipsum dolor sit amet ", 40) + `"}]}`),
		})
	}
	tr := Trace{TraceID: "x", Code: strings.Repeat("const x = await mcp.fs.read({path: 'a'});\n", 10), Tasks: tasks}
	for b.Loop() {
		s.Trace(tr)
	}
}

func BenchmarkRecorderWrap(b *testing.B) {
	rec := NewRecorder(NewTraceID(), RecorderOptions{})
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	})
	args := json.RawMessage(`{"path":"/tmp/x"}`)
	ctx := context.Background()
	for b.Loop() {
		_, _ = call(ctx, "fs:read", args)
	}
}

func BenchmarkQueuePush(b *testing.B) {
	q, err := OpenQueue(b.TempDir(), 1000)
	if err != nil {
		b.Fatal(err)
	}
	tr := trace(NewTraceID(), "")
	for b.Loop() {
		if err := q.Push(tr); err != nil {
			b.Fatal(err)
		}
	}
}

// Recording a call whose result is 1 MiB costs what the trace keeps of it
// (a marker with a 2 KiB preview once the payload budget is spent), not
// the size of the result: compare B/op with the result's size.
func BenchmarkRecordSpan1MiBResult(b *testing.B) {
	result := json.RawMessage(`"` + strings.Repeat("r", 1<<20) + `"`)
	rec := NewRecorder(NewTraceID(), RecorderOptions{})
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return result, nil
	})
	args := json.RawMessage(`{"path":"/tmp/x"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = call(ctx, "fs:read", args)
	}
}

// BenchmarkFinishLargestTrace is what a run of 5,000 calls (each with
// ~600 bytes of arguments and result) adds to its answer: finishing the
// recording, sanitizing and bounding the trace, and encoding it for the
// store. The trace kept is the largest the bounds allow in tasks.
func BenchmarkFinishLargestTrace(b *testing.B) {
	s := NewSanitizer(nil)
	rec := NewRecorder(NewTraceID(), RecorderOptions{Sanitizer: s})
	pad := strings.Repeat("lorem ipsum ", 25)
	call := rec.Wrap(func(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"text":"` + pad + `"}`), nil
	})
	for i := range 5000 {
		_, _ = call(context.Background(), "json:parse", json.RawMessage(`{"data":"`+pad+strconv.Itoa(i)+`"}`))
	}
	b.ReportAllocs()
	for b.Loop() {
		t := rec.Finish(Trace{WorkflowID: "wf", Code: "for (;;) await mcp.json.parse({data})"}, nil)
		if _, err := json.Marshal(t); err != nil {
			b.Fatal(err)
		}
	}
}
