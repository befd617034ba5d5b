package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/traces"
)

// convThreshold splits traces into convolutional and not by the share of convolution kernels in
// their GEMM, attention and convolution kernel time. [D] from the traces in ../shared/traces,
// counted by class (traces.KernelClass): the CNN traces have 40.5% (cnn_nccl, whose 1×1
// convolutions run as CUTLASS GEMMs) to 95% (MI210 ResNet), the transformer and DLRM traces 0%;
// 20% is half the smallest CNN share and far above what a transformer's convolutions could take
// (a ViT-B/16's patch embedding is 0.7% of its FLOPs).
const convThreshold = 0.2

// Check compares the trace with the configuration it is to calibrate (traced, on planGPU) and
// returns what does not match, each as one clause that says how to fix it:
//   - layers: every rank's count of distinct annotated layers must be the layer count of one of
//     the plan's pipeline stages (a trace that annotates no layers, or a plan without repeated
//     layers, is not checked);
//   - kernel mix: a plan whose matrix FLOPs are mostly convolutions needs a trace whose
//     convolution kernels take at least convThreshold of its classified kernel time, any other
//     plan one where they take at most that (a trace with no GEMM, attention or convolution
//     kernel is not checked);
//   - device: the trace must name a GPU of the table (roofline.MatchGPU), whose roofline the
//     measurement is divided by. A known GPU other than the plan's is the scaling rule's case
//     (doc.go), not a mismatch.
func (m *Measured) Check(traced *partition.Plan, planGPU roofline.GPU) []string {
	var out []string
	if stages := layersPerStage(traced); len(stages) > 0 {
		for rank, n := range m.Layers {
			if n > 0 && !slices.Contains(stages, n) {
				out = append(out, fmt.Sprintf("layer count: rank %d's kernels are annotated with %d distinct layers, the plan has %s per pipeline stage (trace the model the plan describes: --layers, --pp)",
					rank, n, joinInts(stages)))
				break
			}
		}
	}
	conv, mm := convShare(traced)
	if classified := m.Mix[traces.ClassConvolution] + m.Mix[traces.ClassGEMM] + m.Mix[traces.ClassAttention]; classified > 0 && conv+mm > 0 {
		t := m.Mix[traces.ClassConvolution] / classified
		switch p := conv / (conv + mm); {
		case p > 0.5 && t < convThreshold:
			out = append(out, fmt.Sprintf("kernel mix: convolution kernels take %.1f%% of the trace's GEMM, attention and convolution time, but %.0f%% of the plan's matrix FLOPs are convolutions (want ≥ %.0f%%: trace the convolutional model the plan describes)",
				100*t, 100*p, 100*convThreshold))
		case p <= 0.5 && t > convThreshold:
			out = append(out, fmt.Sprintf("kernel mix: convolution kernels take %.1f%% of the trace's GEMM, attention and convolution time, but %.0f%% of the plan's matrix FLOPs are convolutions (want ≤ %.0f%%: a CNN's trace for a GEMM model? trace the model the plan describes)",
				100*t, 100*p, 100*convThreshold))
		}
	}
	switch {
	case m.Device == "":
		out = append(out, fmt.Sprintf("device: the trace names no GPU (no deviceProperties), so the roofline it is measured against is unknown (import a trace that records its device; --force takes it for the plan's %s)", planGPU.Name))
	case !m.KnownGPU:
		out = append(out, fmt.Sprintf("device: the trace's %q is not in the GPU table (ddlest gpus), so the roofline it is measured against is unknown (--force takes it for the plan's %s)", m.Device, planGPU.Name))
	}
	return out
}

// Checked runs Check: with mismatches it refuses the trace (a usage error naming them all on one
// line) unless force, which returns them to be reported as overridden.
func (m *Measured) Checked(traced *partition.Plan, planGPU roofline.GPU, force bool) ([]string, error) {
	bad := m.Check(traced, planGPU)
	if len(bad) == 0 || force {
		return bad, nil
	}
	return nil, errs.Usage("--profile %s does not match the plan: %s; --force uses it anyway, with a warning in the report", m.Path, strings.Join(bad, "; "))
}

// layersPerStage is the number of repeated-layer repetitions (partition.Block.Layer blocks) on
// each pipeline stage that has any, in stage order without repeats.
func layersPerStage(p *partition.Plan) []int {
	var out []int
	for _, st := range p.Stages {
		n := 0
		for i := range st.Blocks {
			if b := &st.Blocks[i]; b.Layer() {
				n += b.Repeat
			}
		}
		if n > 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// convShare is the plan's convolution FLOPs and its other matrix FLOPs (GEMMs, batched GEMMs,
// fused attention) over every stage's blocks and per-iteration ops.
func convShare(p *partition.Plan) (conv, mm float64) {
	add := func(op partition.Op, times float64) {
		switch {
		case op.Kind == partition.Convolution:
			conv += float64(op.FLOP) * times
		case op.Kind.IsMatMul():
			mm += float64(op.FLOP) * times
		}
	}
	for _, st := range p.Stages {
		for _, b := range st.Blocks {
			for _, op := range b.Ops {
				add(op, float64(b.Repeat))
			}
		}
		for _, op := range st.PerIteration {
			add(op, 1)
		}
	}
	return conv, mm
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, " or ")
}
