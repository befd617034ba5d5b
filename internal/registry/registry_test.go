package registry

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

func TestLookup(t *testing.T) {
	r := New[int]("network").Add("ideal", 1).Add("alphabeta", 2)
	if v, err := r.Lookup("alphabeta"); err != nil || v != 2 {
		t.Fatalf("Lookup = %v, %v", v, err)
	}
	_, err := r.Lookup("ramp2")
	if err == nil || errs.ExitCode(err) != errs.ExitUsage {
		t.Fatalf("unknown name: err = %v", err)
	}
	if !strings.Contains(err.Error(), `"ramp2"`) || !strings.Contains(err.Error(), "ideal, alphabeta") {
		t.Errorf("message %q should name the bad value and the valid ones", err)
	}
	if got := strings.Join(r.Names(), ","); got != "ideal,alphabeta" {
		t.Errorf("Names = %q", got)
	}
	if got := r.All(); len(got) != 2 || got[0] != 1 {
		t.Errorf("All = %v", got)
	}
	if v, ok := r.Get("ideal"); !ok || v != 1 {
		t.Errorf("Get(ideal) = %v, %v", v, ok)
	}
	if v, ok := r.Get("ramp2"); ok || v != 0 {
		t.Errorf("Get(ramp2) = %v, %v, want the zero value and false", v, ok)
	}
}

func TestDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	New[int]("x").Add("a", 1).Add("a", 2)
}
