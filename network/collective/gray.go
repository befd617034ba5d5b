package collective

import (
	"sync"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// GrayNext is the successor of every index along the reflected mixed-radix Gray code over the
// given radices (digit 0 first: index = d0 + r0·(d1 + r1·(d2 …))): consecutive codes differ in
// one digit by one, so on a torus (radices = its dimensions) it is the snake (boustrophedon) and
// on SiPAC's BCube (every radix r) every step is one WSS hop. The last code returns to the first
// in one step of the top digit when the top radix is even.
func GrayNext(radices ...int) []int32 {
	p := 1
	for _, r := range radices {
		p *= r
	}
	seq := make([]int32, p)
	for i := 0; i < p; i++ {
		// Digit k of code i is ⌊i/R_k⌋ mod r_k, reversed when ⌊i/R_{k+1}⌋ is odd (R_k = r_0 ⋯ r_{k−1}).
		x, stride := 0, 1
		for _, r := range radices {
			d := (i / stride) % r
			if (i/(stride*r))%2 == 1 {
				d = r - 1 - d
			}
			x += d * stride
			stride *= r
		}
		seq[i] = int32(x)
	}
	next := make([]int32, p)
	for i := range seq {
		next[seq[i]] = seq[(i+1)%p]
	}
	return next
}

// grays holds the registered Gray tables by radices (a plain map under a lock: an array key is
// neither boxed nor formatted on the pricing path).
var grays = struct {
	sync.RWMutex
	m map[grayKey]int32
}{m: map[grayKey]int32{}}

// MaxGrayDigits bounds the radices of a Gray table: a table of p < 2^31 members has at most 31
// digits of radix ≥ 2 (digits of radix 1 do not change the order and are dropped).
const MaxGrayDigits = 31

// grayKey is the radices ≥ 2, zero-padded.
type grayKey [MaxGrayDigits]int32

// GrayTable is the id of GrayNext's successor table for the radices (built and registered once).
func GrayTable(radices ...int) int32 {
	var k grayKey
	n := 0
	for _, r := range radices {
		if r > 1 && n < MaxGrayDigits {
			k[n] = int32(r)
			n++
		}
	}
	grays.RLock()
	id, ok := grays.m[k]
	grays.RUnlock()
	if ok {
		return id
	}
	grays.Lock()
	defer grays.Unlock()
	if id, ok := grays.m[k]; ok {
		return id
	}
	id = Register(&Successors{Next: GrayNext(radices...)})
	grays.m[k] = id
	return id
}

// SnakeRing is the ring in Gray order over the group's levels (a torus's dimensions): every ring
// neighbour differs in one level's index, one hop apart on a torus, where the rank-order ring
// takes two hops from the end of a row to the start of the next. A group on one level, or one
// whose levels do not multiply to it, rings in rank order; the rooted ops, send/recv and
// all-to-all are the ring's.
var SnakeRing = NewFlow("ring", "ring in Gray (snake) order over the group's levels: every neighbour one level step away",
	func(network.Op) bool { return true },
	func(op network.Op, s units.Bytes, g Members, out *Flows) error {
		switch op {
		case network.AllReduce, network.ReduceScatter, network.AllGather, network.Barrier:
			var rad [MaxGrayDigits]int
			n, p := 0, 1
			for _, l := range g.Layout().Levels {
				if l.Size > 1 && n < MaxGrayDigits {
					rad[n] = l.Size
					n++
					p *= l.Size
				}
			}
			if n > 1 && p == g.P() {
				out.Algorithm = "ring (snake)"
				return RingOver(op, s, p, One(TablePart(GrayTable(rad[:n]...))), g, out)
			}
		}
		return Ring.Rounds(op, s, g, out)
	})
