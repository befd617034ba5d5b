package collective

import (
	"fmt"
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

func flat(p int, l Link) Layout { return Flat(p, l) }

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// Closed forms with α = 0 (Patarasuk & Yuan 2009; nccl-tests bus bandwidth factors).
func TestRingBandwidthClosedForms(t *testing.T) {
	const S = units.Bytes(1e9)
	link := Link{Bandwidth: units.GBps(25)}
	for _, n := range []int{2, 3, 8, 64, 1000} {
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather, network.AllToAll} {
			c := Price(mustLevels(Ring, op, S, flat(n, link)), nil, dtype.FP16)
			// t = BusFactor(n) · S/B, e.g. all-reduce 2(n−1)/n · S/B.
			want := op.BusFactor(n) * float64(S) / 25e9
			if !near(float64(c.Total), want, 1e-12) {
				t.Errorf("%s n=%d: %v, want %g s", op, n, c.Total, want)
			}
			if c.H2H != 0 || c.Compute != 0 {
				t.Errorf("%s: α=0 and no reducer but H2H=%v compute=%v", op, c.H2H, c.Compute)
			}
		}
	}
}

func TestRingStepCounts(t *testing.T) {
	link := Link{Latency: units.Us(1), Bandwidth: units.GBps(25)}
	n := 16
	cases := map[network.Op]int{
		network.AllReduce:     2 * (n - 1), // RS + AG
		network.ReduceScatter: n - 1,
		network.AllGather:     n - 1,
		network.Reduce:        2 * (n - 1), // RS + gather (Rabenseifner)
		network.AllToAll:      n - 1,
		network.Scatter:       n - 1,
		network.Gather:        n - 1,
		network.Barrier:       2 * (n - 1),
		network.SendRecv:      1,
	}
	for op, want := range cases {
		c := Price(mustLevels(Ring, op, 1e6, flat(n, link)), nil, dtype.FP16)
		if int(c.Steps) != want {
			t.Errorf("%s: %d steps, want %d", op, c.Steps, want)
		}
		// Latency term = steps · α exactly.
		if !near(float64(c.H2H), float64(want)*1e-6, 1e-12) {
			t.Errorf("%s: H2H %v, want %d µs", op, c.H2H, want)
		}
	}
}

func TestOneRankIsFree(t *testing.T) {
	link := Link{Latency: units.Us(5), Bandwidth: units.GBps(1)}
	for _, op := range network.Ops() {
		if c := Price(mustLevels(Ring, op, 1e9, flat(1, link)), nil, dtype.FP16); c.Total != 0 || c.Steps != 0 {
			t.Errorf("%s with one rank: %+v", op, c)
		}
	}
}

func TestMonotoneInSize(t *testing.T) {
	link := Link{Latency: units.Us(2), Bandwidth: units.GBps(25)}
	for _, op := range network.Ops() {
		prev := units.Seconds(-1)
		for _, s := range []units.Bytes{0, 1, 1e3, 1e6, 1e9, 1e10} {
			c := Price(mustLevels(Ring, op, s, flat(32, link)), nil, dtype.FP16)
			if c.Total < prev {
				t.Errorf("%s: time fell from %v to %v at size %v", op, prev, c.Total, s)
			}
			prev = c.Total
		}
	}
}

type perByte struct{ rate float64 }

// ReduceTime: a memory-bound n-to-1 reduction reads n inputs and writes one (n+1 buffers).
func (r perByte) ReduceTime(fanIn int, b units.Bytes, _ dtype.DType) units.Seconds {
	return units.Seconds(float64(fanIn+1) * float64(b) / r.rate)
}

func TestReductionCompute(t *testing.T) {
	// Ring reduce-scatter on 4 ranks, 1 GB: 3 steps each reducing 2 chunks of 250 MB into one:
	// 3 · (3 · 250e6 B) / 1e12 B/s = 2.25 ms.
	c := Price(mustLevels(Ring, network.ReduceScatter, 1e9, flat(4, Link{Bandwidth: 1e12})), perByte{1e12}, dtype.FP16)
	if !near(float64(c.Compute), 2.25e-3, 1e-12) {
		t.Errorf("compute = %v, want 2.25 ms", c.Compute)
	}
	if !near(float64(c.Total), float64(c.H2H+c.H2T+c.Compute), 1e-15) {
		t.Errorf("total %v is not the sum of its parts", c.Total)
	}
	// Gathers do not reduce.
	if c := Price(mustLevels(Ring, network.AllGather, 1e9, flat(4, Link{Bandwidth: 1e12})), perByte{1e12}, dtype.FP16); c.Compute != 0 {
		t.Errorf("all-gather compute = %v", c.Compute)
	}
}

func TestLoadDividesBandwidth(t *testing.T) {
	base := Schedule{Steps: []Step{{Link: Link{Bandwidth: 100}, Bytes: 1000}}}
	shared := Schedule{Steps: []Step{{Link: Link{Bandwidth: 100}, Bytes: 1000, Load: 4}}}
	if a, b := Price(base, nil, 0).Total, Price(shared, nil, 0).Total; !near(float64(b), 4*float64(a), 1e-12) {
		t.Errorf("load 4: %v vs %v", b, a)
	}
}

// The pipelined broadcast's chunk count must be the brute-force optimum of
// T(k) = (k + h − 1)(α + S/(kB)).
func TestPipelineChunksOptimal(t *testing.T) {
	for _, c := range []struct {
		s    units.Bytes
		hops int
		link Link
	}{
		{1e9, 63, Link{Latency: units.Us(1), Bandwidth: units.GBps(25)}},
		{1e6, 7, Link{Latency: units.Us(5), Bandwidth: units.GBps(25)}},
		{1e3, 100, Link{Latency: units.Us(1), Bandwidth: units.GBps(25)}},
	} {
		tk := func(k int) float64 {
			return float64(k+c.hops-1) * (float64(c.link.Latency) + float64(c.s)/float64(k)/float64(c.link.Bandwidth))
		}
		k := PipelineChunks(c.s, c.hops, c.link)
		for j := 1; j <= 200000; j++ {
			if tk(j) < tk(k)*(1-1e-12) {
				t.Errorf("S=%v hops=%d: k=%d gives %g but k=%d gives %g", c.s, c.hops, k, tk(k), j, tk(j))
				break
			}
		}
	}
	// Zero latency: the broadcast tends to S/B.
	c := Price(mustLevels(Ring, network.Broadcast, 1e9, flat(64, Link{Bandwidth: units.GBps(25)})), nil, dtype.FP16)
	if !near(float64(c.Total), 1e9/25e9, 1e-4) {
		t.Errorf("α=0 broadcast = %v, want 40 ms", c.Total)
	}
}

// mustLevels is the level schedule of an algorithm that runs on every layout.
func mustLevels(a Algorithm, op network.Op, s units.Bytes, lay Layout) Schedule {
	sch, err := Levels(a, op, s, lay)
	if err != nil {
		panic(err)
	}
	return sch
}

// Shift, RingNext and Chain parts step their members' digits instead of dividing; their flows are
// those of the definitions (PartKind), written here with divisions: for Shift/RingNext member m of
// digit d = ⌊m/Stride⌋ mod Size sends to m + ((d + K) mod Size − d)·Stride, for Chain to
// m + Stride when d < Size − 1; only members below n (and Limit) take part.
func TestStepwiseDigits(t *testing.T) {
	type flow struct{ s, d int }
	for _, kind := range []PartKind{Shift, RingNext, Chain} {
		for _, stride := range []int32{1, 2, 3, 8} {
			for _, size := range []int32{1, 2, 3, 4, 7} {
				for _, k := range []int32{-5, -1, 0, 1, 2, 3, 6} {
					for _, n := range []int{1, 5, 12, 56, 61} {
						for _, limit := range []int32{0, 9} {
							q := Part{Kind: kind, Stride: stride, Size: size, K: k, Limit: limit}
							var got, want []flow
							q.Each(n, func(s, d int, _ float64) { got = append(got, flow{s, d}) })
							nn := n
							if limit > 0 {
								nn = min(n, int(limit))
							}
							st, sz, kk := int(stride), int(size), int(k)
							for m := 0; m < nn; m++ {
								d := m / st % sz
								switch {
								case kind == Chain:
									if d < sz-1 && m+st < nn {
										want = append(want, flow{m, m + st})
									}
								case sz > 1 && ((kk%sz)+sz)%sz != 0:
									if dst := m + ((d+((kk%sz)+sz)%sz)%sz-d)*st; dst < nn {
										want = append(want, flow{m, dst})
									}
								}
							}
							if fmt.Sprint(got) != fmt.Sprint(want) {
								t.Fatalf("%+v over %d: %v, want %v", q, n, got, want)
							}
						}
					}
				}
			}
		}
	}
}
