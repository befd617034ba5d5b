package moe

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// HammingMesh GPT-3 MoE (reference/hammingmesh.md §6.5): 16 experts, one per GPU, k = 1, each
// GPU routes one 2,048-token sequence of h = 12,288: the all-to-all buffer is the layer's
// input/output, 2048 · 12288 floats = 100,663,296 B, sent as 16 blocks of 6.29 MB (the paper's
// "≈100MB" and "113M" per expert are internal/repro's rows hammingmesh/moe-alltoall and
// hammingmesh/moe-expert-params).
func TestHammingMeshSizes(t *testing.T) {
	s := Spec{Experts: 16, TopK: 1, CapacityFactor: 1, ExpertHidden: 4 * 12288 / 16, EP: 16}
	if b := s.A2ABytes(2048, 12288, dtype.FP32); b != 100663296 {
		t.Errorf("all-to-all %v, want 100,663,296 B", b)
	}
	if c := s.Capacity(2048); c != 128 {
		t.Errorf("capacity %d, want 2048/16 = 128", c)
	}
	// The experts split GPT-3's FF (8h² weights) in 16: 8·12288²/16 = 75.5M each (+ biases).
	if p := s.ExpertParams(12288); p != 8*12288*12288/16+3072+12288 {
		t.Errorf("expert params %.0f", p)
	}
	gr := partition.NewGraph(64, 32)
	l := Build(gr, s, Inputs{N: 2048, H: 12288, DT: dtype.FP32, GEMMDT: dtype.FP32, EP: network.Group{Size: s.EP, Stride: 1}, TP: network.Group{Size: 1}})
	if len(l.Collectives) != 2 || l.Collectives[0].Count != 2 || l.Collectives[1].Count != 2 ||
		l.Collectives[0].Group.Size != 16 || l.Collectives[0].Dim != partition.DimEP {
		t.Errorf("collectives %+v: want 2 all-to-alls forward and 2 backward over 16 GPUs", l.Collectives)
	}
	// Expert GEMMs: 2048 tokens × 12288 × 3072, twice, 2 FLOP per MAC = 1/16 of the dense FF.
	var fwd float64
	for _, op := range l.Forward {
		if strings.HasPrefix(op.Name, "moe.expert.fc") {
			fwd += float64(op.FLOP)
		}
	}
	if want := 2 * 2 * 2048.0 * 12288 * 3072; fwd != want {
		t.Errorf("expert forward FLOP %g, want %g", fwd, want)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		dp   int
		want string
	}{
		{Spec{Experts: 16, TopK: 1, CapacityFactor: 1, ExpertHidden: 8, EP: 3}, 6, "--ep 3 must divide the 16 experts"},
		{Spec{Experts: 16, TopK: 1, CapacityFactor: 1, ExpertHidden: 8, EP: 16}, 8, "must divide the data-parallel degree 8"},
		{Spec{Experts: 4, TopK: 5, CapacityFactor: 1, ExpertHidden: 8, EP: 4}, 4, "--top-k 5"},
		{Spec{Experts: 4, TopK: 1, CapacityFactor: 0, ExpertHidden: 8, EP: 4}, 4, "--capacity-factor"},
	} {
		err := c.s.Validate(c.dp)
		if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v dp %d: %v, want %q", c.s, c.dp, err, c.want)
		}
	}
}

// Functional check on real tensors: tokens routed top-k through the expert-parallel schedule
// (dispatch all-to-all of E·C slots per GPU, each GPU's E/EP experts, combine all-to-all, gate-
// weighted sum) give exactly what dense routing of the same tokens gives, as long as no expert
// exceeds its capacity. The dispatch buffer has the size Build prices.
func TestDispatchCombineEqualsDenseRouting(t *testing.T) {
	const h, he, n = 6, 5, 12 // width, expert width, tokens per GPU
	s := Spec{Experts: 4, TopK: 2, CapacityFactor: 4, ExpertHidden: he, EP: 2}
	rng := rand.New(rand.NewPCG(3, 4))
	mat := func(r, c int) *tensor.Dense {
		v := make([]float64, r*c)
		for i := range v {
			v[i] = rng.Float64()*2 - 1
		}
		return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(v))
	}
	wr := mat(h, s.Experts)
	w1, w2 := make([]*tensor.Dense, s.Experts), make([]*tensor.Dense, s.Experts)
	for e := range w1 {
		w1[e], w2[e] = mat(h, he), mat(he, h)
	}
	expert := func(e int, x []float64) []float64 { // relu FFN on one token
		xt := tensor.New(tensor.WithShape(1, h), tensor.WithBacking(append([]float64(nil), x...)))
		a, err := xt.MatMul(w1[e])
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range a.Data().([]float64) {
			a.Data().([]float64)[i] = math.Max(v, 0)
		}
		y, err := a.MatMul(w2[e])
		if err != nil {
			t.Fatal(err)
		}
		return y.Data().([]float64)
	}
	type choice struct {
		expert int
		gate   float64
	}
	route := func(x []float64) []choice { // softmax over the router logits, top-k
		xt := tensor.New(tensor.WithShape(1, h), tensor.WithBacking(append([]float64(nil), x...)))
		l, _ := xt.MatMul(wr)
		logits := l.Data().([]float64)
		var z float64
		cs := make([]choice, s.Experts)
		for e, v := range logits {
			cs[e] = choice{e, math.Exp(v)}
			z += cs[e].gate
		}
		for e := range cs {
			cs[e].gate /= z
		}
		sort.Slice(cs, func(i, j int) bool { return cs[i].gate > cs[j].gate })
		return cs[:s.TopK]
	}
	tokens := make([][][]float64, s.EP) // per GPU
	for g := range tokens {
		x := mat(n, h).Data().([]float64)
		for i := 0; i < n; i++ {
			tokens[g] = append(tokens[g], x[i*h:(i+1)*h])
		}
	}

	// Expert parallel: every GPU fills E·C slots, grouped by destination GPU.
	c := s.Capacity(n)
	per := s.ExpertsPerGPU()
	type slot struct {
		token, k int
		x        []float64
	}
	send := make([][][]slot, s.EP) // [source][expert] slots
	routes := make([][][]choice, s.EP)
	for g := range tokens {
		send[g] = make([][]slot, s.Experts)
		for i, x := range tokens[g] {
			rs := route(x)
			routes[g] = append(routes[g], rs)
			for k, r := range rs {
				if len(send[g][r.expert]) == c {
					t.Fatalf("expert %d over capacity %d; raise the test's capacity factor", r.expert, c)
				}
				send[g][r.expert] = append(send[g][r.expert], slot{i, k, x})
			}
		}
		if got := s.Experts * c * h; float64(got) != float64(s.A2ABytes(n, h, dtype.FP32))/4 {
			t.Errorf("dispatch buffer %d elements, Build prices %v", got, s.A2ABytes(n, h, dtype.FP32))
		}
	}
	// All-to-all: GPU d receives, from every source, the slots of experts d·per … d·per+per−1.
	out := make([][][]float64, s.EP) // [source][token·k] expert outputs after the combine all-to-all
	for g := range out {
		out[g] = make([][]float64, n*s.TopK)
	}
	for d := 0; d < s.EP; d++ {
		for src := 0; src < s.EP; src++ {
			for e := d * per; e < (d+1)*per; e++ {
				for _, sl := range send[src][e] {
					out[src][sl.token*s.TopK+sl.k] = expert(e, sl.x) // returned by the combine all-to-all
				}
			}
		}
	}
	for g := range tokens {
		for i, x := range tokens[g] {
			want := make([]float64, h) // dense routing: every expert sees every token
			for _, r := range route(x) {
				for j, v := range expert(r.expert, x) {
					want[j] += r.gate * v
				}
			}
			got := make([]float64, h)
			for k, r := range routes[g][i] {
				for j, v := range out[g][i*s.TopK+k] {
					got[j] += r.gate * v
				}
			}
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-12 {
					t.Fatalf("GPU %d token %d: expert parallel %v, dense %v", g, i, got, want)
				}
			}
		}
	}
}

// Expert tensor parallelism, by hand for 4,096 tokens of width 1,024 in bf16, 8 SwiGLU experts of
// 2,048 plus a shared one of 1,024, top-2, capacity factor 1, EP 4, TP 2: each TP rank routes its
// 2,048 tokens, C = ⌈2·2,048/8⌉ = 512, so 8·512 = 4,096 slots go out in each all-to-all (8 MiB);
// the TP all-gather and reduce-scatter carry both ranks' 8,192 slots (16 MiB); each rank's half
// of every expert (gate and up 1,024 × 2·1,024, down 1,024 × 1,024) runs over all 8,192 slots:
// 2·8,192·1,024·(2,048 + 1,024) FLOP forward, half of the 4,096 × 2 = 8,192 slots' work at TP 1.
// The shared expert's sequence-parallel all-gather and reduce-scatter carry the 4,096 tokens.
func TestExpertTensorParallel(t *testing.T) {
	s := Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: 2048, EP: 4, Gated: true, NoBias: true, SharedHidden: 1024}
	ep, tp := network.Group{Size: 4, Stride: 2}, network.Group{Size: 2, Stride: 1}
	l := Build(partition.NewGraph(64, 32), s, Inputs{N: 4096, H: 1024, DT: dtype.BF16, GEMMDT: dtype.BF16, EP: ep, TP: tp, Recompute: true})
	one := Build(partition.NewGraph(64, 32), s, Inputs{N: 4096, H: 1024, DT: dtype.BF16, GEMMDT: dtype.BF16, EP: ep, TP: network.Group{Size: 1}, Recompute: true})
	const mib = 1 << 20
	want := map[string]float64{"ep.a2a.fwd": 8 * mib, "moe.tp.ag.fwd": 16 * mib, "moe.tp.rs.bwd": 16 * mib, "moe.shared.ag.recompute": 8 * mib}
	got := map[string]float64{}
	for _, c := range l.Collectives {
		got[c.Name] = float64(c.Bytes)
		if strings.HasPrefix(c.Name, "moe.") && (c.Group != tp || c.Dim != partition.DimTP) {
			t.Errorf("%s on %+v (%v), want the TP group", c.Name, c.Group, c.Dim)
		}
	}
	for name, b := range want {
		if got[name] != b {
			t.Errorf("%s: %g B, want %g", name, got[name], b)
		}
	}
	if len(l.Collectives) != 3*5 {
		t.Errorf("%d collectives, want 5 per pass (all-to-all, TP all-gather and reduce-scatter, shared ones) × 3 passes", len(l.Collectives))
	}
	flop := func(l Layer, prefix string) (f float64) {
		for _, op := range l.Forward {
			if strings.HasPrefix(op.Name, prefix) {
				f += float64(op.FLOP)
			}
		}
		return f
	}
	if f := flop(l, "moe.expert.fc"); f != 2*8192*1024*(2048+1024) || f != flop(one, "moe.expert.fc")/2 {
		t.Errorf("expert FLOP %g at TP 2, %g at TP 1", f, flop(one, "moe.expert.fc"))
	}
	if f := flop(l, "moe.shared.fc"); f != 6*4096*1024*1024/2 {
		t.Errorf("shared expert FLOP %g, want 6·n·h·f/t", f)
	}
	if p := s.ExpertParamsTP(1024, 2); p != 3*1024*2048/2 {
		t.Errorf("expert params per TP rank %g", p)
	}
}

// FP8 experts, by hand for 4,096 tokens of width 1,024 in bf16, 8 SwiGLU experts of 2,048 plus a
// shared one of 1,024, top-2, capacity factor 1, EP 4 (8 · 1,024 = 8,192 slots, this GPU's 2
// experts over them): the four expert and shared GEMMs take FP8 inputs and the router stays
// bf16; a cast precedes each GEMM's input forward (slots × h, slots × f, tokens × h, tokens ×
// f) and each data gradient backward (slots × h, slots × 2f, tokens × h, tokens × 2f), 2 bytes
// read and 2 written per element [X, as the dense layer's]; fc1's and fc2's kept inputs halve
// (1 byte per element), the activation's stays bf16; the all-to-alls stay bf16.
func TestFP8Experts(t *testing.T) {
	s := Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: 2048, EP: 4, Gated: true, NoBias: true, SharedHidden: 1024}
	in := Inputs{N: 4096, H: 1024, DT: dtype.BF16, GEMMDT: dtype.FP8, EP: network.Group{Size: 4, Stride: 1}, TP: network.Group{Size: 1}}
	fp8 := Build(partition.NewGraph(64, 32), s, in)
	in.GEMMDT = dtype.BF16
	bf := Build(partition.NewGraph(64, 32), s, in)
	const slots, n, h, f, sf = 8192.0, 4096.0, 1024.0, 2048.0, 1024.0
	var castBytes float64
	gemms := 0
	for _, op := range append(append([]partition.Op{}, fp8.Forward...), fp8.Backward...) {
		switch {
		case strings.HasSuffix(op.Name, ".cast"):
			castBytes += float64(op.Read + op.Written)
		case op.Kind == partition.MatMul && strings.HasPrefix(op.Name, "moe.router"):
			if op.DType != dtype.BF16 {
				t.Errorf("%s in %v, want bf16", op.Name, op.DType)
			}
		case op.Kind == partition.MatMul:
			gemms++
			if op.DType != dtype.FP8 {
				t.Errorf("%s in %v, want fp8", op.Name, op.DType)
			}
		}
	}
	if want := 4 * (slots*h + slots*f + n*h + n*sf + slots*h + slots*2*f + n*h + n*2*sf); castBytes != want {
		t.Errorf("cast bytes %g, want %g", castBytes, want)
	}
	if gemms != 4+8 { // four forward GEMMs, their data and weight gradients
		t.Errorf("%d FP8 GEMMs, want 12", gemms)
	}
	if d := bf.Saved - fp8.Saved; float64(d) != slots*h+slots*f+n*sf {
		t.Errorf("FP8 saves %v less, want (slots·h + slots·f + n·f_shared) × 1 byte", d)
	}
	if fp8.Collectives[0].Bytes != bf.Collectives[0].Bytes {
		t.Errorf("the all-to-all changed under FP8")
	}
}
