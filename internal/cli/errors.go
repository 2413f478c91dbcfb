package cli

import (
	"errors"
	"fmt"
)

// Exit codes of perfwh (docs/cli.md).
const (
	ExitOK           = 0   // everything worked
	ExitFailure      = 1   // the command failed (store unreachable, verification failed, ...)
	ExitUsage        = 2   // bad flags, arguments or input files; nothing was run or written
	ExitTrialsFailed = 3   // the run was stored, but some trials failed or timed out
	ExitUnsafe       = 4   // a number is not publication-safe (lineage)
	ExitInterrupted  = 130 // interrupted; finished trials were stored as a partial run
)

// ExitError carries an exit code with an error. A nil Err means the command
// already reported everything (for example a verification table) and only
// the code remains to be set.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageError marks bad input: exit code 2.
func usageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// usageErrorf formats a usage error.
func usageErrorf(format string, args ...any) error { return usageError(fmt.Errorf(format, args...)) }

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}
