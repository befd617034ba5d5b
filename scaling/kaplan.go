package scaling

import "math"

// PFDay is one petaFLOP/s-day in FLOP (Kaplan et al. 2020 §1.2: 10^15 × 24 × 3600 = 8.64e19).
const PFDay = 8.64e19

// Kaplan holds the constants of Kaplan et al. 2020, "Scaling Laws for Neural Language Models"
// (arXiv:2001.08361). Losses are cross-entropies in nats/token on WebText2 (BPE vocabulary 50,257,
// context 1024); N counts non-embedding parameters, D tokens, S optimisation steps, B tokens per
// batch, C FLOP.
type Kaplan struct {
	AlphaN float64 // L(N) exponent, Eq. (1.1): 0.076
	Nc     float64 // L(N) scale, Eq. (1.1): 8.8e13 parameters
	AlphaD float64 // L(D) exponent, Eq. (1.2): 0.095
	Dc     float64 // L(D) scale, Eq. (1.2): 5.4e13 tokens

	AlphaCmin float64 // L(C_min) exponent, Eq. (1.3): 0.050
	CcMin     float64 // L(C_min) scale, Eq. (1.3): 3.1e8 PF-days

	AlphaB float64 // critical batch exponent, Eq. (1.4): 0.21
	BStar  float64 // critical batch scale, Eq. (1.4): 2e8 tokens

	// L(N, D), Eq. (1.5), uses the dedicated fit of Kaplan Table 2.
	NDAlphaN, NDAlphaD, NDNc, NDDc float64

	// L(N, S_min), Eq. (1.6), uses the dedicated fit of Kaplan Table 3.
	NSAlphaN, NSNc float64
	AlphaS         float64 // step exponent, Eq. (1.6) / Table 3: 0.76
	Sc             float64 // step scale, Eq. (1.6) / Table 3: 2.1e3
}

// DefaultKaplan returns the published constants.
func DefaultKaplan() Kaplan {
	return Kaplan{
		AlphaN: 0.076, Nc: 8.8e13, // Kaplan Eq. (1.1)
		AlphaD: 0.095, Dc: 5.4e13, // Kaplan Eq. (1.2)
		AlphaCmin: 0.050, CcMin: 3.1e8, // Kaplan Eq. (1.3), C in PF-days
		AlphaB: 0.21, BStar: 2e8, // Kaplan Eq. (1.4), B* in tokens
		NDAlphaN: 0.076, NDAlphaD: 0.103, NDNc: 6.4e13, NDDc: 1.8e13, // Kaplan Table 2
		NSAlphaN: 0.077, NSNc: 6.5e13, AlphaS: 0.76, Sc: 2.1e3, // Kaplan Table 3
	}
}

// LossN is the converged loss of a model with N non-embedding parameters, L(N) = (N_c/N)^α_N
// (Eq. 1.1).
func (k Kaplan) LossN(n float64) float64 { return math.Pow(k.Nc/n, k.AlphaN) }

// ParamsForLoss inverts Eq. (1.1): N = N_c · L^(−1/α_N).
func (k Kaplan) ParamsForLoss(l float64) float64 { return k.Nc * math.Pow(l, -1/k.AlphaN) }

// LossD is the loss of a large model trained with early stopping on D tokens, (D_c/D)^α_D
// (Eq. 1.2).
func (k Kaplan) LossD(d float64) float64 { return math.Pow(k.Dc/d, k.AlphaD) }

// LossND is L(N, D) = [(N_c/N)^(α_N/α_D) + D_c/D]^α_D (Eq. 1.5, Table 2 constants).
func (k Kaplan) LossND(n, d float64) float64 {
	return math.Pow(math.Pow(k.NDNc/n, k.NDAlphaN/k.NDAlphaD)+k.NDDc/d, k.NDAlphaD)
}

// LossNS is L(N, S_min) = (N_c/N)^α_N + (S_c/S_min)^α_S (Eq. 1.6, Table 3 constants).
func (k Kaplan) LossNS(n, sMin float64) float64 {
	return math.Pow(k.NSNc/n, k.NSAlphaN) + math.Pow(k.Sc/sMin, k.AlphaS)
}

// LossCmin is L(C_min) = (C_c^min/C_min)^α_C^min with C_min in PF-days (Eq. 1.3).
func (k Kaplan) LossCmin(cMinPFDays float64) float64 {
	return math.Pow(k.CcMin/cMinPFDays, k.AlphaCmin)
}

// CriticalBatchTokens is B_crit(L) = B* / L^(1/α_B) in tokens (Eq. 1.4).
func (k Kaplan) CriticalBatchTokens(l float64) float64 { return k.BStar * math.Pow(l, -1/k.AlphaB) }

// StepsMinForGap is the minimum number of steps S_min after which the step term of Eq. (1.6),
// (S_c/S_min)^α_S, has fallen to gap nats: S_min = S_c · gap^(−1/α_S).
func (k Kaplan) StepsMinForGap(gap float64) float64 { return k.Sc * math.Pow(gap, -1/k.AlphaS) }

// Steps is the number of steps needed at batch B (tokens or sequences, same unit as bCrit) to
// reach what S_min steps reach at a very large batch: S = S_min (1 + B_crit/B) (Kaplan §5.1,
// the S_min(S) definition rearranged).
func Steps(sMin, bCrit, b float64) float64 { return sMin * (1 + bCrit/b) }

// TrainingCompute is Kaplan's C ≈ 6·N·D FLOP for N non-embedding parameters trained on D tokens
// (§2.1: 6N per token, forward and backward, attention context excluded).
func TrainingCompute(n, tokens float64) float64 { return 6 * n * tokens }

// ComputeMin is the compute needed at a batch far below B_crit for the same loss,
// C_min = C / (1 + B/B_crit) (Kaplan §5.1).
func ComputeMin(c, bCrit, b float64) float64 { return c / (1 + b/bCrit) }
