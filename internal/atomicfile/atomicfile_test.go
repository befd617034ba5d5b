package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "hello"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// A failing writer leaves neither the file nor a temporary.
	bad := filepath.Join(dir, "bad.txt")
	err := Write(bad, func(w io.Writer) error { io.WriteString(w, "part"); return errors.New("boom") })
	if err == nil {
		t.Fatal("error swallowed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries, want only out.txt", len(entries))
	}
	if err := Write(filepath.Join(dir, "no", "such", "dir.txt"), func(io.Writer) error { return nil }); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("missing directory: %v", err)
	}
}

// The contract's edges: a directory as the output, a missing directory (usage, exit 2), an
// output that is an input (by another name), and temporaries: tracked until released, removed
// by RemoveTemporaries (the signal handler), and a killed run's left in the directory removed by
// the next write there (PID 4,194,311 is above Linux's largest, 2²², so no process has it).
func TestContract(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, func(io.Writer) error { return nil }); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory as output: %v", err)
	}
	in := filepath.Join(dir, "in.parquet")
	if err := os.WriteFile(in, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := NotAnInput("-o", filepath.Join(dir, ".", "in.parquet"), "other", in); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("output = input: %v", err)
	}
	if err := NotAnInput("-o", filepath.Join(dir, "new.parquet"), in); err != nil {
		t.Errorf("new output: %v", err)
	}
	stale := filepath.Join(dir, ".out.csv.4194311.123.tmp")
	mine := filepath.Join(dir, ".out.csv."+strconv.Itoa(os.Getpid())+".456.tmp")
	for _, p := range []string{stale, mine} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(filepath.Join(dir, "out.csv"), func(w io.Writer) error { _, err := io.WriteString(w, "a"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead process's temporary was kept: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Errorf("a live process's temporary was removed: %v", err)
	}
	os.Remove(mine)
	f, err := Temp(dir, "spill")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Temp(dir, "spill")
	if err != nil {
		t.Fatal(err)
	}
	Release(g)
	if _, err := os.Stat(g.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("released temporary kept")
	}
	RemoveTemporaries()
	if _, err := os.Stat(f.Name()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("RemoveTemporaries kept %s", f.Name())
	}
	if _, err := Temp(filepath.Join(dir, "nope"), "x"); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("missing temp dir: %v", err)
	}
}

// A full disk while writing is an I/O failure (exit 1, not bad input) naming the output, and
// leaves nothing behind: the writer's error is a real ENOSPC, from writing to Linux's /dev/full.
func TestFullDisk(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.parquet")
	err = Write(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, "rows"); err != nil {
			return err
		}
		_, err := full.Write([]byte("more rows"))
		return err
	})
	if !errors.Is(err, syscall.ENOSPC) || errs.ExitCode(err) != errs.ExitRuntime || !strings.Contains(err.Error(), path) {
		t.Errorf("full disk: %v (exit %d), want ENOSPC naming %s, exit 1", err, errs.ExitCode(err), path)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d entries left behind", len(entries))
	}
}

// TestBeforeFirstTemp: the registered function runs once, before the first temporary file
// exists, whether Temp or Write creates it.
func TestBeforeFirstTemp(t *testing.T) {
	armed.once = sync.Once{} // as a fresh process (other tests may have created files)
	defer func() { armed.fn = nil }()
	dir := t.TempDir()
	calls := 0
	BeforeFirstTemp(func() {
		calls++
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("ran after %s was created", entries[0].Name())
		}
	})
	if err := Write(filepath.Join(dir, "a"), func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	f, err := Temp(dir, "b")
	if err != nil {
		t.Fatal(err)
	}
	Release(f)
	if calls != 1 {
		t.Errorf("ran %d times, want once", calls)
	}
}
