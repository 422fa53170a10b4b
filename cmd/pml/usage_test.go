package main

import (
	"io"
	"strings"
	"testing"
)

// runRoot runs pml with args and returns the exit status and the message
// pml would print.
func runRoot(t *testing.T, args ...string) (int, string) {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	err := root.Execute()
	code, _ := exitCode(err)
	if err == nil {
		return exitOK, ""
	}
	return code, err.Error()
}

// Every usage error exits 4 and says what to type instead (issue 41, items
// 3 and 7): an unknown flag gets the closest flag, an unknown command the
// closest command, a gateway URL without a scheme the URL with one.
func TestUsageErrorsSayTheFix(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--approvee", "return 1"}, "did you mean --approve?"},
		{[]string{"gateway", "--adr", "127.0.0.1:0"}, "did you mean --addr?"},
		{[]string{"exec", "--zzzzzzzz", "return 1"}, "pml exec --help lists the flags"},
		{[]string{"tracez"}, "did you mean traces?"},
		{[]string{"qqqqqq"}, "pml --help lists the commands"},
		{[]string{"init", "--cloud-url", "127.0.0.1:46080"}, "--cloud-url 127.0.0.1:46080 has no scheme: use http://127.0.0.1:46080"},
		{[]string{"init", "--cloud-url", "ftp://127.0.0.1:46080"}, "http:// or https://"},
	} {
		code, msg := runRoot(t, c.args...)
		if code != exitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("pml %s: exit %d, %q; want exit %d saying %q", strings.Join(c.args, " "), code, msg, exitUsage, c.want)
		}
	}
	if code, msg := runRoot(t); code != exitOK {
		t.Errorf("pml alone: exit %d %q, want the help", code, msg)
	}
}
