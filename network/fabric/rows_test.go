package fabric

import (
	"slices"
	"testing"

	"github.com/ddlest/ddlest/network/collective"
)

// shiftRow lists a Shift (or RingNext) part's partners from its first Stride·Size members: on
// digits of several strides and sizes, shifts forward and back (K beyond the size and 0, which
// sends nothing), over groups that the block divides and groups it does not (the last block's
// partners beyond the group leave those members none), every entry equals Each's.
func TestShiftRows(t *testing.T) {
	for _, kind := range []collective.PartKind{collective.Shift, collective.RingNext} {
		for _, stride := range []int32{1, 2, 3} {
			for _, size := range []int32{1, 2, 4, 5} {
				for _, k := range []int32{-6, -1, 0, 1, 2, 4, 7} {
					for _, p := range []int{7, 16, 23, 60} {
						q := collective.Part{Kind: kind, Stride: stride, Size: size, K: k}
						b := int(stride * size)
						if b >= p {
							continue
						}
						want := make([]int32, p)
						for i := range want {
							want[i] = -1
						}
						q.Each(p, func(s, d int, _ float64) { want[s] = int32(d) })
						got := make([]int32, p)
						shiftRow(q, b, got)
						if !slices.Equal(got, want) {
							t.Errorf("%+v over %d: %v, Each %v", q, p, got, want)
						}
					}
				}
			}
		}
	}
}
