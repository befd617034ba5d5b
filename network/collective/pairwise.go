package collective

import (
	"github.com/ddlest/ddlest/internal/units"
)

// pairwise appends the pairwise-exchange all-to-all (Thakur et al. 2005) over levels: in step
// k = 1 … p−1 every member sends its S/p block to the member k away (XOR partner for powers of
// two). The steps whose partner lies inside a level-i unit run on level i: with cumulative unit
// sizes c_0 < c_1 < …, level i hosts c_i − c_{i−1} of the p−1 steps. On a physical ring a step j
// positions away travels min(j, n−j) hops and loads each link with that many blocks.
func pairwise(steps []Step, chunk units.Bytes, act []Level, p int) []Step {
	inner := 1
	for _, l := range act {
		outer := min(inner*l.Size, p) // the real members bound the outermost level
		if !l.Ring {
			steps = append(steps, Step{Link: l.Link, Bytes: chunk, Repeat: outer - inner})
		} else {
			// Partner offset j along the ring, once for every combination of inner offsets.
			for j := 1; j < l.Size; j++ {
				link, load := shifted(l, j)
				steps = append(steps, Step{Link: link, Bytes: chunk, Load: load, Repeat: inner})
			}
		}
		inner = outer
	}
	return steps
}
