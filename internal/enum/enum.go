package enum

import (
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
)

// Parse returns the value named s, or a usage error naming s and listing the valid names. what
// says what is being parsed, e.g. "--recompute" or "scaling law".
func Parse[T ~int](what, s string, names []string) (T, error) {
	for i, n := range names {
		if s == n {
			return T(i), nil
		}
	}
	return 0, errs.Usage("%s %q is not valid; valid: %s", what, s, strings.Join(names, ", "))
}
