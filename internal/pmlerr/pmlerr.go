// Package pmlerr defines the error codes of the PML wire contract
// (docs/protocol.md "Errors") and the error type that carries them through
// every layer, from a tool handler through the sandbox to the JSON answer an AI
// client reads.
package pmlerr

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code from the wire contract.
type Code string

// The codes of docs/protocol.md "Errors". Add new ones here (and there),
// never as string literals elsewhere.
const (
	EmptyCode                 Code = "EMPTY_CODE"
	CodeTooLarge              Code = "CODE_TOO_LARGE"
	SyntaxError               Code = "SYNTAX_ERROR"
	ClientToolsRequirePackage Code = "CLIENT_TOOLS_REQUIRE_PACKAGE"
	UnknownTool               Code = "UNKNOWN_TOOL"
	PermissionDenied          Code = "PERMISSION_DENIED"
	ExecutionTimeout          Code = "EXECUTION_TIMEOUT"
	Cancelled                 Code = "CANCELLED" // the caller gave up (Ctrl-C, a closed connection) before the run ended
	RPCTimeout                Code = "RPC_TIMEOUT"
	MemoryLimit               Code = "MEMORY_LIMIT"
	CodeError                 Code = "CODE_ERROR"
	ToolError                 Code = "TOOL_ERROR"
	NetworkError              Code = "NETWORK_ERROR"
	WorkflowNotFound          Code = "WORKFLOW_NOT_FOUND"
	IntegrityError            Code = "INTEGRITY_ERROR"
	Unauthorized              Code = "UNAUTHORIZED"
	InvalidRequest            Code = "INVALID_REQUEST"
	InvalidConfig             Code = "INVALID_CONFIG"
	APIKeyRequired            Code = "API_KEY_REQUIRED"
	NamespaceReserved         Code = "NAMESPACE_RESERVED"   // a capability name taken from tools
	Overloaded                Code = "OVERLOADED"           // not admitted (too many executions, or memory short); details: retry_after_ms
	ElicitationRequired       Code = "ELICITATION_REQUIRED" // .pml.json asks approvals by elicitation, and the client cannot elicit
	Internal                  Code = "INTERNAL_ERROR"
	// Unknown stands in metrics and dashboard rollups for a code outside
	// this list, which only a posted trace can carry (docs/protocol.md
	// "Errors"); the trace itself keeps the code it was sent with.
	Unknown Code = "UNKNOWN"
)

// Known reports whether c is one of the codes above.
func (c Code) Known() bool {
	switch c {
	case EmptyCode, CodeTooLarge, SyntaxError, ClientToolsRequirePackage, UnknownTool, PermissionDenied,
		ExecutionTimeout, Cancelled, RPCTimeout, MemoryLimit, CodeError, ToolError, NetworkError,
		WorkflowNotFound, IntegrityError, Unauthorized, InvalidRequest, InvalidConfig, APIKeyRequired,
		NamespaceReserved, Overloaded, ElicitationRequired, Internal, Unknown:
		return true
	}
	return false
}

// Bounded is c when it is Known, else Unknown: what a metric label or a
// rollup key may hold, so that their values come from a fixed set whatever
// a client sends.
func (c Code) Bounded() Code {
	if c.Known() {
		return c
	}
	return Unknown
}

// Error is an error with a wire code, a human-readable message and optional
// details that are merged into the JSON error answer (e.g. "line", "column",
// "client_tools", "suggestions").
type Error struct {
	Code    Code
	Message string
	Details map[string]any
	Err     error // optional cause, for errors.Is/As; never shown on the wire
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return fmt.Sprintf("%s: %v", e.Code, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code whose message is err's text.
func Wrap(code Code, err error) *Error {
	return &Error{Code: code, Message: err.Error(), Err: err}
}

// With returns e with one more detail set. It mutates and returns e so calls chain.
func (e *Error) With(key string, value any) *Error {
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	e.Details[key] = value
	return e
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var pe *Error
	if errors.As(err, &pe) {
		return pe, true
	}
	return nil, false
}

// CodeOf returns err's wire code, or fallback when err carries none.
func CodeOf(err error, fallback Code) Code {
	if pe, ok := As(err); ok {
		return pe.Code
	}
	return fallback
}

// Message is err's human text: a *Error's message without the code prefix
// its Error() adds, for answers that carry the code in a field of its own.
func Message(err error) string {
	if pe, ok := As(err); ok && pe.Message != "" {
		return pe.Message
	}
	return err.Error()
}
