// Package roofline prices ops with the roofline model (Williams, Waterman & Patterson 2009) on a
// GPU from the table in configs/gpus.json (V100, A100 40/80 GB, H100 SXM, H200 and the RAMP
// paper's A100), each number cited to its datasheet or paper:
//
//	t(op) = max( FLOP / (peak · e_compute),  (bytes read + written) / (HBM · e_memory) )
//
// GEMMs use the dense tensor-core peak of their dtype and e_matmul (default 0.75); convolutions
// (implicit GEMMs) the same peak and e_conv (auto by default: the GPU type's own calibration
// where configs/gpus.json has one, the RTX 2080 Ti's 0.93 fitted to Lambda's ResNet-50 FP32
// throughput; else 0.25, fitted to NVIDIA's published ResNet-50 A100 throughput); other kernels
// the vector peak and e_vector (0.5); memory traffic e_memory (0.85) of the HBM bandwidth. The
// fractions are overridable (--matmul-eff, --conv-eff, --vector-eff, --mem-eff); an explicit
// --conv-eff is used as given, and reports name the fractions an estimate used.
//
// Shape-aware GEMMs (Efficiency.GEMM = shape, or auto where configs/gemm.json has the GPU and
// dtype; the DGX cluster presets use auto): a GEMM whose output is M × N (a batch of B of them)
// runs at
//
//	e = MAMF/peak · M·N / (⌈M/Tm⌉Tm · ⌈N/Tn⌉Tn) · T / (⌈T/SMs⌉ · SMs),   T = B·⌈M/Tm⌉·⌈N/Tn⌉
//
// the GPU's measured maximum achievable matmul FLOPS (stas00/ml-engineering; its best shapes
// are whole 256×128 tiles in whole waves, where the model gives the measurement) times tile
// and wave quantisation (NVIDIA "Matrix Multiplication Background" guide), times two shares
// where configs/gemm.json measured them:
//
//   - sustained (H100/H200: 0.848): MAMF is a boost-clock burst; a node training flat out sits at
//     its power limit with the clock below boost. stas00/ml-engineering's MSMF (maximum
//     sustainable matmul FLOPS) on 8 busy H200s is 698.6 of the MAMF's 823.9 TFLOPS. It scales
//     the GEMM ceiling and the FlashAttention efficiencies (tensor-core kernels at the same clock).
//   - short K (FP8 on H100/H200): a per-tile fixed cost of K0 inner steps (pipeline fill,
//     epilogue) makes a GEMM of inner dimension K = FLOP/(2·B·M·N) run at
//     (K/(K+K0)) / (K_mamf/(K_mamf+K0)) of the ceiling, at most 1; K0 = 352.5 from tilelang's
//     H800 FP8 sweep (1343 TFLOP/s at K = 2048, 1541 at 16384).
//
// Backward-pass FP8
// GEMMs keep fp8_split_accumulate of that rate (H100/H200: 1/1.15): Transformer Engine runs
// dgrad and wgrad with the full-precision split accumulator (module/base.py _2X_ACC_DGRAD,
// _2X_ACC_WGRAD), 1.1–1.2× slower than fast accumulation on H100 (pytorch/ao issue #2377).
//
// FlashAttention (ops of kind partition.FusedAttention): the kernel executes FlashWork of the
// op's convention FLOP (½ forward under the causal mask, 5/8 backward) at the GPU's measured
// FlashAttention efficiency e of the dense fp16/bf16 peak, configs/gemm.json's flash_attention:
// t = max(FLOP · FlashWork / (peak · e), bytes / (HBM · e_memory)). A100: FlashAttention-2 §4.1's
// best over its sweep, 73% forward and 63% backward, for every shape (an upper bound for short
// sequences). H100/H200: FlashAttention-3 §4.1's measured curve for head dimension 128 at
// sequence lengths 512 … 16k, e(s) piecewise linear in log2 s between the measured lengths and
// flat beyond them, evaluated at the op's query length and nearest measured head dimension; the
// causal forward is measured, the causal backward is the non-causal one times the forward's
// causal/non-causal ratio at the same length; on GH100s e is scaled by the sustained share.
// Under context parallelism (Op.Ring = c, Transformer Engine's KV ring) the work splits into c
// equal steps, one causal at the rank's s queries and c − 1 unmasked at s/2 on the non-causal
// curve: t = W/c · (1/e_causal(s) + (c − 1)/e_unmasked(s/2)) / peak (A100: the same e).
// GPUs without an entry refuse --attention flash.
//
// profile.Scaled calibrates any profile to measured phase totals (the HammingMesh paper's A100
// times ship as such "published" profiles).
//
// It also implements network.Reducer: a local n-to-1 sum of c-byte buffers reads n·c, writes c
// and adds (n−1)·c/elem values, so t = max((n+1)c / (HBM·e_memory), (n−1)c/elem / (vector·e_vector)).
// At RAMP's x = 32 this makes one 32-to-1 reduction 3(x−1)/(x+1) = 2.8× faster than 31 pairwise
// ones (RAMP Fig. 23).
package roofline
