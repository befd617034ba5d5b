// Package scaling turns a target loss into a model and a training budget.
//
// Kaplan et al. 2020 ("Scaling Laws for Neural Language Models", arXiv:2001.08361), losses in
// nats/token, N non-embedding parameters, D tokens, S steps, B batch:
//
//	L(N)        = (N_c/N)^α_N                         Eq. (1.1)  α_N = 0.076, N_c = 8.8e13
//	L(D)        = (D_c/D)^α_D                         Eq. (1.2)  α_D = 0.095, D_c = 5.4e13
//	L(C_min)    = (C_c/C_min)^α_C                     Eq. (1.3)  α_C = 0.050, C_c = 3.1e8 PF-days
//	B_crit(L)   = B* / L^(1/α_B)                      Eq. (1.4)  B* = 2e8 tokens, α_B = 0.21
//	L(N, D)     = [(N_c/N)^(α_N/α_D) + D_c/D]^α_D     Eq. (1.5), Table 2 fit
//	L(N, S_min) = (N_c/N)^α_N + (S_c/S_min)^α_S       Eq. (1.6), Table 3 fit: S_c = 2.1e3, α_S = 0.76
//	S = S_min (1 + B_crit/B),  C_min = C / (1 + B/B_crit)          §5.1
//
// The RAMP paper (Ottino et al., §7.2.1, Table 9) uses these laws to go from a target loss to a
// Megatron model. Its pipeline, reconstructed in ../shared/reference/ramp.md §5.3:
//
//	N_target  = N_c · L^(−1/α_N)
//	shape     = Table 9 preset for the ten listed losses, else the aspect-ratio rule below
//	N         = n_layer (12 d² + 13 d)                  (weights + biases + LayerNorms)
//	B_crit    = B*/L(N)^(1/α_B) / seq                   sequences, at the model's own loss L(N)
//	S_min     = S_c · (g · L(N))^(−1/α_S)               g = 0.05: training stops when the step
//	                                                    term of Eq. (1.6) is 5% of L(N) [D]
//	S         = S_min (1 + B_crit/B) for the global batch B the partitioner settles on
//
// Shapes for other losses: d = (N·ρ/12)^(1/3) rounded to a multiple of 128, n_layer = round(N /
// (12d² + 13d)), ρ = d/n_layer = 128 by default (GPT-3 Table 2.1's larger models; Kaplan §3.1
// finds the loss flat within a few percent across ρ ≈ 20–200). Heads = d/96 when 96 divides d,
// else d/128 (RAMP Table 9); the partitioner raises them to a multiple of the tensor-parallel
// degree.
//
// Chinchilla (Hoffmann et al. 2022, arXiv:2203.15556): L(N, D) = E + A/N^α + B/D^β, Eq. (2), with
// E = 1.69, A = 406.4, B = 410.7, α = 0.34, β = 0.28 (§3.3). For a target loss the model and token
// budget are the compute-optimal pair on Eq. (4)'s frontier; the global batch borrows Kaplan's
// B_crit (Hoffmann et al. give no batch law) and S = D / (B · seq). Losses at or below E are
// unreachable and rejected. Chinchilla losses are on MassiveText and not comparable with Kaplan's.
package scaling
