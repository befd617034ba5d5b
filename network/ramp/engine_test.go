package ramp

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gorgonia.org/tensor"
)

// Networks for the functional proof: the paper's Fig. 8 example (x = 3, J = 3, Λ = 6: 54 nodes)
// and others, including partly filled ones (fewer racks than x, or Λ = x so step 4 is idle).
var engineConfigs = []struct{ x, j, l int }{
	{3, 3, 6}, {4, 2, 8}, {4, 4, 4}, {5, 3, 10}, {2, 1, 2}, {4, 3, 12}, {2, 2, 6},
}

func engineConfig(x, j, l int) *Config {
	c := DefaultConfig()
	c.X, c.J, c.Lambda = x, j, l
	return c
}

func digits(c *Config, r int) [Steps]int {
	var d [Steps]int
	sizes := c.StepSizes()
	for s := Steps - 1; s >= 0; s-- {
		d[s] = r % sizes[s]
		r /= sizes[s]
	}
	return d
}

func rowsOf(t *testing.T, a *tensor.Dense, lo, hi int) *tensor.Dense {
	t.Helper()
	v, err := a.Slice(tensor.S(lo, hi))
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Materialize(v).(*tensor.Dense)
}

func sum(t *testing.T, xs []*tensor.Dense) *tensor.Dense {
	t.Helper()
	acc := xs[0].Clone().(*tensor.Dense)
	for _, x := range xs[1:] {
		if _, err := acc.Add(x, tensor.UseUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	return acc
}

func cat(t *testing.T, xs []*tensor.Dense) *tensor.Dense {
	t.Helper()
	if len(xs) == 1 {
		return xs[0]
	}
	rest := make([]tensor.Tensor, len(xs)-1)
	for i, x := range xs[1:] {
		rest[i] = x
	}
	c, err := tensor.Concat(0, xs[0], rest...)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*tensor.Dense)
}

func equal(t *testing.T, what string, got, want *tensor.Dense) {
	t.Helper()
	g, w := got.Data().([]float64), want.Data().([]float64)
	if len(g) != len(w) {
		t.Fatalf("%s: %d values, want %d", what, len(g), len(w))
	}
	for i := range w {
		if math.Abs(g[i]-w[i]) > 1e-9 {
			t.Fatalf("%s: value %d = %g, want %g", what, i, g[i], w[i])
		}
	}
}

// groups lists the subgroups of step s, members ordered by their info digit.
func groups(c *Config, s int) [][]int {
	by := map[int][]int{}
	for n := 0; n < c.Nodes(); n++ {
		id := c.SubgroupID(s, c.Coord(n))
		by[id] = append(by[id], n)
	}
	var out [][]int
	for _, m := range by {
		sort.Slice(m, func(a, b int) bool { return c.Info(s, c.Coord(m[a])) < c.Info(s, c.Coord(m[b])) })
		out = append(out, m)
	}
	return out
}

// Reduce-scatter (steps 1→4): each node keeps portion Info_s of its buffer, receives the same
// portion from its subgroup peers and sums; after the last step node t holds the global sum of
// block Rank(t). All-gather (steps 4→1) concatenates the members' buffers in info order. All-reduce
// is both; every node ends with the global sum.
func TestRAMPxReduceScatterAllGatherAllReduce(t *testing.T) {
	const width = 3
	for _, cf := range engineConfigs {
		c := engineConfig(cf.x, cf.j, cf.l)
		n := c.Nodes()
		r := rand.New(rand.NewPCG(uint64(n), 7))
		orig := make([]*tensor.Dense, n)
		for i := range orig {
			d := make([]float64, n*width)
			for k := range d {
				d[k] = float64(r.IntN(1000))
			}
			orig[i] = tensor.New(tensor.WithShape(n, width), tensor.WithBacking(d))
		}
		total := sum(t, orig)

		// Reduce-scatter.
		buf := append([]*tensor.Dense(nil), orig...)
		for s, size := range c.StepSizes() {
			if size == 1 {
				continue
			}
			next := make([]*tensor.Dense, n)
			for _, g := range groups(c, s) {
				rows := buf[g[0]].Shape()[0] / size
				for _, tn := range g {
					p := c.Info(s, c.Coord(tn))
					var parts []*tensor.Dense
					for _, m := range g {
						parts = append(parts, rowsOf(t, buf[m], p*rows, (p+1)*rows))
					}
					next[tn] = sum(t, parts)
				}
			}
			buf = next
		}
		ranks := map[int]bool{}
		for tn := 0; tn < n; tn++ {
			rk := c.Rank(c.Coord(tn))
			ranks[rk] = true
			equal(t, "reduce-scatter", buf[tn], rowsOf(t, total, rk, rk+1))
		}
		if len(ranks) != n {
			t.Fatalf("x=%d J=%d Λ=%d: %d distinct ranks for %d nodes", cf.x, cf.j, cf.l, len(ranks), n)
		}

		// All-gather of the reduced blocks (this completes the all-reduce).
		for s := Steps - 1; s >= 0; s-- {
			if c.StepSizes()[s] == 1 {
				continue
			}
			next := make([]*tensor.Dense, n)
			for _, g := range groups(c, s) {
				var parts []*tensor.Dense
				for _, m := range g {
					parts = append(parts, buf[m])
				}
				whole := cat(t, parts)
				for _, tn := range g {
					next[tn] = whole
				}
			}
			buf = next
		}
		for tn := 0; tn < n; tn++ {
			equal(t, "all-reduce", buf[tn], total)
		}
	}
}

// All-to-all (steps 1→4, Table 8): node t sends each peer the rows whose destination rank has
// the peer's digit for this step; afterwards node t holds, from every source, exactly the block
// addressed to Rank(t).
func TestRAMPxAllToAll(t *testing.T) {
	for _, cf := range engineConfigs {
		c := engineConfig(cf.x, cf.j, cf.l)
		n := c.Nodes()
		type row struct{ src, dst int }
		// Block (src rank, dst rank) carries the value src·n + dst.
		hold := make([][]row, n)
		for tn := 0; tn < n; tn++ {
			src := c.Rank(c.Coord(tn))
			for d := 0; d < n; d++ {
				hold[tn] = append(hold[tn], row{src, d})
			}
		}
		for s, size := range c.StepSizes() {
			if size == 1 {
				continue
			}
			next := make([][]row, n)
			for _, g := range groups(c, s) {
				for _, tn := range g {
					want := c.Info(s, c.Coord(tn))
					for _, m := range g {
						for _, b := range hold[m] {
							if digits(c, b.dst)[s] == want {
								next[tn] = append(next[tn], b)
							}
						}
					}
				}
			}
			hold = next
		}
		for tn := 0; tn < n; tn++ {
			me := c.Rank(c.Coord(tn))
			vals := make([]float64, 0, n)
			srcs := map[int]bool{}
			for _, b := range hold[tn] {
				if b.dst != me {
					t.Fatalf("x=%d J=%d Λ=%d: node %d holds a block for rank %d", cf.x, cf.j, cf.l, tn, b.dst)
				}
				srcs[b.src] = true
				vals = append(vals, float64(b.src*n+b.dst))
			}
			if len(srcs) != n || len(vals) != n {
				t.Fatalf("node %d holds %d blocks from %d sources, want %d", tn, len(vals), len(srcs), n)
			}
			got := tensor.New(tensor.WithShape(n), tensor.WithBacking(vals))
			sort.Float64s(vals)
			want := make([]float64, n)
			for s := range want {
				want[s] = float64(s*n + me)
			}
			equal(t, "all-to-all", got, tensor.New(tensor.WithShape(n), tensor.WithBacking(want)))
		}
	}
}

// The structural check on small networks agrees with the functional runs: every subgroup is
// consistent.
func TestCheckScheduleSmall(t *testing.T) {
	for _, cf := range engineConfigs {
		c := engineConfig(cf.x, cf.j, cf.l)
		for s, r := range c.CheckSchedule() {
			if r.Inconsistent != 0 || r.Subgroups*r.Size != c.Nodes() {
				t.Errorf("x=%d J=%d Λ=%d step %d: %+v", cf.x, cf.j, cf.l, s+1, r)
			}
		}
	}
}
