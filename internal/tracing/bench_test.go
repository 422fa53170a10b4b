package tracing

import (
	"context"
	"encoding/json"
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
