package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
)

func main() {
	atomicfile.BeforeFirstTemp(handleInterrupts)
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	if stopping.Load() {
		select {} // the handler exits; the command's own failure (its files removed) is not the story
	}
	os.Exit(code)
}

// stopping: a signal arrived and its handler is removing the temporaries.
var stopping atomic.Bool

// handleInterrupts makes an interrupted command leave nothing behind: its temporary outputs and
// spill files go, then it exits as a shell reports a signal (128 + the signal's number). It is
// installed before the command's first temporary file (atomicfile.BeforeFirstTemp); until then
// a signal stops the process itself, which a shell reports with the same code, and there is
// nothing to remove.
func handleInterrupts() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		stopping.Store(true)
		atomicfile.RemoveTemporaries()
		fmt.Fprintf(os.Stderr, "ddlest: %v; stopped, nothing written\n", s)
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}

// run executes the command line and returns the exit code: 0 ok, 1 runtime error, 2 bad usage or
// input, 3 infeasible configuration. Errors are printed once, on one line, to stderr.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		// Last line of defence: a bug must not reach the user as a stack trace.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "ddlest: internal error: %v (please report it with the command line)\n", r)
			code = errs.ExitRuntime
		}
	}()
	root := newRootCommand(stdout, stderr, args)
	defer forgetFlags(root)
	setupFlags(root, args)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return errs.ExitOK
	}
	if msg := err.Error(); strings.HasPrefix(msg, "unknown command") {
		// cobra's own argument check: the user typed a command that does not exist. Its message
		// is several lines ("…\n\nDid you mean this?\n\tmoe\n"): keep the first and the
		// suggestions.
		lines := strings.Split(msg, "\n")
		var names, similar []string
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") {
				similar = append(similar, strings.TrimSpace(l))
			}
		}
		for _, c := range root.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				names = append(names, c.Name())
			}
		}
		hint := ""
		if len(similar) > 0 {
			hint = " (did you mean " + strings.Join(similar, " or ") + "?)"
		}
		err = errs.AsUsage(fmt.Errorf("%s%s; valid: %s", lines[0], hint, strings.Join(names, ", ")))
	}
	fmt.Fprintln(stderr, "ddlest: "+oneLine(err.Error()))
	return errs.ExitCode(err)
}

func oneLine(s string) string {
	if isOneLine(s) {
		return s // most messages (a sweep writes one per point that did not run)
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// isOneLine: s is already what oneLine makes of it (words separated by single spaces).
func isOneLine(s string) bool {
	prev := ' ' // as if a space came before: s must not start with one
	for _, r := range s {
		if unicode.IsSpace(r) && (r != ' ' || prev == ' ') {
			return false
		}
		prev = r
	}
	return prev != ' ' || s == ""
}
