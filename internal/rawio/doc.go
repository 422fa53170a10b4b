// Package rawio keeps the files pml reads and writes on every request from
// costing the runtime's scheduler more than the system calls themselves.
//
// Pollable puts the process's stdin and stdout pipes in Go's network
// poller. A process inherits them in blocking mode, and os.Stdin and
// os.Stdout then read and write with blocking system calls: a read that
// blocks holds its thread in the kernel, and the runtime's monitor notices
// the stuck processor after 20 µs, hands it to another thread and keeps
// polling at its fastest rate. pml stdio waits on stdin between every two
// messages: the monitor's wake-ups and the thread hand-offs were a quarter
// of its CPU (docs/performance.md "pml stdio's threads").
//
// File (Raw) reads and writes a pipe in the poller, or a regular file, with
// raw system calls: os.File tells the runtime that a system call begins,
// which wakes the monitor whenever it went to sleep, as it does each time
// every processor is idle (docs/performance.md "pml stdio's threads").
//
// Conn does the same for a socket: the package's HTTP connections to its
// gateway (docs/performance.md "The hybrid path's sockets").
package rawio
