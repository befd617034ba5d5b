package enum

import (
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

type colour int

func TestParse(t *testing.T) {
	names := []string{"red", "green"}
	if c, err := Parse[colour]("--colour", "green", names); err != nil || c != 1 {
		t.Errorf("green = %v, %v", c, err)
	}
	_, err := Parse[colour]("--colour", "blue", names)
	if errs.ExitCode(err) != errs.ExitUsage || err.Error() != `--colour "blue" is not valid; valid: red, green` {
		t.Errorf("blue: %v", err)
	}
}
