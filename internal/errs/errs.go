package errs

import (
	"errors"
	"fmt"
)

// Exit codes (DESIGN.md "Thin commands").
const (
	ExitOK         = 0
	ExitRuntime    = 1
	ExitUsage      = 2
	ExitInfeasible = 3
)

// UsageError marks bad user input: an invalid flag value, an unknown name, a malformed config.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// InfeasibleError marks a well-formed configuration that cannot run, e.g. a plan whose memory
// footprint exceeds the GPU. Detail carries the evidence (such as the footprint) for the user.
type InfeasibleError struct {
	Err    error
	Detail string
}

func (e *InfeasibleError) Error() string {
	if e.Detail == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + ": " + e.Detail
}
func (e *InfeasibleError) Unwrap() error { return e.Err }

// Usage builds a UsageError from a format string.
func Usage(format string, a ...any) error {
	return &UsageError{Err: fmt.Errorf(format, a...)}
}

// AsUsage wraps err as a UsageError (nil stays nil).
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*UsageError](err); ok {
		return err
	}
	return &UsageError{Err: err}
}

// Infeasible builds an InfeasibleError.
func Infeasible(detail string, format string, a ...any) error {
	return &InfeasibleError{Err: fmt.Errorf(format, a...), Detail: detail}
}

// ExitCode maps an error to the process exit code. It allocates nothing (errors.AsType, not
// errors.As, whose target escapes): a sweep classifies every point that does not run by it.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	if _, ok := errors.AsType[*UsageError](err); ok {
		return ExitUsage
	}
	if _, ok := errors.AsType[*InfeasibleError](err); ok {
		return ExitInfeasible
	}
	return ExitRuntime
}
