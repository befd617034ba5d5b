package topology

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Tier is one level of a hierarchical network as one rank sees it.
type Tier struct {
	Name string
	// Span is the number of ranks one unit of this tier holds (cumulative and increasing: a
	// DGX 8, a leaf 160, …); the outermost tier's span covers the whole network.
	Span int
	// Link is what a step between two ranks whose smallest common unit is this tier uses.
	Link   collective.Link
	Ring   bool // a physical ring (torus dimension): neighbours only, multi-hop otherwise
	Duplex bool // ± ports along the ring
	// Circuit marks a ring of circuits set up per group (TopoOpt): a group's members are ring
	// neighbours whatever their stride in the rank order.
	Circuit bool
}

// Levels decomposes group g on tiers (innermost first): one level per tier, some of size 1; the
// product of the sizes is at least g.Size, which the layout keeps as its member count.
func Levels(tiers []Tier, g network.Group) collective.Layout {
	levels := make([]collective.Level, len(tiers))
	n, s := max(1, g.Size), max(1, g.Stride)
	prevMembers, prevSpan := 1, 1
	for i, t := range tiers {
		members := n
		if i < len(tiers)-1 {
			members = min(n, max(1, ceilDiv(t.Span, s)))
		}
		size := max(1, ceilDiv(members, prevMembers))
		l := collective.Level{Size: size, Link: t.Link, Ring: t.Ring, Duplex: t.Duplex}
		if l.Link.Name == "" {
			l.Link.Name = t.Name
		}
		if t.Ring && !t.Circuit && size > 1 && s > prevSpan {
			e := s / prevSpan // hops between consecutive members, = interleaved groups per link
			l.Link = collective.Link{Name: l.Link.Name, Latency: t.Link.Latency * units.Seconds(e), Bandwidth: t.Link.Bandwidth / units.BytesPerSecond(e)}
		}
		levels[i] = l
		prevMembers, prevSpan = members, t.Span
	}
	return collective.Layout{Levels: levels, P: n}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
