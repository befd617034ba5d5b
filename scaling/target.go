package scaling

import (
	"fmt"
	"math"

	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
)

// Law selects the scaling law that turns a target loss into a model and a token budget.
type Law int

const (
	// LawKaplan is Kaplan et al. 2020 (the RAMP paper's choice, §7.2.1).
	LawKaplan Law = iota
	// LawChinchilla is Hoffmann et al. 2022, compute-optimal N and D for the target loss.
	LawChinchilla
)

var lawNames = []string{"kaplan", "chinchilla"}

func (l Law) String() string { return lawNames[l] }

// ShapeRule selects how a parameter count becomes (d_model, n_layer).
type ShapeRule int

const (
	// ShapeAuto uses the RAMP Table 9 shape when the target loss is one of its ten losses (Kaplan
	// law only) and the aspect-ratio rule otherwise.
	ShapeAuto ShapeRule = iota
	// ShapeAspect always uses the aspect-ratio rule.
	ShapeAspect
)

var shapeNames = []string{"auto", "aspect"}

func (s ShapeRule) String() string { return shapeNames[s] }

// Defaults for a Request.
const (
	// DefaultSeq is the context length of Kaplan's models and of every RAMP Megatron run
	// (RAMP §7.3: "the sequence length selected for all trained models is 1024 tokens").
	DefaultSeq = 1024
	// DefaultGap is the fraction of the converged loss L(N) left to the step term of Kaplan
	// Eq. (1.6) when training stops: (S_c/S_min)^α_S = 0.05·L(N). It is a fit [D] that reproduces
	// RAMP Table 9's #Steps on 8 of 10 rows within ±2.2% (reference/ramp.md §5.3–5.4).
	DefaultGap = 0.05
	// DefaultAspectRatio is d_model/n_layer for losses without a Table 9 preset: 128, the ratio of
	// the larger GPT-3 models (Brown et al. 2020 Table 2.1: 12288/96, 5140/40) [X]; Kaplan §3.1
	// (Fig. 5) finds the loss within a few percent for ratios between about 20 and 200.
	DefaultAspectRatio = 128
)

// maxParams bounds the extrapolation: 10^21 parameters is 10^7 times the largest Table 9 model and
// keeps every shape in integer range.
const maxParams = 1e21

// Request is a target loss and how to read it.
type Request struct {
	Law         Law
	Loss        float64 // target cross-entropy loss, nats/token
	Gap         float64 // Kaplan only: fraction of L(N) left to the step term (DefaultGap)
	Shape       ShapeRule
	AspectRatio float64 // d_model / n_layer for the aspect rule
	Seq         int     // tokens per sequence
}

// DefaultRequest returns a request for loss with every default.
func DefaultRequest(loss float64) Request {
	return Request{Law: LawKaplan, Loss: loss, Gap: DefaultGap, Shape: ShapeAuto, AspectRatio: DefaultAspectRatio, Seq: DefaultSeq}
}

// Shape is a transformer's size. Heads is the law's choice before model parallelism; the
// partitioner may raise it so that the tensor-parallel degree divides it (RAMP Table 9).
type Shape struct {
	DModel int
	Layers int
	Heads  int
	Source string // where the shape comes from
}

// Target is what a scaling law prescribes for a target loss.
type Target struct {
	Request
	ParamsForLoss float64 // N the law asks for (non-embedding)
	Shape         Shape
	Params        float64 // non-embedding parameters of Shape
	ModelLoss     float64 // the law's loss for Params (Kaplan: L(N); Chinchilla: L(N, D))
	CriticalBatch float64 // B_crit in sequences (Kaplan Eq. 1.4)
	StepsMin      float64 // Kaplan: S_min, steps at a very large batch; 0 for Chinchilla
	Tokens        float64 // Chinchilla: compute-optimal token budget D; 0 for Kaplan
	// LocalBatch is the per-data-parallel-rank batch of the RAMP Table 9 preset (global batch /
	// DP level), 0 when the shape is not a preset.
	LocalBatch int
}

// Steps is the number of training steps at a global batch of b sequences: Kaplan
// S = S_min (1 + B_crit/B); Chinchilla D / (B · seq).
func (t Target) Steps(b float64) float64 {
	if t.Law == LawChinchilla {
		return t.Tokens / (b * float64(t.Seq))
	}
	return Steps(t.StepsMin, t.CriticalBatch, b)
}

// NonEmbeddingParams counts a GPT/Megatron transformer's parameters outside the embeddings:
// per layer 12·d² weights (Kaplan Eq. 2.1: N ≈ 2 d n_layer (2 d_attn + d_ff) with d_attn = d,
// d_ff = 4d) plus 13·d biases and LayerNorm parameters (QKV 3d, projection d, fc1 4d, fc2 d,
// two LayerNorms 4d). The bias term reproduces RAMP Table 9's #Params on all ten rows [D].
func NonEmbeddingParams(dModel, layers int) float64 {
	d := float64(dModel)
	return float64(layers) * (12*d*d + 13*d)
}

// BaseHeads is RAMP Table 9's head count before model parallelism: d/96 when 96 divides d,
// else d/128 (it reproduces all ten rows together with heads ≥ MP) [D].
func BaseHeads(dModel int) int {
	if dModel%96 == 0 {
		return dModel / 96
	}
	return max(1, dModel/128)
}

// Resolve applies the law to a request.
func Resolve(r Request) (Target, error) {
	if err := validate(r); err != nil {
		return Target{}, err
	}
	t := Target{Request: r}
	k := DefaultKaplan()
	switch r.Law {
	case LawKaplan:
		t.ParamsForLoss = k.ParamsForLoss(r.Loss)
	case LawChinchilla:
		c := DefaultChinchilla()
		t.ParamsForLoss, t.Tokens = c.OptimalForLoss(r.Loss)
	}

	if t.ParamsForLoss > maxParams {
		return Target{}, errs.Infeasible(fmt.Sprintf("the %s law needs %.3g parameters for loss %g", r.Law, t.ParamsForLoss, r.Loss),
			"loss %g is out of reach: more than %.0e parameters", r.Loss, maxParams)
	}
	preset, ok := Table9Preset(r.Loss)
	if ok && r.Law == LawKaplan && r.Shape == ShapeAuto {
		t.Shape = Shape{DModel: preset.DModel, Layers: preset.Layers, Heads: BaseHeads(preset.DModel),
			Source: table9Sources()[table9Index(preset.Loss)]}
		t.LocalBatch = preset.LocalBatch
	} else {
		t.Shape = AspectShape(t.ParamsForLoss, r.AspectRatio)
	}
	t.Params = NonEmbeddingParams(t.Shape.DModel, t.Shape.Layers)

	switch r.Law {
	case LawKaplan:
		t.ModelLoss = k.LossN(t.Params)
		t.StepsMin = k.StepsMinForGap(r.Gap * t.ModelLoss)
	case LawChinchilla:
		c := DefaultChinchilla()
		t.ModelLoss = c.Loss(t.Params, t.Tokens)
	}
	// Critical batch at the loss the model actually trains to (RAMP fit, reference/ramp.md §5.3).
	// For Chinchilla this borrows Kaplan's B_crit, an assumption [X]: Hoffmann et al. give no
	// batch law.
	t.CriticalBatch = k.CriticalBatchTokens(t.ModelLoss) / float64(r.Seq)
	return t, nil
}

// AspectShape is the documented rule for losses without a preset: with n_layer = d/ρ,
// N = 12·n_layer·d² gives d = (N·ρ/12)^(1/3); d is rounded to a multiple of 128 (a whole number of
// 128-wide heads, at least 128) and n_layer = round(N / (12d² + 13d)), at least 1.
func AspectShape(n, aspect float64) Shape {
	d := math.Cbrt(n * aspect / 12)
	dm := max(128, int(math.Round(d/128))*128)
	per := 12*float64(dm)*float64(dm) + 13*float64(dm)
	layers := max(1, int(math.Round(n/per)))
	return Shape{DModel: dm, Layers: layers, Heads: BaseHeads(dm),
		Source: fmt.Sprintf("aspect-ratio rule d_model/n_layer ≈ %g", aspect)}
}

func validate(r Request) error {
	if math.IsNaN(r.Loss) || math.IsInf(r.Loss, 0) {
		return errs.Usage("--loss %v is not a finite number; give a cross-entropy loss in nats/token, e.g. 1.8", r.Loss)
	}
	switch r.Law {
	case LawKaplan:
		if r.Loss <= 0 {
			return errs.Usage("--loss %g is at or below the Kaplan law's bound 0 (L(N) = (8.8e13/N)^0.076 > 0 for every N); give a loss > 0, e.g. 1.8", r.Loss)
		}
	case LawChinchilla:
		c := DefaultChinchilla()
		if r.Loss <= c.E {
			return errs.Usage("--loss %g is at or below the Chinchilla law's irreducible loss E = %g nats/token (Hoffmann et al. 2022 §3.3); give a loss > %g", r.Loss, c.E, c.E)
		}
	default:
		return errs.Usage("unknown scaling law %d", r.Law)
	}
	if r.Law == LawKaplan && (r.Gap <= 0 || r.Gap >= 1 || math.IsNaN(r.Gap)) {
		return errs.Usage("--loss-gap %g is outside (0, 1); it is the fraction of L(N) left to the step term, default %g", r.Gap, DefaultGap)
	}
	if !(r.AspectRatio > 0) || math.IsInf(r.AspectRatio, 0) {
		return errs.Usage("--aspect-ratio %g must be > 0 (d_model / n_layer, default %d)", r.AspectRatio, DefaultAspectRatio)
	}
	if r.Seq <= 0 {
		return errs.Usage("--seq %d must be > 0 tokens", r.Seq)
	}
	return nil
}

// MarshalText renders the name in JSON and YAML.
func (x Law) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Law) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, lawNames) }

// MarshalText renders the name in JSON and YAML.
func (x ShapeRule) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *ShapeRule) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, shapeNames) }
