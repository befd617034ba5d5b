package wdmring

import (
	"fmt"
	"math/bits"
)

// Dir is the direction a lightpath travels round the ring.
type Dir int8

const (
	// Shortest takes the shorter way round (clockwise on a tie).
	Shortest Dir = iota
	// CW runs from node i to i+1; CCW from i to i−1.
	CW
	CCW
)

// Lightpath is one sender's circuit in a step, between members of a group: Src sends Weight
// units of the step's bytes to Dst on one wavelength, on the fibre of direction Dir, with no
// O/E/O at the nodes it passes (WRHT §3.2: circuit switched).
type Lightpath struct {
	Src, Dst int32
	Dir      Dir
	Weight   float64 // 0 counts as 1
}

// Path is a lightpath placed on the ring's nodes: it occupies the segments From → From±1 → … → To
// of fibre CW (true) or CCW.
type Path struct {
	From, To int32
	CW       bool
}

// place routes a lightpath between nodes a and b of an n-node ring.
func place(a, b int32, d Dir, n int32) Path {
	cw := d == CW
	if d == Shortest {
		fwd := ((b-a)%n + n) % n
		cw = fwd <= n-fwd
	}
	return Path{From: a, To: b, CW: cw}
}

// hops is the number of segments p occupies on an n-node ring.
func (p Path) hops(n int32) int32 {
	if p.CW {
		return ((p.To-p.From)%n + n) % n
	}
	return ((p.From-p.To)%n + n) % n
}

// segment is the index of the j-th segment p occupies: segment s of the CW fibre joins s → s+1,
// segment s of the CCW fibre joins s+1 → s; the CCW segments follow the n CW ones.
func (p Path) segment(j, n int32) int32 {
	if p.CW {
		return (p.From + j) % n
	}
	return n + ((p.From-1-j)%n+n)%n
}

// Assignment is a first-fit wavelength assignment of one step's paths.
type Assignment struct {
	N      int32
	Paths  []Path
	Lambda []int32 // wavelength of each path
	Used   int     // wavelengths used: max Lambda + 1 (0 without paths)
}

// FirstFit assigns each path, in order, the lowest wavelength free on every segment it occupies
// (Zang et al. 2000's first fit; WRHT §4.1.2 names it for the subgroups). It never runs out:
// Used may exceed the fibre's wavelengths, and the step then needs ⌈Used/w⌉ rounds. scratch is
// reused between calls (nil allocates).
func FirstFit(n int32, paths []Path, a *Assignment, scratch *Occupancy) {
	a.N, a.Paths, a.Used = n, paths, 0
	a.Lambda = a.Lambda[:0]
	if scratch == nil {
		scratch = new(Occupancy)
	}
	o := scratch
	o.reset(2*int(n), 1)
	for _, p := range paths {
		h := p.hops(n)
		for {
			// The lowest wavelength free on the whole path, word by word.
			lam := int32(-1)
			for w := 0; w < o.words && lam < 0; w++ {
				var busy uint64
				for j := int32(0); j < h; j++ {
					busy |= o.bits[int(p.segment(j, n))*o.words+w]
				}
				if free := ^busy; free != 0 {
					lam = int32(w*64 + bits.TrailingZeros64(free))
				}
			}
			if lam < 0 {
				o.grow()
				continue
			}
			w, bit := int(lam)/64, uint64(1)<<(lam%64)
			for j := int32(0); j < h; j++ {
				o.bits[int(p.segment(j, n))*o.words+w] |= bit
			}
			a.Lambda = append(a.Lambda, lam)
			a.Used = max(a.Used, int(lam)+1)
			break
		}
	}
}

// Occupancy is the busy wavelengths of every fibre segment (a bit set per segment).
type Occupancy struct {
	bits  []uint64
	segs  int
	words int
}

func (o *Occupancy) reset(segs, words int) {
	o.segs, o.words = segs, words
	if cap(o.bits) < segs*words {
		o.bits = make([]uint64, segs*words)
	}
	o.bits = o.bits[:segs*words]
	clear(o.bits)
}

// grow doubles the wavelengths tracked per segment, keeping the assignments made so far.
func (o *Occupancy) grow() {
	old, ow := o.bits, o.words
	nw := 2 * ow
	o.bits = make([]uint64, o.segs*nw)
	for s := 0; s < o.segs; s++ {
		copy(o.bits[s*nw:], old[s*ow:(s+1)*ow])
	}
	o.words = nw
}

// Check verifies an assignment independently of the way it was made: no wavelength is used twice
// on one segment of one fibre, and no path uses a wavelength at or beyond limit (0: no limit).
func (a *Assignment) Check(limit int) error {
	if len(a.Lambda) != len(a.Paths) {
		return fmt.Errorf("%d wavelengths for %d paths", len(a.Lambda), len(a.Paths))
	}
	n := a.N
	top := int32(0)
	for i, lam := range a.Lambda {
		if lam < 0 || (limit > 0 && int(lam) >= limit) {
			p := a.Paths[i]
			return fmt.Errorf("path %d (%d→%d) on wavelength %d, outside [0, %d)", i, p.From, p.To, lam, limit)
		}
		top = max(top, lam+1)
	}
	// One bit per (segment, wavelength).
	taken := make([]uint64, (int(2*n)*int(top)+63)/64)
	for i, p := range a.Paths {
		lam := a.Lambda[i]
		for j := int32(0); j < p.hops(n); j++ {
			s := p.segment(j, n)
			k := int(s)*int(top) + int(lam)
			if taken[k/64]&(1<<(k%64)) != 0 {
				return fmt.Errorf("wavelength %d used twice on segment %d by path %d (%d→%d) and an earlier one%s", lam, s, i, p.From, p.To, a.other(i, s, lam))
			}
			taken[k/64] |= 1 << (k % 64)
		}
	}
	return nil
}

// other names the first path before i on segment s and wavelength lam.
func (a *Assignment) other(i int, s, lam int32) string {
	for o := 0; o < i; o++ {
		if a.Lambda[o] != lam {
			continue
		}
		q := a.Paths[o]
		for j := int32(0); j < q.hops(a.N); j++ {
			if q.segment(j, a.N) == s {
				return fmt.Sprintf(" (%d→%d)", q.From, q.To)
			}
		}
	}
	return ""
}
