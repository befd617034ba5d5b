package errs

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("disk full"), 1},
		{Usage("bad %s", "flag"), 2},
		{fmt.Errorf("context: %w", Usage("bad")), 2},
		{Infeasible("40 GB > 32 GB", "does not fit"), 3},
		{AsUsage(errors.New("x")), 2},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if AsUsage(nil) != nil {
		t.Error("AsUsage(nil) != nil")
	}
	if got := Infeasible("detail", "msg").Error(); got != "msg: detail" {
		t.Errorf("Infeasible text = %q", got)
	}
}
