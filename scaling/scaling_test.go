package scaling

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

func within(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// Hand-computed values; each comment shows the arithmetic (natural logs, 5 significant digits).
func TestKaplanClosedForms(t *testing.T) {
	k := DefaultKaplan()
	cases := []struct {
		name      string
		got, want float64
	}{
		// L(1e9) = (8.8e13/1e9)^0.076 = exp(0.076·ln 88000) = exp(0.076·11.385) = exp(0.86526) = 2.3756
		{"L(N=1e9)", k.LossN(1e9), 2.3756},
		// N(L=2) = 8.8e13 · 2^(−1/0.076) = 8.8e13 · 2^(−13.158) = 8.8e13 · 1.0942e−4 = 9.6286e9
		{"N(L=2)", k.ParamsForLoss(2), 9.6286e9},
		// L(D=1e10) = (5.4e13/1e10)^0.095 = exp(0.095·ln 5400) = exp(0.095·8.5942) = exp(0.81645) = 2.2624
		{"L(D=1e10)", k.LossD(1e10), 2.2624},
		// L(N=1e9, D=1e10) = [(6.4e13/1e9)^(0.076/0.103) + 1.8e13/1e10]^0.103
		//                  = [64000^0.73786 + 1800]^0.103 = [3527.9 + 1800]^0.103 = 5327.9^0.103 = 2.4197
		{"L(N,D)", k.LossND(1e9, 1e10), 2.4197},
		// L(N=1e9, S=1e4) = (6.5e13/1e9)^0.077 + (2.1e3/1e4)^0.76 = 65000^0.077 + 0.21^0.76
		//                 = 2.3485 + 0.30436 = 2.6529
		{"L(N,S)", k.LossNS(1e9, 1e4), 2.6529},
		// L(C_min = 1 PF-day) = (3.1e8)^0.05 = exp(0.05·19.552) = exp(0.97761) = 2.6581
		{"L(Cmin=1)", k.LossCmin(1), 2.6581},
		// B_crit(L=2) = 2e8 · 2^(−1/0.21) = 2e8 · 2^(−4.7619) = 2e8 · 0.036857 = 7.3715e6 tokens
		{"Bcrit(2)", k.CriticalBatchTokens(2), 7.3715e6},
		// S_min for a step term of 0.1 nats: 2.1e3 · 0.1^(−1/0.76) = 2.1e3 · 10^1.3158 = 2.1e3 · 20.691 = 43452
		{"Smin(gap 0.1)", k.StepsMinForGap(0.1), 43452},
		// S = S_min (1 + B_crit/B): B = B_crit doubles the steps.
		{"S at B=Bcrit", Steps(1000, 512, 512), 2000},
		// C_min = C / (1 + B/B_crit): B = B_crit halves the compute.
		{"Cmin at B=Bcrit", ComputeMin(1e21, 512, 512), 5e20},
	}
	for _, c := range cases {
		if !within(c.got, c.want, 1e-4) {
			t.Errorf("%s = %.6g, want %.5g", c.name, c.got, c.want)
		}
	}
	// Inverse consistency: L(N(L)) = L.
	for _, l := range []float64{1.0, 1.8, 2.5, 4} {
		if got := k.LossN(k.ParamsForLoss(l)); !within(got, l, 1e-12) {
			t.Errorf("L(N(%g)) = %g", l, got)
		}
	}
}

func TestChinchillaClosedForms(t *testing.T) {
	c := DefaultChinchilla()
	// Chinchilla itself, N = 70e9, D = 1.4e12 (Hoffmann et al. 2022 Table 3 model):
	// 1.69 + 406.4/70e9^0.34 + 410.7/1.4e12^0.28 = 1.69 + 406.4/4867.8 + 410.7/2517.2
	//        = 1.69 + 0.083487 + 0.16316 = 1.9366
	if got := c.Loss(70e9, 1.4e12); !within(got, 1.9366, 2e-4) {
		t.Errorf("L(70B, 1.4T) = %.5g, want 1.9366", got)
	}
	// The loss-optimal split reaches the target loss exactly...
	for _, l := range []float64{1.8, 2.0, 2.5} {
		n, d := c.OptimalForLoss(l)
		if got := c.Loss(n, d); !within(got, l, 1e-10) {
			t.Errorf("L(OptimalForLoss(%g)) = %g", l, got)
		}
		// ...and lies on the compute-optimal frontier of Eq. (4) for its compute C = 6ND:
		// an independent closed form must return the same N and D.
		n4, d4 := c.OptimalForCompute(6 * n * d)
		if !within(n4, n, 1e-9) || !within(d4, d, 1e-9) {
			t.Errorf("loss %g: Eq. 4 gives N=%g D=%g, Lagrange gives N=%g D=%g", l, n4, d4, n, d)
		}
	}
}

func TestResolveTable9Presets(t *testing.T) {
	for _, row := range Table9 {
		tg, err := Resolve(DefaultRequest(row.Loss))
		if err != nil {
			t.Fatalf("loss %g: %v", row.Loss, err)
		}
		if tg.Shape.DModel != row.DModel || tg.Shape.Layers != row.Layers || tg.LocalBatch != row.LocalBatch {
			t.Errorf("loss %g: shape %+v batch %d", row.Loss, tg.Shape, tg.LocalBatch)
		}
		// reference/ramp.md §5.4: L(N_actual) of the ten presets.
		want := map[float64]float64{2.5: 2.478, 2.4: 2.353, 2.2: 2.157, 2.0: 1.993, 1.8: 1.825,
			1.7: 1.670, 1.5: 1.4997, 1.3: 1.330, 1.2: 1.1735, 1.0: 1.013}[row.Loss]
		if !within(tg.ModelLoss, want, 1e-3) {
			t.Errorf("loss %g: L(N) = %.4f, want %.4f", row.Loss, tg.ModelLoss, want)
		}
	}
}

func TestAspectRule(t *testing.T) {
	// Loss 1.9 (no preset): N = 8.8e13 · 1.9^(−13.158) = 1.8909e10. d = (N·128/12)^(1/3) =
	// (2.0170e11)^(1/3) = 5864.5 → 46 × 128 = 5888; n_layer = N/(12·5888² + 13·5888) = 45.44 → 45.
	tg, err := Resolve(DefaultRequest(1.9))
	if err != nil {
		t.Fatal(err)
	}
	if tg.Shape.DModel != 5888 || tg.Shape.Layers != 45 {
		t.Errorf("shape = %+v, want d 5888, 45 layers", tg.Shape)
	}
	if !strings.Contains(tg.Shape.Source, "aspect") {
		t.Errorf("source = %q", tg.Shape.Source)
	}
	// 5888 = 46·128 and 96 does not divide it → 46 heads of 128.
	if tg.Shape.Heads != 46 {
		t.Errorf("heads = %d, want 46", tg.Shape.Heads)
	}
	// ShapeAspect ignores the Table 9 preset.
	r := DefaultRequest(1.8)
	r.Shape = ShapeAspect
	tg, _ = Resolve(r)
	if tg.Shape.DModel == 6144 && tg.Shape.Layers == 71 {
		t.Error("ShapeAspect returned the Table 9 preset")
	}
}

func TestChinchillaTarget(t *testing.T) {
	r := DefaultRequest(2.0)
	r.Law = LawChinchilla
	tg, err := Resolve(r)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Tokens <= 0 || tg.StepsMin != 0 {
		t.Fatalf("target = %+v", tg)
	}
	// Steps = D / (B · seq).
	if got := tg.Steps(1000); !within(got, tg.Tokens/(1000*1024), 1e-12) {
		t.Errorf("steps = %g", got)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		req  Request
		want string
	}{
		{DefaultRequest(0), "bound 0"},
		{DefaultRequest(-1), "bound 0"},
		{DefaultRequest(math.NaN()), "not a finite number"},
		{func() Request { r := DefaultRequest(1.69); r.Law = LawChinchilla; return r }(), "E = 1.69"},
		{func() Request { r := DefaultRequest(1.5); r.Law = LawChinchilla; return r }(), "irreducible"},
		{func() Request { r := DefaultRequest(2); r.Gap = 0; return r }(), "--loss-gap"},
		{func() Request { r := DefaultRequest(2); r.AspectRatio = -1; return r }(), "--aspect-ratio"},
		{func() Request { r := DefaultRequest(2); r.Seq = 0; return r }(), "--seq"},
	}
	for _, c := range cases {
		_, err := Resolve(c.req)
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want usage error containing %q", c.req, err, c.want)
		}
	}
	// A loss so low no representable model reaches it is infeasible, not a crash.
	_, err := Resolve(DefaultRequest(0.01))
	if errs.ExitCode(err) != errs.ExitInfeasible {
		t.Errorf("loss 0.01: err = %v, want infeasible", err)
	}
	var l Law
	if err := l.UnmarshalText([]byte("gpt")); err == nil || !strings.Contains(err.Error(), "kaplan, chinchilla") {
		t.Errorf("Law.UnmarshalText: %v", err)
	}
}
