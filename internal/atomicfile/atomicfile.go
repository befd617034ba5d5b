package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/ddlest/ddlest/internal/errs"
)

// Write creates path with mode 0644 from what write produces. A path that is a directory, or in
// a directory that does not exist, is a usage error; a failure while writing (a full disk) is
// an I/O error (exit 1) naming path. Nothing is left behind on failure.
func Write(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errs.Usage("%s is a directory; give a file name", path)
	}
	tmp, err := Temp(filepath.Dir(path), "."+filepath.Base(path))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer Release(tmp) // a no-op after the rename
	if err := write(tmp); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	untrack(tmp.Name())
	return nil
}

// unwrapPath drops an *fs.PathError's or *os.LinkError's operation and temporary name, keeping
// the cause (the caller names the user's path).
func unwrapPath(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// NotAnInput refuses an output that is one of the inputs (the same file, by any name): writing
// it would destroy what is being read. flag names the output in the error.
func NotAnInput(flag, out string, inputs ...string) error {
	o, err := os.Stat(out)
	if err != nil {
		return nil // a new file cannot be an input
	}
	for _, in := range inputs {
		if i, err := os.Stat(in); err == nil && os.SameFile(o, i) {
			return errs.Usage("%s %s: the output is the input %s; write to another file", flag, out, in)
		}
	}
	return nil
}

// Temporary files of this process: a signal handler removes them (RemoveTemporaries) before
// the process exits, so an interrupted command leaves nothing behind.
var live = struct {
	sync.Mutex
	m map[string]*os.File
}{m: map[string]*os.File{}}

// armed runs the function BeforeFirstTemp registered, once, before the first temporary file.
var armed struct {
	once sync.Once
	fn   func()
}

// BeforeFirstTemp registers fn to run once, before this process creates its first temporary
// file (Temp, Write): a command installs its interrupt handler there, so one that writes no file
// does not pay for it (os/signal's goroutines start a thread: ≈ 0.3 ms of a 5 ms process).
// Call it before any Temp.
func BeforeFirstTemp(fn func()) { armed.fn = fn }

// Temp creates a temporary file in dir (the system temporary directory when empty) named
// prefix.PID.*.tmp, tracked until Release (or a successful Write) and removed by
// RemoveTemporaries. It first removes the prefix's temporaries left in dir by processes that no
// longer run (killed before they could clean up). A directory that does not exist is a usage
// error.
func Temp(dir, prefix string) (*os.File, error) {
	armed.once.Do(func() {
		if armed.fn != nil {
			armed.fn()
		}
	})
	if dir == "" {
		dir = os.TempDir()
	}
	removeStale(dir, prefix)
	// Created and registered under the lock: a signal handler's RemoveTemporaries waits for the
	// file to be known rather than miss it.
	live.Lock()
	defer live.Unlock()
	f, err := os.CreateTemp(dir, prefix+"."+strconv.Itoa(os.Getpid())+".*.tmp")
	if err != nil {
		cause := unwrapPath(err)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, errs.Usage("directory %s does not exist", dir)
		}
		return nil, fmt.Errorf("temporary file in %s: %w", dir, cause)
	}
	live.m[f.Name()] = f
	return f, nil
}

// Release closes and removes a temporary file from Temp (a no-op for one already renamed).
func Release(f *os.File) {
	if f == nil {
		return
	}
	f.Close()
	live.Lock()
	_, ok := live.m[f.Name()]
	delete(live.m, f.Name())
	live.Unlock()
	if ok {
		os.Remove(f.Name())
	}
}

func untrack(name string) {
	live.Lock()
	delete(live.m, name)
	live.Unlock()
}

// RemoveTemporaries closes and removes every temporary file this process holds.
func RemoveTemporaries() {
	live.Lock()
	defer live.Unlock()
	for name, f := range live.m {
		f.Close()
		os.Remove(name)
		delete(live.m, name)
	}
}

// removeStale removes dir's prefix.PID.*.tmp files whose process is gone.
func removeStale(dir, prefix string) {
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(prefix)+".*.*.tmp"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), prefix+".")
		pid, err := strconv.Atoi(rest[:max(0, strings.IndexByte(rest, '.'))])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		os.Remove(m)
	}
}

func globEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`)
	return r.Replace(s)
}
