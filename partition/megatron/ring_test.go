package megatron

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// causal is softmax(QKᵀ/√d + causal mask)·V on one head's [s, d] matrices: the reference.
func causal(t *testing.T, q, k, v *tensor.Dense) *tensor.Dense {
	s, d := q.Shape()[0], q.Shape()[1]
	sc := mm(t, q, transpose(t, k)).Data().([]float64)
	p := make([]float64, s*s)
	for i := range s {
		mx := math.Inf(-1)
		for j := 0; j <= i; j++ {
			mx = math.Max(mx, sc[i*s+j]/math.Sqrt(float64(d)))
		}
		var sum float64
		for j := 0; j <= i; j++ {
			p[i*s+j] = math.Exp(sc[i*s+j]/math.Sqrt(float64(d)) - mx)
			sum += p[i*s+j]
		}
		for j := 0; j <= i; j++ {
			p[i*s+j] /= sum
		}
	}
	return mm(t, tensor.New(tensor.WithShape(s, s), tensor.WithBacking(p)), v)
}

func transpose(t *testing.T, a *tensor.Dense) *tensor.Dense {
	t.Helper()
	b := a.Clone().(*tensor.Dense)
	if err := b.T(); err != nil {
		t.Fatal(err)
	}
	return tensor.Materialize(b).(*tensor.Dense)
}

// One ring-attention pass under context parallelism, on real tensors (cpCollectives: Megatron-Core
// with Transformer Engine's p2p ring). A sequence of s tokens is cut into 2·cp chunks; rank i
// keeps query chunks i and 2cp − 1 − i and starts with their keys and values. At each of cp
// steps it attends its queries to the key/value chunks it holds (causally: earlier chunks in
// full, its own chunk under the mask, later ones not at all), merging blocks with the online
// softmax (a running maximum and sum per row, FlashAttention's rescaling), then passes the
// keys and values on to the next rank: cp − 1 sends of 2 chunks' K and V. The result equals
// causal attention over the whole sequence; every rank computes the same number of scores
// (the load balancing); and the plan prices exactly those sends, each of the rank's keys and
// values, 2·(s/cp)·d elements, behind the attention kernel.
func TestRingAttentionStep(t *testing.T) {
	const s, d, cp = 16, 4, 4
	c := s / (2 * cp)
	r := rand.New(rand.NewPCG(7, 8))
	q, k, v := randDense(r, s, d), randDense(r, s, d), randDense(r, s, d)
	want := causal(t, q, k, v).Data().([]float64)
	chunks := func(i int) [2]int { return [2]int{i, 2*cp - 1 - i} }
	var work [cp]int
	for rank := range cp {
		for _, qa := range chunks(rank) {
			qb := rows(t, q, qa*c, (qa+1)*c)
			m, l := make([]float64, c), make([]float64, c)
			for i := range m {
				m[i] = math.Inf(-1)
			}
			o := make([]float64, c*d)
			for step := range cp { // the key/value chunks of rank − step arrive at this step
				for _, kb := range chunks((rank - step + cp) % cp) {
					if kb > qa {
						continue
					}
					sc := mm(t, qb, transpose(t, rows(t, k, kb*c, (kb+1)*c))).Data().([]float64)
					vb := rows(t, v, kb*c, (kb+1)*c).Data().([]float64)
					for i := range c {
						last := c
						if kb == qa {
							last = i + 1 // the causal mask inside the diagonal chunk
						}
						work[rank] += last
						mx := m[i]
						for j := range last {
							mx = math.Max(mx, sc[i*c+j]/math.Sqrt(d))
						}
						scale := math.Exp(m[i] - mx)
						l[i] *= scale
						for x := range d {
							o[i*d+x] *= scale
						}
						for j := range last {
							p := math.Exp(sc[i*c+j]/math.Sqrt(d) - mx)
							l[i] += p
							for x := range d {
								o[i*d+x] += p * vb[j*d+x]
							}
						}
						m[i] = mx
					}
				}
			}
			for i := range c {
				for x := range d {
					if got, w := o[i*d+x]/l[i], want[(qa*c+i)*d+x]; math.Abs(got-w) > 1e-12 {
						t.Fatalf("rank %d row %d: %g, causal attention %g", rank, qa*c+i, got, w)
					}
				}
			}
		}
	}
	for rank := 1; rank < cp; rank++ {
		if work[rank] != work[0] {
			t.Errorf("scores per rank %v: not balanced", work)
		}
	}
	// The plan's ring: cp − 1 forward sends of the rank's K and V (2 · s/cp · kv · dh elements
	// in bf16) behind the attention kernel.
	cfg := llama3(1, 1024, 2816, 16, 1)
	cfg.Arch.KVHeads, cfg.CP, cfg.Seq, cfg.GlobalBatch, cfg.Attention = 4, cp, 4096, 1, AttnFlash
	for _, coll := range layerOf(build(t, cfg)).Collectives {
		if coll.Name == "cp.kv.fwd" {
			if wantB := units.Bytes(2 * 4096 / cp * 4 * 64 * 2); coll.Count != cp-1 || coll.Bytes != wantB || coll.Overlap != partition.BehindOp {
				t.Errorf("cp.kv.fwd: %d sends of %v (%v), want %d of %v behind the kernel", coll.Count, coll.Bytes, coll.Overlap, cp-1, wantB)
			}
			return
		}
	}
	t.Error("no cp.kv.fwd collective in the plan")
}
