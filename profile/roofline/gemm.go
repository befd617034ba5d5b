package roofline

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/internal/units"
)

// GEMMModel is how GEMM efficiency is chosen.
type GEMMModel int

const (
	// GEMMConstant runs every GEMM at Efficiency.MatMul of the tensor peak (the seeds' papers'
	// reading).
	GEMMConstant GEMMModel = iota
	// GEMMShape runs a GEMM at the GPU's measured ceiling times its tile and wave quantisation
	// over the SMs (configs/gemm.json; doc.go).
	GEMMShape
	// GEMMAuto is GEMMShape where configs/gemm.json has the GPU and dtype, GEMMConstant
	// elsewhere (the cluster presets' setting; the profile's name says which applied).
	GEMMAuto
)

var gemmModelNames = []string{"constant", "shape", "auto"}

func (m GEMMModel) String() string { return gemmModelNames[m] }

// MarshalText renders the name in JSON and YAML.
func (m GEMMModel) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads the name.
func (m *GEMMModel) UnmarshalText(b []byte) error { return enum.Unmarshal(m, b, gemmModelNames) }

// GEMMShapeEntry is one GPU's row of configs/gemm.json.
type GEMMShapeEntry struct {
	GPU string `json:"gpu"`
	// SMs is the number of streaming multiprocessors: one tile runs per SM per wave.
	SMs int `json:"sms"`
	// TileM × TileN is the thread-block tile of the output matrix.
	TileM int `json:"tile_m"`
	TileN int `json:"tile_n"`
	// MAMF is the measured maximum achievable matmul FLOP/s per dtype name: what a GEMM of
	// whole tiles in whole waves reaches (its ceiling is MAMF / the dense tensor peak).
	MAMF map[string]float64 `json:"mamf_flop_per_s"`
	// FlashAttention is the GPU's measured FlashAttention efficiency in fp16/bf16 (nil: none
	// measured, and --attention flash is refused on it).
	FlashAttention *FlashEfficiency `json:"flash_attention"`
	// FP8SplitAccumulate is the fraction of its FP8 rate a GEMM keeps when it accumulates at full
	// precision (cuBLASLt without CUBLASLT_MATMUL_DESC_FAST_ACCUM: partial sums promoted to fp32),
	// as Transformer Engine runs the backward pass's data- and weight-gradient GEMMs (0: not
	// measured, no penalty).
	FP8SplitAccumulate float64 `json:"fp8_split_accumulate,omitempty"`
	// Sustained is the share of its burst rate (MAMF) a tensor-core kernel keeps when the whole
	// node runs saturated at its power limit, as training does: the maximum sustainable matmul
	// FLOPS over the maximum achievable (MSMF / MAMF; 0: not measured, no penalty). It scales
	// the GEMM ceiling and the FlashAttention efficiencies, both measured in short bursts.
	Sustained float64 `json:"sustained,omitempty"`
	// KOverhead is, per dtype name, the per-tile fixed cost of a GEMM (pipeline fill, epilogue)
	// in units of K: a GEMM of inner dimension K runs at K / (K + K0) of its long-K rate,
	// relative to the MAMF shape's K (MAMFK). Dtypes without an entry have no short-K penalty.
	KOverhead map[string]float64 `json:"k_overhead,omitempty"`
	// MAMFK is, per dtype name in KOverhead, the K of the shape MAMF was measured at.
	MAMFK map[string]int `json:"mamf_k,omitempty"`
	// Sources cites sms, tile and mamf_flop_per_s (and flash_attention, fp8_split_accumulate,
	// sustained and k_overhead when given).
	Sources map[string]string `json:"sources"`
}

// FlashEfficiency is the fraction of the dense fp16/bf16 tensor peak that FlashAttention
// kernels reach on the FLOP they execute (partition.FlashWork), per pass: one fraction for
// every shape (Forward, Backward), or measured curves over the sequence length per head
// dimension (Curves), of which the nearest head dimension's applies.
type FlashEfficiency struct {
	Forward  float64      `json:"fwd,omitempty"`
	Backward float64      `json:"bwd,omitempty"`
	Curves   []FlashCurve `json:"curves,omitempty"`
}

// FlashCurve is one head dimension's measured FlashAttention throughput (TFLOP/s in the
// FlashAttention-2 §4.1 convention) at sequence lengths Seq: the causal forward pass, and the
// non-causal forward and backward passes. The causal backward pass is taken to lose to the
// mask what the forward does at the same length [D]: bwd · causal_fwd / fwd.
type FlashCurve struct {
	HeadDim   int       `json:"head_dim"`
	Seq       []int     `json:"seq"`
	CausalFwd []float64 `json:"causal_fwd_tflops"`
	Fwd       []float64 `json:"fwd_tflops"`
	Bwd       []float64 `json:"bwd_tflops"`
}

// check names what is wrong with the curve (p collects it under prefix).
func (c FlashCurve) check(p *params.Problems, prefix string) {
	p.AtLeast(prefix+".head_dim", c.HeadDim, 1)
	if len(c.Seq) < 1 {
		p.Addf("%s.seq: no sequence length", prefix)
	}
	for i, s := range c.Seq {
		if s < 1 || (i > 0 && s <= c.Seq[i-1]) {
			p.Addf("%s.seq %v must be positive and increasing", prefix, c.Seq)
			break
		}
	}
	for _, x := range []struct {
		k string
		v []float64
	}{{"causal_fwd_tflops", c.CausalFwd}, {"fwd_tflops", c.Fwd}, {"bwd_tflops", c.Bwd}} {
		if len(x.v) != len(c.Seq) {
			p.Addf("%s.%s has %d values for %d sequence lengths", prefix, x.k, len(x.v), len(c.Seq))
			continue
		}
		for _, v := range x.v {
			if !(v > 0) || math.IsInf(v, 0) {
				p.Addf("%s.%s %g must be > 0", prefix, x.k, v)
			}
		}
	}
}

var (
	gemmOnce  sync.Once
	gemmTable *registry.Registry[GEMMShapeEntry]
	gemmErr   error
)

// GEMMTable returns the shape-aware GEMM table (configs/gemm.json, compiled in as
// tables_gen.go: see TestBuiltinTables), checked once.
func GEMMTable() (*registry.Registry[GEMMShapeEntry], error) {
	gemmOnce.Do(func() { gemmTable, gemmErr = gemmRegistry(builtinGEMM(), "configs/gemm.json") })
	return gemmTable, gemmErr
}

// decodeGEMM reads a GEMM table: every entry names a GPU, has positive SMs and tile sides,
// positive MAMFs of known dtypes, and a source for sms, tile and mamf_flop_per_s.
func decodeGEMM(data []byte, name string) (*registry.Registry[GEMMShapeEntry], error) {
	var list []GEMMShapeEntry
	if err := params.Decode(data, name, &list); err != nil {
		return nil, err
	}
	return gemmRegistry(list, name)
}

// gemmRegistry validates a decoded GEMM table (decodeGEMM's checks) and indexes it by GPU.
func gemmRegistry(list []GEMMShapeEntry, name string) (*registry.Registry[GEMMShapeEntry], error) {
	r := registry.New[GEMMShapeEntry]("GEMM table entry")
	for i, e := range list {
		var p params.Problems
		if e.GPU == "" {
			p.Addf("entry %d has no gpu", i)
		}
		p.AtLeast(e.GPU+".sms", e.SMs, 1)
		p.AtLeast(e.GPU+".tile_m", e.TileM, 1)
		p.AtLeast(e.GPU+".tile_n", e.TileN, 1)
		if len(e.MAMF) == 0 {
			p.Addf("%s.mamf_flop_per_s: no dtype", e.GPU)
		}
		for dt, c := range e.MAMF {
			if _, err := dtype.Parse(dt); err != nil {
				p.Addf("%s.mamf_flop_per_s.%s: %v", e.GPU, dt, err)
			}
			if !(c > 0) || math.IsInf(c, 0) {
				p.Addf("%s.mamf_flop_per_s.%s %g must be > 0", e.GPU, dt, c)
			}
		}
		cited := []string{"sms", "tile", "mamf_flop_per_s"}
		if f := e.FlashAttention; f != nil {
			cited = append(cited, "flash_attention")
			if len(f.Curves) == 0 {
				for _, x := range []struct {
					k string
					v float64
				}{{"fwd", f.Forward}, {"bwd", f.Backward}} {
					if !(x.v > 0 && x.v <= 1) {
						p.Addf("%s.flash_attention.%s %g must be in (0, 1]", e.GPU, x.k, x.v)
					}
				}
			} else if f.Forward != 0 || f.Backward != 0 {
				p.Addf("%s.flash_attention: fwd/bwd and curves both given; give one", e.GPU)
			}
			for i, c := range f.Curves {
				c.check(&p, fmt.Sprintf("%s.flash_attention.curves[%d]", e.GPU, i))
			}
		}
		if f := e.FP8SplitAccumulate; f != 0 {
			cited = append(cited, "fp8_split_accumulate")
			if !(f > 0 && f <= 1) {
				p.Addf("%s.fp8_split_accumulate %g must be in (0, 1]", e.GPU, f)
			}
		}
		if f := e.Sustained; f != 0 {
			cited = append(cited, "sustained")
			if !(f > 0 && f <= 1) {
				p.Addf("%s.sustained %g must be in (0, 1]", e.GPU, f)
			}
		}
		if len(e.KOverhead) > 0 {
			cited = append(cited, "k_overhead")
		}
		for dt, k0 := range e.KOverhead {
			if !(k0 > 0) || math.IsInf(k0, 0) {
				p.Addf("%s.k_overhead.%s %g must be > 0", e.GPU, dt, k0)
			}
			if k := e.MAMFK[dt]; k < 1 {
				p.Addf("%s.mamf_k.%s %d: the K of the MAMF shape must be given (>= 1) with k_overhead.%s", e.GPU, dt, k, dt)
			}
		}
		for _, k := range cited {
			if strings.TrimSpace(e.Sources[k]) == "" {
				p.Addf("%s.sources.%s: missing; every number names where it comes from", e.GPU, k)
			}
		}
		if err := p.Err(name); err != nil {
			return nil, err
		}
		r.Add(e.GPU, e)
	}
	return r, nil
}

// gemmShape is a roofline's shape-aware GEMM model for one dtype.
type gemmShape struct {
	sms, tm, tn int
	ceiling     float64
	// bwd is the share of the rate backward-pass GEMMs keep: the FP8 split accumulation of
	// Transformer Engine's dgrad and wgrad GEMMs (1 for other dtypes or when not measured).
	bwd float64
	// k0 is the per-tile fixed cost in units of K (0: no short-K penalty) and kRef the MAMF
	// shape's K/(K+k0), which the ceiling already contains.
	k0, kRef float64
}

// newGEMMShape looks the GPU and dtype up in the table (a usage error names what is missing);
// the ceiling is the measured MAMF over the GPU's dense tensor peak, at most 1.
func newGEMMShape(g GPU, dt dtype.DType) (gemmShape, error) {
	gpu := g.Name
	t, err := GEMMTable()
	if err != nil {
		return gemmShape{}, err
	}
	e, err := t.Lookup(gpu)
	if err != nil {
		return gemmShape{}, errs.Usage("--gemm shape: %v (or --gemm constant)", err)
	}
	mamf, ok := e.MAMF[dt.String()]
	if !ok {
		return gemmShape{}, errs.Usage("--gemm shape: GPU %s has no measured %s GEMM ceiling; measured: %s (or --gemm constant)", gpu, dt, strings.Join(keys(e.MAMF), ", "))
	}
	peak, err := g.TensorPeak(dt)
	if err != nil {
		return gemmShape{}, err
	}
	if mamf > float64(peak) {
		return gemmShape{}, errs.Usage("GEMM table: %s %s measured %g FLOP/s above the dense peak %g", gpu, dt, mamf, float64(peak))
	}
	bwd := 1.0
	if dt == dtype.FP8 && e.FP8SplitAccumulate > 0 {
		bwd = e.FP8SplitAccumulate
	}
	s := gemmShape{sms: e.SMs, tm: e.TileM, tn: e.TileN, ceiling: mamf / float64(peak) * sustainedShare(e), bwd: bwd}
	if k0 := e.KOverhead[dt.String()]; k0 > 0 {
		k := float64(e.MAMFK[dt.String()])
		s.k0, s.kRef = k0, k/(k+k0)
	}
	return s, nil
}

// sustainedShare is the entry's MSMF/MAMF, 1 when not measured.
func sustainedShare(e GEMMShapeEntry) float64 {
	if e.Sustained > 0 {
		return e.Sustained
	}
	return 1
}

// shortK is the share of the shape model's rate a GEMM of inner dimension k keeps: its
// K/(K+K0) over the MAMF shape's, at most 1 (the ceiling is the measured maximum); 1 without a
// K0 or a known k.
func (g gemmShape) shortK(k float64) float64 {
	if g.k0 == 0 || !(k > 0) {
		return 1
	}
	return min(1, k/(k+g.k0)/g.kRef)
}

// efficiency is the fraction of the tensor peak a batch of b GEMMs with M × N outputs reaches:
// the ceiling times the useful share of the tiles (tile quantisation) and of the waves (wave
// quantisation): M·N / (⌈M/Tm⌉·Tm · ⌈N/Tn⌉·Tn) · T / (⌈T/SMs⌉·SMs) with T = b·⌈M/Tm⌉·⌈N/Tn⌉.
func (g gemmShape) efficiency(b, m, n int) float64 {
	if b < 1 || m < 1 || n < 1 {
		return g.ceiling
	}
	tm, tn := (m+g.tm-1)/g.tm, (n+g.tn-1)/g.tn
	tiles := b * tm * tn
	waves := (tiles + g.sms - 1) / g.sms
	tile := float64(m) * float64(n) / (float64(tm*g.tm) * float64(tn*g.tn))
	wave := float64(tiles) / float64(waves*g.sms)
	return g.ceiling * tile * wave
}

// GEMMCeiling is the shape model's ceiling (MAMF / dense peak) for a GPU and dtype under
// model m, and whether the shape model applies (constant, or auto without a table entry: no).
func GEMMCeiling(m GEMMModel, g GPU, dt dtype.DType) (float64, bool) {
	if m == GEMMConstant {
		return 0, false
	}
	s, err := newGEMMShape(g, dt)
	return s.ceiling, err == nil
}

// flashEfficiency is the GPU's FlashAttention efficiency for dt, when configs/gemm.json has one
// (the kernels run fp16 and bf16 only).
func flashEfficiency(gpu string, dt dtype.DType) (f FlashEfficiency, sustained float64, ok bool) {
	if dt != dtype.FP16 && dt != dtype.BF16 {
		return FlashEfficiency{}, 0, false
	}
	t, err := GEMMTable()
	if err != nil {
		return FlashEfficiency{}, 0, false
	}
	e, ok := t.Get(gpu)
	if !ok || e.FlashAttention == nil {
		return FlashEfficiency{}, 0, false
	}
	return *e.FlashAttention, sustainedShare(e), true
}

// flashRates is a GPU's FlashAttention model for one dtype, resolved against its peak: one
// efficiency per pass, or per measured head dimension the efficiencies at log2 of each
// measured sequence length (piecewise linear between them, flat beyond the ends).
type flashRates struct {
	fwd, bwd float64 // no curves
	curves   []flashRateCurve
}

type flashRateCurve struct {
	logD           float64
	logS, fwd, bwd []float64 // causal
	ncFwd, ncBwd   []float64 // unmasked (context-parallel ring steps)
}

// newFlashRates resolves f against the dense tensor peak, every efficiency scaled by
// the sustained share of the burst rate the measurements ran at.
func newFlashRates(f FlashEfficiency, peak units.FLOPPerSecond, sustained float64) flashRates {
	r := flashRates{fwd: f.Forward * sustained, bwd: f.Backward * sustained}
	for _, c := range f.Curves {
		rc := flashRateCurve{logD: math.Log2(float64(c.HeadDim))}
		for i, s := range c.Seq {
			rc.logS = append(rc.logS, math.Log2(float64(s)))
			rc.fwd = append(rc.fwd, float64(units.TFLOPS(c.CausalFwd[i])/peak)*sustained)
			rc.bwd = append(rc.bwd, float64(units.TFLOPS(c.Bwd[i]*c.CausalFwd[i]/c.Fwd[i])/peak)*sustained)
			rc.ncFwd = append(rc.ncFwd, float64(units.TFLOPS(c.Fwd[i])/peak)*sustained)
			rc.ncBwd = append(rc.ncBwd, float64(units.TFLOPS(c.Bwd[i])/peak)*sustained)
		}
		r.curves = append(r.curves, rc)
	}
	return r
}

// efficiency is the fraction of the peak a FlashAttention pass (backward: bwd), causal or
// unmasked, reaches over queries of sequence s and head dimension d. Without curves (one
// efficiency per pass, FlashAttention-2's "up to" numbers) the mask does not matter.
func (r *flashRates) efficiency(s, d int, bwd, causal bool) float64 {
	if len(r.curves) == 0 {
		if bwd {
			return r.bwd
		}
		return r.fwd
	}
	c, ld := &r.curves[0], math.Log2(float64(d))
	for i := 1; i < len(r.curves); i++ {
		if math.Abs(r.curves[i].logD-ld) < math.Abs(c.logD-ld) {
			c = &r.curves[i]
		}
	}
	ys := c.fwd
	switch {
	case bwd && causal:
		ys = c.bwd
	case bwd:
		ys = c.ncBwd
	case !causal:
		ys = c.ncFwd
	}
	return interpolate(c.logS, ys, math.Log2(float64(s)))
}

// interpolate is the piecewise-linear y(x) through the points (xs increasing), flat beyond them.
func interpolate(xs, ys []float64, x float64) float64 {
	if x <= xs[0] {
		return ys[0]
	}
	for i := 1; i < len(xs); i++ {
		if x <= xs[i] {
			f := (x - xs[i-1]) / (xs[i] - xs[i-1])
			return ys[i-1] + f*(ys[i]-ys[i-1])
		}
	}
	return ys[len(ys)-1]
}

// flashGPUs lists the GPUs with a measured FlashAttention efficiency.
func flashGPUs() []string {
	t, err := GEMMTable()
	if err != nil {
		return nil
	}
	var names []string
	for _, n := range t.Names() {
		if e, _ := t.Get(n); e.FlashAttention != nil {
			names = append(names, n)
		}
	}
	return names
}
