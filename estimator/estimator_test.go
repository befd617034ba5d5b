package estimator

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile"
)

// unitProfile prices an op at op.FLOP seconds: the tests choose times directly.
type unitProfile struct{}

func (unitProfile) Name() string                                { return "unit" }
func (unitProfile) OpTime(op partition.Op) units.Seconds        { return units.Seconds(op.FLOP) }
func (unitProfile) PeakFLOP(dt dtype.DType) units.FLOPPerSecond { return 10 }

// byteNet prices a collective at bytes × 1 s (any op, any group > 1).
type byteNet struct{}

func (byteNet) Name() string { return "bytes" }
func (byteNet) Price(c network.Collective) (network.Cost, error) {
	t := units.Seconds(c.Bytes)
	return network.Cost{Algorithm: "test", Steps: 1, H2T: t, Total: t}, nil
}

func op(name string, ph partition.Phase, seconds float64) partition.Op {
	return partition.Op{Name: name, Kind: partition.MatMul, Phase: ph, FLOP: units.FLOP(seconds), Output: tensor.Shape{1}}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A layer of 1 s forward and 2 s backward with one critical 0.5 s all-reduce per micro-batch,
// repeated 4 times, 2 micro-batches, no DP/PP.
func simplePlan() *partition.Plan {
	layer := partition.Block{Name: "layer", Repeat: 4, Params: 100,
		Ops: []partition.Op{op("f", partition.Forward, 1), op("b", partition.Backward, 2)},
		Collectives: []partition.Collective{{Name: "tp", Collective: network.Collective{Op: network.AllReduce, Bytes: 0.5,
			Group: network.Group{Size: 2, Stride: 1}}, Dim: partition.DimTP, Phase: partition.Forward, Count: 1}},
	}
	return &partition.Plan{
		Layout: partition.Layout{GPUs: 2, DP: 1, TP: 2, PP: 1, Interleave: 1, GlobalBatch: 2, MicroBatch: 1, MicroBatches: 2},
		Stages: []partition.Stage{{Blocks: []partition.Block{layer}, Params: 400,
			PerIteration: []partition.Op{{Name: "opt", Kind: partition.OptimizerStep, Phase: partition.Update, FLOP: 0.25}},
			Grads:        []partition.GradSync{{Collective: network.Collective{Op: network.AllReduce, Bytes: 4, Group: network.Group{Size: 1, Stride: 2}}}}}},
		ModelFLOP: 8,
	}
}

func TestIterationArithmetic(t *testing.T) {
	r, err := Estimate(Input{Plan: simplePlan(), Profile: unitProfile{}, Network: byteNet{}, Steps: 10, SampleTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	it := r.Iteration
	// compute = 2 micro-batches × 4 layers × (1 + 2) s + 0.25 s optimizer = 24.25 s
	// comm    = 2 × 4 × 0.5 s = 4 s;  total = 28.25 s
	if !near(float64(it.Compute), 24.25) || !near(float64(it.ExposedComm), 4) || it.Bubble != 0 || !near(float64(it.Total), 28.25) {
		t.Fatalf("iteration %+v", it)
	}
	if !near(it.CommFraction, 4/28.25) {
		t.Errorf("comm fraction %g", it.CommFraction)
	}
	if !near(float64(r.TimeToAccuracy), 282.5) {
		t.Errorf("time to accuracy %v, want 10 × 28.25 s", r.TimeToAccuracy)
	}
	// 2 samples × 3 tokens / 28.25 s.
	if !near(r.TokensPerS, 6/28.25) {
		t.Errorf("tokens/s %g", r.TokensPerS)
	}
	// Model FLOP 8 over 2 GPUs per 28.25 s, against a peak of 10.
	if !near(float64(r.ModelFLOPPerGPU), 4/28.25) || !near(r.MFU, 4/28.25/10) {
		t.Errorf("model FLOP/s %v MFU %g", r.ModelFLOPPerGPU, r.MFU)
	}
	// Hardware FLOP: the GEMMs executed per GPU, (1 + 2) × 4 layers × 2 micro-batches = 24.
	if !near(float64(r.HWFLOPPerGPU), 24/28.25) {
		t.Errorf("hardware FLOP/s %v", r.HWFLOPPerGPU)
	}
	if len(r.Collectives) != 1 || r.Collectives[0].Count != 8 || !near(float64(r.Collectives[0].Exposed), 4) {
		t.Errorf("collectives %+v", r.Collectives)
	}
}

// Data-parallel buckets: 4 layers, 1 s backward each (last micro-batch), 100 B of gradients per
// layer, 200 B buckets costing 1.5 s (byteNet: 1 s per byte → scale bytes). Buckets are ready at
// t = 2 s and 4 s of the backward pass; the stream runs [2, 3.5] and [4, 5.5]: 1.5 s exposed.
// Without overlap all 3 s are exposed.
func TestGradientBucketOverlap(t *testing.T) {
	layer := partition.Block{Name: "layer", Repeat: 4, Params: 100,
		Ops: []partition.Op{op("b", partition.Backward, 1)}}
	p := &partition.Plan{
		Layout: partition.Layout{GPUs: 2, DP: 2, TP: 1, PP: 1, Interleave: 1, GlobalBatch: 2, MicroBatch: 1, MicroBatches: 1},
		Stages: []partition.Stage{{Blocks: []partition.Block{layer}, Params: 400,
			Grads: []partition.GradSync{{Collective: network.Collective{Op: network.AllReduce, Bytes: 3, Group: network.Group{Size: 2, Stride: 1}},
				BucketBytes: 1.5, Overlap: true}}}},
	}
	r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(r.Breakdown.DP), 1.5) {
		t.Errorf("overlapped DP exposure %v, want 1.5 s", r.Breakdown.DP)
	}
	p.Stages[0].Grads[0].Overlap = false
	r, _ = Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if !near(float64(r.Breakdown.DP), 3) {
		t.Errorf("serial DP exposure %v, want 3 s", r.Breakdown.DP)
	}
	// A remainder bucket: 3.5 B = 2 × 1.5 + 0.5, the last issued at the end of the backward pass.
	p.Stages[0].Grads[0].Overlap = true
	p.Stages[0].Grads[0].Bytes = 3.5
	r, _ = Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	// Per-layer 0.875 B: bucket 1 ready after layer 2 (1.75 ≥ 1.5) at 2 s, bucket 2 after layer 4
	// (3.5 ≥ 3.0) at 4 s; stream [2, 3.5], [4, 5.5], remainder [5.5, 6]: 2 s exposed.
	if !near(float64(r.Breakdown.DP), 2) {
		t.Errorf("remainder DP exposure %v, want 2 s", r.Breakdown.DP)
	}
	if n := len(r.Collectives); n != 2 || r.Collectives[0].Count != 2 || r.Collectives[1].Bytes != 0.5 {
		t.Errorf("bucket collectives %+v", r.Collectives)
	}
}

// linkNet is byteNet whose collectives all cross one link of 1 B/s (network.Overlapping): in a
// window, n_i calls of collective i take max(n_i·bytes_i, Σ_j n_j·bytes_j) of transfer. With
// apart set, every collective has links of its own and keeps its cost.
type linkNet struct {
	byteNet
	apart bool
}

func (n linkNet) PriceConcurrent(cs []network.Concurrent) ([]network.Cost, error) {
	var all float64
	for _, c := range cs {
		all += float64(max(1, c.Calls)) * float64(c.Bytes)
	}
	out := make([]network.Cost, len(cs))
	for i, c := range cs {
		out[i], _ = n.Price(c.Collective)
		if !n.apart {
			t := units.Seconds(math.Max(float64(c.Bytes), all/float64(max(1, c.Calls))))
			out[i].H2T, out[i].Total, out[i].Bottleneck = t, t, "link"
		}
	}
	return out, nil
}

// Gradient buckets that share a link with the backward pass's tensor-parallel traffic, by hand:
// 4 layers of 1 s backward compute and a critical 1 B all-reduce (1 s) each, 150 parameters and
// 1.5 B of gradients per layer in 1.5 B buckets. Backward repetitions end at 2, 4, 6, 8 s and
// alone the buckets run [2, 3.5], [4, 5.5], [6, 7.5], [8, 9.5]: 1.5 s exposed. Sharing the link
// from the first bucket at 2 s on, the window carries 3 all-reduces (3 B) and 4 buckets (6 B):
// the buckets cannot end before 2 + 9 = 11 s, 3 s after the backward pass. On links of their
// own nothing changes.
func TestGradientContention(t *testing.T) {
	layer := partition.Block{Name: "layer", Repeat: 4, Params: 150,
		Ops: []partition.Op{op("b", partition.Backward, 1)},
		Collectives: []partition.Collective{{Name: "tp", Collective: network.Collective{Op: network.AllReduce, Bytes: 1,
			Group: network.Group{Size: 2, Stride: 1}}, Dim: partition.DimTP, Phase: partition.Backward, Count: 1}}}
	p := &partition.Plan{
		Layout: partition.Layout{GPUs: 4, DP: 2, TP: 2, PP: 1, Interleave: 1, GlobalBatch: 2, MicroBatch: 1, MicroBatches: 1},
		Stages: []partition.Stage{{Blocks: []partition.Block{layer}, Params: 600,
			Grads: []partition.GradSync{{Collective: network.Collective{Op: network.AllReduce, Bytes: 6, Group: network.Group{Size: 2, Stride: 2}},
				BucketBytes: 1.5, Overlap: true}}}},
	}
	for _, c := range []struct {
		net  network.Model
		want float64
	}{{byteNet{}, 1.5}, {linkNet{apart: true}, 1.5}, {linkNet{}, 3}} {
		r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: c.net})
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(r.Breakdown.DP), c.want) || !near(float64(r.Breakdown.DPShared), c.want-1.5) {
			t.Errorf("%T %+v: DP exposure %v (%v from shared links), want %g s (%g)", c.net, c.net, r.Breakdown.DP, r.Breakdown.DPShared, c.want, c.want-1.5)
		}
		if dp := r.Collectives[len(r.Collectives)-1]; c.want == 3 && (dp.Cost.Bottleneck != "link" || !near(float64(dp.Cost.Total), 9.0/4)) {
			t.Errorf("contended bucket %+v, want 9/4 s per call on the shared link", dp)
		}
	}
}

// Two gradient reductions on one stream (a CosmoFlow- or MoE-like stage): blocks, in forward
// order, A (sync 0, 2 s backward), B (no sync, 1 s), C (sync 1, 1 s), each 100 parameters.
// byteNet prices 1 s per byte. Sync 0 holds 1 B in one bucket, sync 1 2 B in one bucket.
// Backward: C ends at 1 s → sync 1 runs [1, 3]; B ends at 2 s; A ends at 4 s → sync 0 runs
// [4, 5]: 1 s exposed, split 1/3 : 2/3 by communication time. With sync 1 not overlapped it
// runs after the backward pass too: [4, 5] + [5, 7] → 3 s exposed.
func TestGradientSyncsShareOneStream(t *testing.T) {
	blk := func(name string, sync int, bwd float64) partition.Block {
		return partition.Block{Name: name, Repeat: 1, Params: 100, Sync: sync, Ops: []partition.Op{op("b", partition.Backward, bwd)}}
	}
	p := &partition.Plan{
		Layout: partition.Layout{GPUs: 4, DP: 2, TP: 2, PP: 1, Interleave: 1, GlobalBatch: 2, MicroBatch: 1, MicroBatches: 1},
		Stages: []partition.Stage{{Blocks: []partition.Block{blk("A", 0, 2), blk("B", partition.NoSync, 1), blk("C", 1, 1)}, Params: 300,
			Grads: []partition.GradSync{
				{Name: "dp.grads", Dim: partition.DimDP, Collective: network.Collective{Op: network.AllReduce, Bytes: 1, Group: network.Group{Size: 4, Stride: 1}}, Overlap: true},
				{Name: "ep.grads", Dim: partition.DimEP, Collective: network.Collective{Op: network.AllReduce, Bytes: 2, Group: network.Group{Size: 2, Stride: 2}}, Overlap: true},
			}}},
	}
	r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(r.Breakdown.DP), 1) {
		t.Errorf("exposed %v, want 1 s", r.Breakdown.DP)
	}
	if len(r.Collectives) != 2 || r.Collectives[1].Name != "ep.grads" || r.Collectives[1].Dim != partition.DimEP ||
		!near(float64(r.Collectives[0].Exposed), 1.0/3) || !near(float64(r.Collectives[1].Exposed), 2.0/3) {
		t.Errorf("collectives %+v", r.Collectives)
	}
	p.Stages[0].Grads[1].Overlap = false
	if r, _ = Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}}); !near(float64(r.Breakdown.DP), 3) {
		t.Errorf("exposed without overlap %v, want 3 s", r.Breakdown.DP)
	}
}

// Pipeline: 4 stages, 2 interleaved chunks, 8 micro-batches; each stage 1 s forward + 2 s backward
// per micro-batch. Bubble = (p−1)/v · 3 s = 4.5 s. P2P: 0.1 s per transfer, 2·v·M = 32 transfers
// plus 2(p−1) = 6 fill/drain hops = 3.8 s.
func TestPipelineBubbleAndP2P(t *testing.T) {
	var stages []partition.Stage
	for i := 0; i < 4; i++ {
		stages = append(stages, partition.Stage{Index: i, Params: 1,
			// Two layers, one per model chunk: 3 s per micro-batch, 1.5 s per chunk.
			Blocks: []partition.Block{{Name: "layer", Repeat: 2, Params: 1, Ops: []partition.Op{op("f", partition.Forward, 0.5), op("b", partition.Backward, 1)}}},
			Grads:  []partition.GradSync{{Collective: network.Collective{Op: network.AllReduce, Group: network.Group{Size: 1, Stride: 1}}}}})
	}
	p := &partition.Plan{
		Layout: partition.Layout{GPUs: 4, DP: 1, TP: 1, PP: 4, Interleave: 2, GlobalBatch: 8, MicroBatch: 1, MicroBatches: 8},
		Stages: stages,
		P2P: &partition.Collective{Name: "pp.p2p", Collective: network.Collective{Op: network.SendRecv, Bytes: 0.1, Group: network.Group{Size: 2, Stride: 1}},
			Dim: partition.DimPP, Count: 2 * 2 * 8},
	}
	// The tied-embedding all-reduce between the first and last stage (0.2 s) is pipeline
	// communication too.
	for _, i := range []int{0, 3} {
		p.Stages[i].PerIterationCollectives = []partition.Collective{{Name: "pp.embedding_grads", Dim: partition.DimPP, Count: 1,
			Collective: network.Collective{Op: network.AllReduce, Bytes: 0.2, Group: network.Group{Size: 2, Stride: 3}}}}
	}
	r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if err != nil {
		t.Fatal(err)
	}
	if !near(float64(r.Iteration.Bubble), 4.5) || !near(float64(r.Breakdown.PP), 3.8+0.2) || !near(float64(r.Iteration.Compute), 24) {
		t.Errorf("iteration %+v breakdown %+v", r.Iteration, r.Breakdown)
	}
	if !near(float64(r.Iteration.Total), 24+4.5+4.0) || r.Breakdown.DP != 0 {
		t.Errorf("total %v, DP %v", r.Iteration.Total, r.Breakdown.DP)
	}
}

// TestInterleavedBubbleHeaviestChunk: interleaved, the pipeline fills and drains at the pace of
// its heaviest model chunk. Two stages of two layers (3 s each per micro-batch), two chunks per
// stage; the last stage also runs the LM head (2 s), which sits in one chunk: its chunks weigh 3
// and 3 + 2 s, so the bubble is (p − 1) · 5 s = 5 s, not (p − 1)/v · T = 8/2 s. Without
// interleaving the stage is one chunk of 8 s.
func TestInterleavedBubbleHeaviestChunk(t *testing.T) {
	layer := partition.Block{Name: "layer", Repeat: 2, Params: 1, Ops: []partition.Op{op("f", partition.Forward, 1), op("b", partition.Backward, 2)}}
	head := partition.Block{Name: "head", Repeat: 1, Params: 1, Ops: []partition.Op{op("hf", partition.Forward, 1), op("hb", partition.Backward, 1)}}
	for _, c := range []struct {
		v      int
		bubble float64
	}{{2, 5}, {1, 8}} {
		p := &partition.Plan{
			Layout: partition.Layout{GPUs: 2, DP: 1, TP: 1, PP: 2, Interleave: c.v, GlobalBatch: 4, MicroBatch: 1, MicroBatches: 4},
			Stages: []partition.Stage{{Index: 0, Params: 2, Blocks: []partition.Block{layer}}, {Index: 1, Params: 3, Blocks: []partition.Block{layer, head}}},
		}
		r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(r.Iteration.Bubble), c.bubble) || !near(float64(r.Iteration.Compute), 4*8) {
			t.Errorf("interleave %d: bubble %v, compute %v; want %v s and 4 micro-batches × 8 s", c.v, r.Iteration.Bubble, r.Iteration.Compute, c.bubble)
		}
	}
}

// Collectives that hide behind an op are exposed only by the part of their summed time longer
// than the op, shared in proportion to their times.
func TestBehindOpOverlap(t *testing.T) {
	p := simplePlan()
	b := &p.Stages[0].Blocks[0]
	// 0.5 s behind a 2 s op of the backward pass (collectives behind an op run in its phase)
	b.Collectives[0].Overlap, b.Collectives[0].HideBehind, b.Collectives[0].Phase = partition.BehindOp, "b", partition.Backward
	b.Collectives = append(b.Collectives, partition.Collective{Name: "long", Collective: network.Collective{Op: network.AllGather, Bytes: 3,
		Group: network.Group{Size: 2, Stride: 1}}, Dim: partition.DimTP, Phase: partition.Backward, Count: 1,
		Overlap: partition.BehindOp, HideBehind: "b"}) // 0.5 + 3 s behind 2 s: 1.5 s exposed
	r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if err != nil {
		t.Fatal(err)
	}
	// 2 micro-batches × 4 layers × 1.5 s, of which 3/3.5 is the long one's.
	if !near(float64(r.Breakdown.TP), 12) {
		t.Errorf("TP exposure %v, want 12 s", r.Breakdown.TP)
	}
	for _, c := range r.Collectives {
		if c.Name == "long" && !near(float64(c.Exposed), 12*3/3.5) {
			t.Errorf("long exposed %v, want %v", c.Exposed, 12*3/3.5)
		}
	}
}

func TestEmptyInputs(t *testing.T) {
	if _, err := Estimate(Input{}); err == nil {
		t.Error("empty plan accepted")
	}
	if _, err := Estimate(Input{Plan: simplePlan()}); err == nil {
		t.Error("missing profile accepted")
	}
}

// Each block collective's exposed time lands in its own dimension's part of the breakdown:
// one critical collective of b bytes per dimension, 2 micro-batches × 4 layers × b s each.
func TestBreakdownByDimension(t *testing.T) {
	p := simplePlan()
	b := &p.Stages[0].Blocks[0]
	bytes := map[partition.Dim]units.Bytes{partition.DimTP: 0.5, partition.DimEP: 1, partition.DimMP: 2, partition.DimSP: 3, partition.DimCP: 5}
	b.Collectives = b.Collectives[:0]
	for d, s := range bytes {
		b.Collectives = append(b.Collectives, partition.Collective{Name: d.String(), Collective: network.Collective{Op: network.AllToAll,
			Bytes: s, Group: network.Group{Size: 2, Stride: 1}}, Dim: d, Phase: partition.Forward, Count: 1})
	}
	r, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for d, s := range bytes {
		if got := float64(*r.Breakdown.Comm(d)); !near(got, 8*float64(s)) {
			t.Errorf("%s exposure %g s, want 2 × 4 × %g s", d.Title(), got, float64(s))
		}
		sum += 8 * float64(s)
	}
	if !near(float64(r.Iteration.ExposedComm), sum) {
		t.Errorf("exposed communication %v, want the parts' sum %g s", r.Iteration.ExposedComm, sum)
	}
}

// smProfile is unitProfile on a GPU of 100 SMs (profile.SMCounter).
type smProfile struct{ unitProfile }

func (smProfile) SMs() int { return 100 }

// smNet is byteNet whose collectives' kernels hold 25 SMs.
type smNet struct{ byteNet }

func (smNet) Price(c network.Collective) (network.Cost, error) {
	cost, err := byteNet{}.Price(c)
	cost.SMs = 25
	return cost, err
}

// TestCommKernels: compute loses the hidden time of each overlapped collective × the share of
// the GPU's SMs its kernels hold. Hand count on simplePlan with its all-reduce hidden behind the
// 2 s backward op: 0.5 s hidden per layer and micro-batch, 4 layers × 2 micro-batches = 4 s
// hidden; at 25 of 100 SMs, 1 s of compute lost. A driver overriding the network's kernels with
// 40 SMs loses 1.6 s, copy engines (0 SMs) none, and a profile without an SM count none.
func TestCommKernels(t *testing.T) {
	for _, c := range []struct {
		name   string
		prof   profile.Profile
		driver partition.Driver
		want   float64
	}{
		{"network's kernels", smProfile{}, partition.Driver{}, 1},
		{"own kernels", smProfile{}, partition.Driver{Set: true, SMs: 40}, 1.6},
		{"copy engines", smProfile{}, partition.Driver{Set: true}, 0},
		{"measured profile", unitProfile{}, partition.Driver{}, 0},
	} {
		p := simplePlan()
		b := &p.Stages[0].Blocks[0]
		b.Collectives[0].Overlap, b.Collectives[0].HideBehind, b.Collectives[0].Phase = partition.BehindOp, "b", partition.Backward
		b.Collectives[0].Driver = c.driver
		base, err := Estimate(Input{Plan: p, Profile: unitProfile{}, Network: byteNet{}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Estimate(Input{Plan: p, Profile: c.prof, Network: smNet{}})
		if err != nil {
			t.Fatal(err)
		}
		if !near(float64(r.Breakdown.CommKernels), c.want) {
			t.Errorf("%s: lost %v, want %v s", c.name, r.Breakdown.CommKernels, c.want)
		}
		if got := float64(r.Iteration.Compute - base.Iteration.Compute); !near(got, c.want) {
			t.Errorf("%s: compute grew %v s, want %v s", c.name, got, c.want)
		}
	}
}
