package enum

import (
	"fmt"
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

// Unmarshal sets *dst to the value named s (for encoding.TextUnmarshaler implementations); the
// error names s and the valid names, and the caller's decoder adds the key.
func Unmarshal[T ~int](dst *T, s []byte, names []string) error {
	for i, n := range names {
		if string(s) == n {
			*dst = T(i)
			return nil
		}
	}
	return fmt.Errorf("%q is not valid; valid: %s", s, strings.Join(names, ", "))
}
