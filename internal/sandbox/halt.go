package sandbox

// HaltError wraps an error so that, returned from the CallFunc, it stops the
// whole run at once: the JS code cannot catch it, no other pending result is
// delivered, and Run returns the CallFunc's error unchanged (errors.As finds
// the *HaltError). It is how an "approval required" pause leaves a run.
type HaltError struct{ Err error }

func (e *HaltError) Error() string {
	if e.Err == nil {
		return "sandbox: run halted"
	}
	return e.Err.Error()
}

func (e *HaltError) Unwrap() error { return e.Err }
