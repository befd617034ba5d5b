//go:build unix

package atomicfile

import (
	"errors"
	"syscall"
)

// alive reports whether process pid may still run (signal 0 probes without signalling).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
