package main

import (
	"strings"
	"testing"
)

// TestOneLine: a message already on one line with single spaces is returned as it is; any other
// gets its lines joined with "; " and its runs of white space made one space (strings.Fields).
func TestOneLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"tp 5 does not divide the 96 heads", "tp 5 does not divide the 96 heads"},
		{"weights 349 GB + grads ≥ 2.1 TB", "weights 349 GB + grads ≥ 2.1 TB"},
		{"a\nb", "a; b"},
		{" lead", "lead"},
		{"trail ", "trail"},
		{"two  spaces", "two spaces"},
		{"tab\there", "tab here"},
		{"nbsp\u00a0here", "nbsp here"},
		{" ", ""},
	} {
		if got := oneLine(c.in); got != c.want {
			t.Errorf("oneLine(%q) = %q, want %q", c.in, got, c.want)
		}
		if slow := strings.Join(strings.Fields(strings.ReplaceAll(c.in, "\n", "; ")), " "); slow != c.want {
			t.Errorf("%q: the test's want %q is not strings.Fields' %q", c.in, c.want, slow)
		}
	}
}
