// Package trace turns a ddlest trace file (traces/) into compute times for any plan.
//
// Measured: per profiler step (ProfilerStep#N; the whole trace when there are none), the GPU time
// of compute kernels, copies and sets (collectives excluded) in each phase, averaged over steps
// and ranks: M_fwd, M_bwd, M_opt, and M_unknown for kernels no annotation or autograd range
// places. Unplaced time is shared among the placed phases in proportion to them; with no placed
// phase at all one factor covers everything.
//
// Scaling rule, printed with every estimate that uses a trace: the traced configuration (the
// plan's own, or the --trace-batch / --trace-tp one the workload rebuilds) is priced with the
// roofline of the GPU the trace was taken on (from its device name; the plan's GPU when unknown),
// R_p for each phase of one iteration on its slowest stage. The factors f_p = M_p / R_p are the
// measured-to-modelled ratios; the plan is then priced by its own GPU's roofline times f_p,
// phase by phase (recomputation with the forward factor). For the traced configuration on the
// traced GPU the estimate's compute equals the measurement; elsewhere it moves as the roofline
// does. Communication stays with the network model.
//
// Per layer: when the trace annotates layers (layer_3, layers.3 …) and the plan marks the ops of
// its repeated layers (partition.Op.InLayer: transformer layers), a phase's layer-annotated time
// calibrates those ops on its own, f_layer = M_layer / R_layer, and the rest of the phase
// (embedding, head, loss) takes (M − M_layer) / (R − R_layer). Phases without layer annotations
// (autograd usually runs the backward pass outside the forward's layer ranges) keep one factor.
//
// Checks (Measured.Check), run before calibrating: a trace must be of the model and GPU the plan
// describes, or the factors carry another model's time into this one (issue 15: a CNN's trace
// scaled a transformer's compute ×0.004). Refused, unless --force (then the report leads with a
// warning naming the checks overridden):
//   - layer count: the distinct layers a rank's kernels are annotated with must be the layer
//     count of one of the traced configuration's pipeline stages;
//   - kernel mix: kernels classed by name (traces.KernelClass: convolution, GEMM, attention; the
//     libraries' names cited there) — with C the convolution kernels' share of the classified
//     time, a plan whose matrix FLOPs are mostly convolutions needs C ≥ 20%, any other C ≤ 20%
//     (the threshold's source is convThreshold's comment);
//   - device: the trace must name a GPU of the table (the traced roofline M_p is divided by). A
//     different known GPU is the scaling rule above, not a mismatch.
//
// Never overridden: compute faster than the traced GPU's peak for the traced configuration's
// FLOPs (every op at the best tensor or vector peak for its dtype is a lower bound).
package trace
