package topology

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// A SuperPod-like hierarchy: 8 GPUs per DGX, 20 DGX per leaf, 20 leaves per spine group.
func superpod() []Tier {
	return []Tier{
		{Name: "nvlink", Span: 8, Link: collective.Link{Bandwidth: 300e9}},
		{Name: "leaf", Span: 160, Link: collective.Link{Bandwidth: 25e9}},
		{Name: "spine", Span: 3200, Link: collective.Link{Bandwidth: 25e9}},
		{Name: "core", Span: 65536, Link: collective.Link{Bandwidth: 25e9}},
	}
}

func sizes(ls []collective.Level) []int {
	var s []int
	for _, l := range ls {
		s = append(s, l.Size)
	}
	return s
}

func TestLevels(t *testing.T) {
	cases := []struct {
		g    network.Group
		want []int
	}{
		{network.Group{Size: 8, Stride: 1}, []int{8, 1, 1, 1}},        // a TP group inside a DGX
		{network.Group{Size: 32, Stride: 1}, []int{8, 4, 1, 1}},       // TP 32: 4 DGX under one leaf
		{network.Group{Size: 64, Stride: 32}, []int{1, 5, 13, 1}},     // DP across TP-32 blocks: 5 per leaf, ⌈64/5⌉ = 13
		{network.Group{Size: 65536, Stride: 1}, []int{8, 20, 20, 21}}, // the whole machine: ⌈65536/3200⌉ = 21 spine groups
		{network.Group{Size: 2, Stride: 16384}, []int{1, 1, 1, 2}},    // a pipeline pair far apart
		{network.Group{Size: 1, Stride: 1}, []int{1, 1, 1, 1}},
	}
	for _, c := range cases {
		got := sizes(Levels(superpod(), c.g).Levels)
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%+v: levels %v, want %v", c.g, got, c.want)
				break
			}
		}
	}
}

// On a torus dimension, members Stride apart are Stride hops apart and the Stride interleaved
// groups share the links.
func TestRingStride(t *testing.T) {
	tiers := []Tier{
		{Name: "x", Span: 128, Ring: true, Link: collective.Link{Latency: units.Ns(100), Bandwidth: 75e9}},
		{Name: "y", Span: 128 * 512, Ring: true, Link: collective.Link{Latency: units.Ns(200), Bandwidth: 75e9}},
	}
	ls := Levels(tiers, network.Group{Size: 16, Stride: 8}).Levels
	if ls[0].Size != 16 || ls[0].Link.Latency != units.Ns(800) || ls[0].Link.Bandwidth != 75e9/8 {
		t.Errorf("x level %+v", ls[0])
	}
	// A group one per row: stride 128 along y is one hop.
	ls = Levels(tiers, network.Group{Size: 512, Stride: 128}).Levels
	if ls[0].Size != 1 || ls[1].Size != 512 || ls[1].Link.Latency != units.Ns(200) || ls[1].Link.Bandwidth != 75e9 {
		t.Errorf("y level %+v", ls[1])
	}
}
