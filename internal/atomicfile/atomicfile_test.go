package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
