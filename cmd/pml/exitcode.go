package main

import (
	"errors"

	"github.com/pml-go/pml/internal/pmlerr"
	"github.com/pml-go/pml/internal/wire"
)

// Exit statuses of pml (README "Commands"): a script tells an answer that
// needs a person from one that failed without parsing the JSON.
const (
	exitOK               = 0
	exitError            = 1 // an error answer, or a command that failed
	exitApprovalRequired = 2
	exitAborted          = 3 // aborted, or CANCELLED (Ctrl-C)
	exitUsage            = 4 // bad flags or arguments; nothing ran
)

// exitStatus is an error that ends pml with a given status. Silent ones
// print nothing more: the answer JSON on stdout already says what happened.
type exitStatus struct {
	code   int
	err    error
	silent bool
}

func (e *exitStatus) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitStatus) Unwrap() error { return e.err }

// usageError marks err as a usage error (exit 4).
func usageError(err error) error { return &exitStatus{code: exitUsage, err: err} }

// answerStatus is the exit status for an answer: nil for success.
func answerStatus(a wire.Answer) error {
	switch a.Status {
	case wire.StatusSuccess:
		return nil
	case wire.StatusApprovalRequired:
		return &exitStatus{code: exitApprovalRequired, silent: true}
	case wire.StatusAborted:
		return &exitStatus{code: exitAborted, silent: true}
	}
	if a.ErrorCode == pmlerr.Cancelled { // Ctrl-C: stopped on purpose, as an abort is
		return &exitStatus{code: exitAborted, silent: true}
	}
	return &exitStatus{code: exitError, silent: true}
}

// exitCode is the status pml ends with for err, and whether err still needs
// printing.
func exitCode(err error) (int, bool) {
	var es *exitStatus
	if errors.As(err, &es) {
		return es.code, !es.silent
	}
	return exitError, true
}
