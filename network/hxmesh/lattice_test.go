package hxmesh

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/fabric"
)

// symmetryCase is a collective on a job placed on a fabric with board symmetry.
type symmetryCase struct {
	cfg  *Config
	col  network.Collective
	gpus int
}

// symmetryCases are the benchmarks' collectives on the large fabrics and, on small ones, rings,
// rings at a stride and all-to-alls of whole, partial and strided groups, on jobs that fill the
// fabric and jobs that do not.
func symmetryCases() []symmetryCase {
	var cases []symmetryCase
	for _, bc := range benchCases {
		cases = append(cases, symmetryCase{bc.cfg(), bc.col, bc.gpus})
	}
	ar := func(size, stride int) network.Collective {
		return network.Collective{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: size, Stride: stride}, DType: dtype.FP16}
	}
	a2a := func(size, stride int) network.Collective {
		return network.Collective{Op: network.AllToAll, Bytes: 1e8, Group: network.Group{Size: size, Stride: stride}, DType: dtype.FP16}
	}
	for _, cfg := range []func() *Config{
		func() *Config { return small(2, 2, 4, 4, 64, "trees") },
		func() *Config { return small(2, 2, 8, 8, 8, "trees") },
		func() *Config { return small(2, 2, 4, 3, 64, "torus") },
		func() *Config { return mesh(2, 8, "torus") },
		func() *Config { c := mesh(4, 4, "trees"); c.Placement = "rows"; return c },
		func() *Config { c := mesh(1, 16, "trees"); c.SimPlanes = 4; return c },
	} {
		n := cfg().Endpoints()
		for _, col := range []network.Collective{ar(n, 1), ar(n/4, 1), ar(4, n/8), ar(16, 1), ar(8, 2), a2a(n/4, 1), a2a(4, n/4), a2a(n/2, 2)} {
			for _, gpus := range []int{n, n - n/8} {
				cases = append(cases, symmetryCase{cfg(), col, gpus})
			}
		}
	}
	// Pairs at stride 70 on 192 ranks of the 16×16 torus: periodic rounds whose flows after the
	// last whole period cross links the copies load (fabric/windows.go).
	cases = append(cases, symmetryCase{mesh(2, 8, "torus"), ar(2, 70), 192})
	return cases
}

// reference prices c with every algorithm the network offers on a model of the job on
// fast(fabric) (nil: the network's own model) and on one on ref(fabric), and calls check with
// both (errors included).
func reference(t *testing.T, cases []symmetryCase, fast, ref func(*fabric.Graph) *fabric.Graph, check func(c symmetryCase, a string, x, y network.Cost, err1, err2 error)) {
	t.Helper()
	for _, c := range cases {
		for _, a := range algorithms {
			if !a.Implements(c.col.Op) {
				continue
			}
			c.cfg.Strategy = a.Name()
			sym, err := Spec().New(c.cfg, network.Env{GPUs: c.gpus})
			if err != nil {
				t.Fatal(err)
			}
			g, _ := c.cfg.Fabric()
			opt := c.cfg.Common.Options(Name, algorithms)
			opt.Tiers, opt.Grid, opt.Placement = c.cfg.Tiers(), grid{c.cfg}, c.cfg.placement()
			if fast != nil {
				if sym, err = fabric.NewModel(fast(g), network.Env{GPUs: c.gpus}, opt); err != nil {
					t.Fatal(err)
				}
			}
			plain, err := fabric.NewModel(ref(g), network.Env{GPUs: c.gpus}, opt)
			if err != nil {
				t.Fatal(err)
			}
			x, err1 := sym.Price(c.col)
			y, err2 := plain.Price(c.col)
			check(c, a.Name(), x, y, err1, err2)
		}
	}
}

// Rounds whose flows a subgroup of the board translations maps onto themselves are routed
// towards one destination per orbit only (fabric/lattice.go), other rounds by flow type and
// period (fabric/types.go, periods.go): every algorithm's price equals the one with every flow
// routed (the fabric's symmetry dropped) up to the order of the float sums (relative 1e-12), on
// small fabrics and on the benchmarks' large ones, for jobs that fill the fabric (invariant
// rounds) and jobs that do not.
func TestSublatticeRouting(t *testing.T) {
	reference(t, symmetryCases(), nil, fabric.WithoutSymmetry, func(c symmetryCase, a string, x, y network.Cost, err1, err2 error) {
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%s %s %+v on %d: %v, every flow %v", c.cfg.Describe(), a, c.col.Group, c.gpus, err1, err2)
		}
		if err1 != nil {
			return
		}
		rel := func(p, q float64) float64 { return math.Abs(p-q) / max(math.Abs(q), 1e-300) }
		if x.Algorithm != y.Algorithm || rel(float64(x.Total), float64(y.Total)) > 1e-12 || rel(float64(x.H2T), float64(y.H2T)) > 1e-12 ||
			rel(float64(x.H2H), float64(y.H2H)) > 1e-12 {
			t.Errorf("%s %s %+v on %d: %+v, every flow routed %+v", c.cfg.Describe(), a, c.col.Group, c.gpus, x, y)
		}
	})
}

// Flow types (fabric/types.go) route one flow per (source representative, moved destination,
// weight) and move its shares to every flow of the type: each link receives the same shares in
// the same order as when every flow is routed itself, so every algorithm's price is equal bit for
// bit to the one without flow types (the symmetry and its sub-lattice routing kept; periods off,
// which group the shares per period), on the same cases as the sub-lattice test.
func TestFlowTypesExact(t *testing.T) {
	reference(t, symmetryCases(), fabric.WithoutPeriods, fabric.WithoutFlowTypes, func(c symmetryCase, a string, x, y network.Cost, err1, err2 error) {
		if (err1 == nil) != (err2 == nil) || (err1 == nil && x != y) {
			t.Errorf("%s %s %+v on %d: %+v (%v), every flow routed %+v (%v)", c.cfg.Describe(), a, c.col.Group, c.gpus, x, err1, y, err2)
		}
	})
}

// Runs' copies read along their move's cycles (fabric/runs.go, copiesAlong) put on each link the
// entries behind it nearest first, in the order the copies first load the links: the same
// shares summed in the same order as adding the copies link by link, so every algorithm's
// price, busiest link class included, is equal bit for bit (on the sub-lattice test's cases:
// the large fabrics' stride-96 rings are routed by runs).
func TestRunCyclesExact(t *testing.T) {
	reference(t, symmetryCases(), nil, fabric.WithoutRunCycles, func(c symmetryCase, a string, x, y network.Cost, err1, err2 error) {
		if (err1 == nil) != (err2 == nil) || (err1 == nil && x != y) {
			t.Errorf("%s %s %+v on %d: %+v (%v), copies added %+v (%v)", c.cfg.Describe(), a, c.col.Group, c.gpus, x, err1, y, err2)
		}
	})
}

// Windows (fabric/windows.go) read a periodic round's busiest link per τ-cycle instead of
// adding its copies link by link: the same shares summed in the same order, so every
// algorithm's price, busiest link class included, is equal bit for bit to the copies' (on the
// same cases as the sub-lattice test: the large fabrics' stride-96 rings are periodic).
func TestWindowsExact(t *testing.T) {
	reference(t, symmetryCases(), nil, fabric.WithoutWindows, func(c symmetryCase, a string, x, y network.Cost, err1, err2 error) {
		if (err1 == nil) != (err2 == nil) || (err1 == nil && x != y) {
			t.Errorf("%s %s %+v on %d: %+v (%v), copies added %+v (%v)", c.cfg.Describe(), a, c.col.Group, c.gpus, x, err1, y, err2)
		}
	})
}

// Permuted rounds (fabric/permuted.go) are read from a routed round with the same parts in
// another order, every weight times one power of two, where the parts that load common link
// orbits keep their order: the same shares summed in the same order, each times the power of
// two, so every algorithm's price, busiest link class included, is equal bit for bit to the one
// with every round routed (on the sub-lattice test's cases, the graph's routed rounds forgotten
// first: the torus all-reduce over every accelerator of a square grid reads its phase 2 from
// phases 1 and 3).
func TestPermutedRoundsExact(t *testing.T) {
	fresh := func(g *fabric.Graph) *fabric.Graph { g.Forget(); return g }
	reference(t, symmetryCases(), fresh, fabric.WithoutPermutedRounds, func(c symmetryCase, a string, x, y network.Cost, err1, err2 error) {
		if (err1 == nil) != (err2 == nil) || (err1 == nil && x != y) {
			t.Errorf("%s %s %+v on %d: %+v (%v), every round routed %+v (%v)", c.cfg.Describe(), a, c.col.Group, c.gpus, x, err1, y, err2)
		}
	})
}
