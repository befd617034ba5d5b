package scaling

import "math"

// Chinchilla holds the parametric loss of Hoffmann et al. 2022, "Training Compute-Optimal Large
// Language Models" (arXiv:2203.15556), Eq. (2): L(N, D) = E + A/N^α + B/D^β, with the values
// fitted in their §3.3 (Approach 3). Losses are nats/token on MassiveText with the Chinchilla
// tokenizer, so they are not directly comparable with Kaplan's WebText2 losses.
type Chinchilla struct {
	E     float64 // irreducible loss: 1.69 (§3.3)
	A     float64 // parameter term scale: 406.4 (§3.3)
	B     float64 // data term scale: 410.7 (§3.3)
	Alpha float64 // parameter exponent α: 0.34 (§3.3)
	Beta  float64 // data exponent β: 0.28 (§3.3)
}

// DefaultChinchilla returns the Approach-3 fit.
func DefaultChinchilla() Chinchilla {
	return Chinchilla{E: 1.69, A: 406.4, B: 410.7, Alpha: 0.34, Beta: 0.28} // Hoffmann 2022 §3.3
}

// Loss is Eq. (2).
func (c Chinchilla) Loss(n, d float64) float64 {
	return c.E + c.A/math.Pow(n, c.Alpha) + c.B/math.Pow(d, c.Beta)
}

// OptimalForLoss returns the parameter count N and token count D that reach loss l with the least
// training compute C ≈ 6ND. Minimising ln N + ln D subject to A N^−α + B D^−β = l − E gives
// α A N^−α = β B D^−β (Lagrange condition), hence A N^−α = (l−E)·β/(α+β) and
// B D^−β = (l−E)·α/(α+β). This is the same frontier as Eq. (4), N_opt ∝ C^(β/(α+β)).
// It requires l > E.
func (c Chinchilla) OptimalForLoss(l float64) (n, d float64) {
	gap := l - c.E
	x := gap * c.Beta / (c.Alpha + c.Beta)
	y := gap * c.Alpha / (c.Alpha + c.Beta)
	return math.Pow(c.A/x, 1/c.Alpha), math.Pow(c.B/y, 1/c.Beta)
}

// OptimalForCompute is Eq. (4): N_opt(C) = G (C/6)^a, D_opt(C) = G^−1 (C/6)^b with
// G = (αA/(βB))^(1/(α+β)), a = β/(α+β), b = α/(α+β).
func (c Chinchilla) OptimalForCompute(flop float64) (n, d float64) {
	g := math.Pow(c.Alpha*c.A/(c.Beta*c.B), 1/(c.Alpha+c.Beta))
	a := c.Beta / (c.Alpha + c.Beta)
	b := c.Alpha / (c.Alpha + c.Beta)
	return g * math.Pow(flop/6, a), math.Pow(flop/6, b) / g
}
