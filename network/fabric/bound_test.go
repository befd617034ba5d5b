package fabric_test

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/dragonfly"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/fattree"
	"github.com/ddlest/ddlest/network/hxmesh"
	"github.com/ddlest/ddlest/network/torus"
)

// boundCase is a job on a fabric model and the collectives priced on it.
type boundCase struct {
	name string
	m    *fabric.Model
	cols []network.Collective
}

// boundCases are HammingMesh (trees and torus cables, split and hash routing, the large Hx4Mesh),
// a Dragonfly, tapered fat trees (split and hash) and a routed torus, with collectives of every op
// over whole jobs, quarters, strided and small groups, latency-bound (1 kB) and bandwidth-bound
// (100 MB); on the large Hx4Mesh, the benchmarks' data-parallel all-reduce over 16,384 and GPT-3's
// tensor-parallel rings.
func boundCases(t *testing.T) []boundCase {
	hx := func(a, x int, global, routing string) network.Config {
		c := hxmesh.DefaultConfig()
		c.BoardA, c.BoardB, c.GridX, c.GridY, c.Global, c.Routing = a, a, x, x, global, routing
		return c
	}
	ft := func(routing string) network.Config {
		c := fattree.DefaultConfig()
		c.Endpoints, c.Taper, c.Routing = 256, 0.5, routing
		return c
	}
	tor := torus.DefaultConfig()
	tor.DimX, tor.DimY, tor.Routed = 8, 8, true
	small := func(n int) []network.Collective {
		var out []network.Collective
		for _, g := range []network.Group{{Size: n, Stride: 1}, {Size: n / 4, Stride: 1}, {Size: 4, Stride: n / 8}, {Size: n / 4, Stride: 2}} {
			for _, op := range network.Ops() {
				if op == network.SendRecv {
					continue
				}
				for _, s := range []units.Bytes{1e3, 1e8} {
					out = append(out, network.Collective{Op: op, Bytes: s, Group: g, DType: dtype.FP16})
				}
			}
		}
		return out
	}
	large := []network.Collective{
		{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP16},
		{Op: network.AllReduce, Bytes: 1e3, Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP16},
		{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16},
		{Op: network.Broadcast, Bytes: 1e8, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16},
	}
	var cases []boundCase
	for _, c := range []struct {
		name string
		spec network.Spec
		cfg  network.Config
		gpus int
		cols []network.Collective
	}{
		{"hx2 4×4 boards, trees", hxmesh.Spec(), hx(2, 4, "trees", "split"), 64, small(64)},
		{"hx2 4×4 boards, trees, hash", hxmesh.Spec(), hx(2, 4, "trees", "hash"), 64, small(64)},
		{"hx4 4×4 boards, torus cables", hxmesh.Spec(), hx(4, 4, "torus", "split"), 256, small(256)},
		{"hx4-large", hxmesh.Spec(), hx(4, 32, "trees", "split"), 16384, large},
		{"dragonfly", dragonfly.Spec(), dragonfly.DefaultConfig(), 1024, small(1024)[:16]},
		{"fat tree 50%", fattree.Spec(), ft("split"), 256, small(256)},
		{"fat tree 50%, hash", fattree.Spec(), ft("hash"), 256, small(256)},
		{"torus 8×8, routed", torus.Spec(), tor, 64, small(64)},
	} {
		nm, err := c.spec.New(c.cfg, network.Env{GPUs: c.gpus})
		if err != nil {
			t.Fatal(c.name, err)
		}
		m, ok := nm.(*fabric.Model)
		if !ok {
			t.Fatalf("%s: %T is not a fabric model", c.name, nm)
		}
		cases = append(cases, boundCase{c.name, m, c.cols})
	}
	return cases
}

// Best's bound of every algorithm (fabric/bound.go) is at most its price, on every case, whether
// read from rounds routed before or computed: the bound's proof made a test (relative slack
// 1e-9, the chooser's).
func TestBoundsBelowPrices(t *testing.T) {
	bounded, positive := 0, 0
	cases := boundCases(t)
	fresh, memberwise := map[string]*fabric.Model{}, map[string]*fabric.Model{}
	for _, c := range cases {
		fresh[c.name], memberwise[c.name] = c.m.Fresh(false), c.m.Fresh(true)
	}
	for _, c := range cases {
		for _, col := range c.cols {
			for _, a := range collective.Algorithms() {
				if !a.Implements(col.Op) {
					continue
				}
				b, ok := c.m.BoundOf(a, col)
				p, err := c.m.PriceWith(a, col)
				if !ok || err != nil {
					continue
				}
				bounded++
				if b > 0 {
					positive++
				}
				if float64(b) > float64(p.Total)*(1+1e-9) {
					t.Errorf("%s %s %s %v over %+v: bound %v above price %v", c.name, a.Name(), col.Op, col.Bytes, col.Group, b, p.Total)
				}
				// Computed (no round routed before): below the price too; and where every
				// endpoint has the same rates, the busiest member's sends over the one rate are
				// the member by member maximum (x ↦ x/r is monotone): equal.
				bf, _ := fresh[c.name].BoundOf(a, col)
				bw, okw := memberwise[c.name].BoundOf(a, col)
				if !okw || bw != bf || float64(bf) > float64(p.Total)*(1+1e-9) {
					t.Errorf("%s %s %s %v over %+v: bound %v, member by member %v, price %v", c.name, a.Name(), col.Op, col.Bytes, col.Group, bf, bw, p.Total)
				}
			}
		}
	}
	t.Logf("bounded %d positive %d", bounded, positive)
	if bounded < 500 || positive < bounded*9/10 {
		t.Errorf("%d algorithms bounded, %d with a positive bound: too few to test", bounded, positive)
	}
}

// Best with its bounds picks the algorithm best without them picks, at the same cost (every field
// equal), or fails alike, for the first model of a job and for the next one (whose bounds are
// read from the rounds the first routed); and on these cases the bounds do skip candidates (a bound above the
// best price).
func TestBestWithBounds(t *testing.T) {
	skippable := 0
	for _, c := range boundCases(t) {
		ref := c.m.Unbounded()
		for _, col := range c.cols {
			x, err1 := c.m.Price(col)
			y, err2 := ref.Price(col)
			// The next model of the job reads its bounds (and prices) from the rounds routed.
			z, err3 := c.m.Again().Price(col)
			if (err1 == nil) != (err2 == nil) || x != y || (err3 == nil) != (err2 == nil) || z != y {
				t.Errorf("%s %s %v over %+v: with bounds %+v (%v), next model %+v (%v), without %+v (%v)", c.name, col.Op, col.Bytes, col.Group,
					x, err1, z, err3, y, err2)
				continue
			}
			for _, a := range collective.Algorithms() {
				if b, ok := c.m.BoundOf(a, col); ok && a.Implements(col.Op) && err1 == nil && float64(b) > float64(x.Total)*(1+1e-9) {
					skippable++
				}
			}
		}
	}
	t.Logf("skippable %d", skippable)
	if skippable < 100 {
		t.Errorf("only %d candidates' bounds exceed best's price: the skipping is barely tested", skippable)
	}
}

// noOutline is an algorithm without its outline (collective.Outliner): the bound reads its
// rounds, tables built.
type noOutline struct{ collective.Flowing }

// The rings' bound from their outline (no successor table built) is a closed form, counted by
// hand: every member sends and receives 4 flows of S/(4p) per round (four directed rings, one
// per port), and each accelerator's 4 ports of 400 Gb/s (HammingMesh §III-D, Table III: 1.6 Tb/s
// per accelerator in the one simulated plane) inject R = 200 GB/s, so a round costs at least the
// endpoint overhead α plus 4·S/(4p)/R = S/(pR):
//
//	all-reduce  2(p−1)·(α + S/(pR));  reduce-scatter, all-gather  (p−1)·(α + S/(pR))
//
// (no reducer in these jobs: no reduction term). It is the bound the rings' rounds give with their
// tables built (Part.Permutes), equal, and member by member equal too; on the 16×16 and the
// large 128×128 HxMesh.
func TestRingsOutlineBound(t *testing.T) {
	const R = 200e9 // B/s: 4 × 400 Gb/s
	n := 0
	for _, c := range boundCases(t) {
		if c.name != "hx4 4×4 boards, torus cables" && c.name != "hx4-large" {
			continue
		}
		p := c.m.Graph().Endpoints
		alpha := float64(c.m.Graph().Overhead)
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather} {
			for _, s := range []units.Bytes{1e3, 1e9} {
				col := network.Collective{Op: op, Bytes: s, Group: network.Group{Size: p, Stride: 1}, DType: dtype.FP16}
				rounds := float64(p - 1)
				if op == network.AllReduce {
					rounds *= 2
				}
				want := rounds * (alpha + float64(s)/(float64(p)*R))
				got, ok := c.m.Fresh(false).BoundOf(collective.Rings, col)
				mw, okw := c.m.Fresh(true).BoundOf(collective.Rings, col)
				tables, okt := c.m.Fresh(false).BoundOf(noOutline{collective.Rings}, col)
				if !ok || !okw || !okt || math.Abs(float64(got)-want) > 1e-12*want || mw != got || tables != got {
					t.Errorf("%s %s %v over %d: outline bound %v (%v), member by member %v (%v), from the tables %v (%v); want %v",
						c.name, op, s, p, got, ok, mw, okw, tables, okt, units.Seconds(want))
				}
				n++
			}
		}
	}
	if n != 12 {
		t.Fatalf("%d cases, want 12", n)
	}
}
