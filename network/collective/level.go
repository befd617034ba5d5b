package collective

import "github.com/ddlest/ddlest/internal/units"

// Level is one dimension of a group's decomposition on a hierarchical topology, innermost
// (fastest) first: Size members along it, and the Link a step between neighbouring members uses.
// A network model produces the levels of a group from its placement (see network/topology);
// algorithms consume them.
type Level struct {
	Size int
	Link Link
	// Ring marks a physical ring (a torus dimension): a message to the member k positions away
	// travels min(k, Size−k) hops, and when every member sends k positions away each link carries
	// that many messages at once.
	Ring bool
	// Duplex says a member can send to both ring neighbours at full bandwidth at once (the ±
	// ports of a torus dimension), which a bidirectional ring exploits.
	Duplex bool
}

// Layout is a group decomposed into levels (innermost first). P is its real number of members:
// the product of the level sizes can exceed it when the group does not fill its outermost units
// evenly (65,536 GPUs are 8 × 20 × 20 × 20.48).
type Layout struct {
	Levels []Level
	P      int
}

// Flat is a layout of p members on one level.
func Flat(p int, l Link) Layout { return Layout{Levels: []Level{{Size: p, Link: l}}, P: p} }

// members is the real member count.
func (l Layout) members() int {
	if l.P > 0 {
		return l.P
	}
	return ranks(l.Levels)
}

// ranks is the number of members of a group decomposed into levels.
func ranks(levels []Level) int {
	p := 1
	for _, l := range levels {
		p *= max(1, l.Size)
	}
	return p
}

// active returns the levels with more than one member.
func active(levels []Level) []Level {
	out := make([]Level, 0, len(levels))
	for _, l := range levels {
		if l.Size > 1 {
			out = append(out, l)
		}
	}
	return out
}

// critical is the link that bounds a step touching every level: the largest latency and the
// smallest bandwidth among the active levels (RAMP §7.4.1: "the worst performing path").
func critical(levels []Level) Link {
	var c Link
	first := true
	for _, l := range levels {
		if l.Size <= 1 {
			continue
		}
		if first || l.Link.Latency > c.Latency {
			c.Latency = l.Link.Latency
		}
		if first || l.Link.Bandwidth < c.Bandwidth {
			c.Bandwidth, c.Name = l.Link.Bandwidth, l.Link.Name
		}
		first = false
	}
	return c
}

// merge collapses levels into one: Size is their product, the link the critical one.
func merge(levels []Level) Level {
	l := Level{Size: ranks(levels), Link: critical(levels), Duplex: len(levels) > 0}
	for _, x := range levels {
		l.Ring = l.Ring || (x.Ring && x.Size > 1)
		l.Duplex = l.Duplex && x.Duplex
	}
	return l
}

// spans returns, for a distance d in the group's rank order (members 0..p−1 laid out level by
// level), the level a message between members d apart crosses and the member offset along that
// level.
func spans(levels []Level, d int) (Level, int) {
	inner := 1
	for i, l := range levels {
		size := max(1, l.Size)
		if d < inner*size || i == len(levels)-1 {
			return l, max(1, d/inner)
		}
		inner *= size
	}
	return Level{}, 0
}

// shifted is the link of a step in which every member sends to the member k positions away along
// level l: on a physical ring the message travels min(k, n−k) hops and each link carries that many
// messages; on a switched level it is the level's link.
func shifted(l Level, k int) (Link, float64) {
	if !l.Ring || l.Size <= 1 {
		return l.Link, 1
	}
	h := min(k%l.Size, l.Size-k%l.Size)
	h = max(1, h)
	return Link{Latency: l.Link.Latency * units.Seconds(h), Bandwidth: l.Link.Bandwidth}, float64(h)
}
