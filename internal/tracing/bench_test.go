package tracing

import (
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
