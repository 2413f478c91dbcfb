package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
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

// exactArgs is cobra.ExactArgs with a usage error (exit 2).
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError(fmt.Errorf("%w\nUsage: %s", err, cmd.UseLine()))
		}
		return nil
	}
}

// noArgs is cobra.NoArgs with a usage error (exit 2).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unknown command or argument %q for %q\nSee '%s --help'.", args[0], cmd.CommandPath(), cmd.CommandPath())
	}
	return nil
}
