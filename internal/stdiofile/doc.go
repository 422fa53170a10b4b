// Package stdiofile makes the process's stdin and stdout pipes wait in Go's
// network poller rather than in blocking system calls.
//
// A process inherits stdin and stdout in blocking mode, and os.Stdin and
// os.Stdout then read and write with blocking system calls. A read that
// blocks holds its thread in the kernel; the runtime's monitor notices the
// stuck processor after 20 µs, hands it to another thread and keeps polling
// at its fastest rate. pml stdio waits on stdin between every two messages,
// so that cost came with each request: in a profile of pml stdio serving
// three-call executions back to back, the monitor's wake-ups and the thread
// hand-offs were a quarter of the process's CPU (docs/performance.md "pml
// stdio's threads").
package stdiofile
