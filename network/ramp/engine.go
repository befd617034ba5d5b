package ramp

import "fmt"

// Coord is a node's RAMP coordinate: communication group g, rack j, device λ (RAMP §5).
type Coord struct{ G, J, L int }

// Coord returns node n's coordinate; nodes are numbered n = (g·J + j)·Λ + λ.
func (c *Config) Coord(n int) Coord {
	return Coord{G: n / (c.J * c.Lambda), J: (n / c.Lambda) % c.J, L: n % c.Lambda}
}

// Node is the inverse of Coord.
func (c *Config) Node(a Coord) int { return (a.G*c.J+a.J)*c.Lambda + a.L }

func mod(a, m int) int { return ((a % m) + m) % m }

// StepSizes are the subgroup sizes of the four steps on the whole network: x, x, J, Λ/x.
func (c *Config) StepSizes() [Steps]int { return [Steps]int{c.X, c.X, c.J, c.Lambda / c.X} }

// SubgroupID is the subgroup a node belongs to in step s (0-based), RAMP Table 5 with the
// corrections of reference/ramp.md §2.2–2.4:
//
//	step 1  λ + Λ·j                                    (Table 5)
//	step 2  (λ − g) mod x + Λ·j + ⌊λ/x⌋·x             (Table 5)
//	step 3  λ + Λ·((g − (1 + ⌊λ/x⌋)·j) mod x)         (corrected: as printed, "(λ + Λ(j − g)) mod
//	                                                   Λj" is undefined for j = 0 and, read as
//	                                                   mod Λx, inconsistent with Table 7 for ⌊λ/x⌋ ≥ 1)
//	step 4  (λ − ⌊λ/x⌋x) mod x + x²·j + ((g − j⌊λ/x⌋) mod x)·x   (Table 5, formula 1)
func (c *Config) SubgroupID(s int, a Coord) int {
	x, q := c.X, a.L/c.X
	switch s {
	case 0:
		return a.L + c.Lambda*a.J
	case 1:
		return mod(a.L-a.G, x) + c.Lambda*a.J + q*x
	case 2:
		return a.L + c.Lambda*mod(a.G-(1+q)*a.J, x)
	case 3:
		return mod(a.L-q*x, x) + x*x*a.J + mod(a.G-a.J*q, x)*x
	}
	panic(fmt.Sprintf("ramp: step %d", s))
}

// Info is the portion a node keeps (reduce-scatter) or owns (all-gather) at step s, RAMP Table 7:
//
//	step 1  (g − λ − j − ⌊λ/x⌋·j) mod x
//	step 2  (g − j − ⌊λ/x⌋·j) mod x
//	step 3  j
//	step 4  ⌊λ/x⌋
func (c *Config) Info(s int, a Coord) int {
	x, q := c.X, a.L/c.X
	switch s {
	case 0:
		return mod(a.G-a.L-a.J-q*a.J, x)
	case 1:
		return mod(a.G-a.J-q*a.J, x)
	case 2:
		return a.J
	case 3:
		return q
	}
	panic(fmt.Sprintf("ramp: step %d", s))
}

// Rank is the collective rank of a node: its four info digits read in mixed radix (x, x, J, Λ/x)
// ("The decimal representation of the information value at all algorithmic steps represents the
// rank of each node in the collective", §6.1.2). Block r of a buffer of N blocks ends at rank r.
func (c *Config) Rank(a Coord) int {
	r := 0
	for s, n := range c.StepSizes() {
		r = r*n + c.Info(s, a)
	}
	return r
}

// Trx is the transceiver group carrying src → dst traffic, RAMP Eq. (2): (g_src + g_dst + j_src)
// mod x.
func (c *Config) Trx(src, dst Coord) int { return mod(src.G+dst.G+src.J, c.X) }

// checkedGroups is how many transceiver groups the contention check assigns to one pair in step s
// of subgroup size d: Eq. (2)'s single group in steps 1–3, and in step 4 (formula 1) the x/(d−1)
// groups that let a node drive all x groups ("the number of transceiver groups used per
// communication is x as there would not be any contention", §6.2.2), consecutive from Eq. (2)'s.
func (c *Config) checkedGroups(s, d int) int {
	if s == Steps-1 && d > 1 {
		return max(1, c.X/(d-1))
	}
	return 1
}

// Step3Reuse is how many members of a step-3 subgroup share one communication group, the number
// of transmissions one (subnet, wavelength) must carry: members of the corrected step-3 subgroup
// satisfy g ≡ c + (1+q)·j (mod x), so racks x/gcd(1+q, x) apart land in the same group and the
// reuse is ⌈J / (x/gcd(1+q, x))⌉, maximised over the device groups q [D].
// With fewer racks in use (a job smaller than the network) racks is the step-3 subgroup size.
func (c *Config) Step3Reuse(racks int) int {
	r := 1
	for q := 0; q < c.Lambda/c.X; q++ {
		period := c.X / gcd(1+q, c.X)
		r = max(r, (racks+period-1)/period)
	}
	return r
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// StepReport is the structural check of one step over the whole network.
type StepReport struct {
	Subgroups int // number of subgroups
	Size      int // members per subgroup
	// Inconsistent counts subgroups whose members do not share the earlier info digits or do not
	// hold distinct current digits (a reduce-scatter would mix portions).
	Inconsistent int
	// Reuse is the largest number of transmissions one (subnet, wavelength) carries in the step
	// (1 = contention-free). A subnet is (g_src, g_dst, trx) with trx from Eq. (2) (checkedGroups);
	// a broadcast-and-select subnet reaches every rack, so the destination is told apart by its
	// wavelength λ_dst alone.
	Reuse int
}

// CheckSchedule verifies the subgroup and information maps and the contention of every step
// over the whole network (RAMP §5: "arranged in such a way that contention is avoided").
func (c *Config) CheckSchedule() [Steps]StepReport {
	var rep [Steps]StepReport
	n := c.Nodes()
	coords := make([]Coord, n)
	for i := range coords {
		coords[i] = c.Coord(i)
	}
	sizes := c.StepSizes()
	maxID := 0
	for s := 0; s < Steps; s++ {
		for _, a := range coords {
			maxID = max(maxID, c.SubgroupID(s, a))
		}
	}
	members := make([][]int32, maxID+1)
	use := make([]uint8, c.X*c.X*c.X*c.Lambda)
	for s := 0; s < Steps; s++ {
		for i := range members {
			members[i] = members[i][:0]
		}
		for i, a := range coords {
			id := c.SubgroupID(s, a)
			members[id] = append(members[id], int32(i))
		}
		r := &rep[s]
		r.Size = sizes[s]
		for _, m := range members {
			if len(m) == 0 {
				continue
			}
			r.Subgroups++
			if len(m) != sizes[s] || !c.consistent(s, m, coords) {
				r.Inconsistent++
			}
		}
		clear(use)
		for _, m := range members {
			for _, si := range m {
				src := coords[si]
				for _, di := range m {
					if di == si {
						continue
					}
					dst := coords[di]
					base := c.Trx(src, dst)
					for k := 0; k < c.checkedGroups(s, len(m)); k++ {
						t := (base + k) % c.X
						key := ((src.G*c.X+dst.G)*c.X+t)*c.Lambda + dst.L
						if use[key] < 255 {
							use[key]++
						}
						r.Reuse = max(r.Reuse, int(use[key]))
					}
				}
			}
		}
	}
	return rep
}

// consistent: members share the info digits of the earlier steps and hold distinct digits for
// this one.
func (c *Config) consistent(s int, m []int32, coords []Coord) bool {
	seen := map[int]bool{}
	first := coords[m[0]]
	for _, i := range m {
		a := coords[i]
		for e := 0; e < s; e++ {
			if c.Info(e, a) != c.Info(e, first) {
				return false
			}
		}
		d := c.Info(s, a)
		if seen[d] {
			return false
		}
		seen[d] = true
	}
	return true
}
