package repro

import (
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile/roofline"
)

// SiPAC's system testbed (§IV-B, reference/sipac.md §4.5, V5–V7): "4 Nvidia Tesla M40 GPUs"
// training "a distributed MobileNetV2 workload using both the ring and NCCL collective algorithm"
// for "two epochs with a batch size of 128", on SiPAC(r = 2, L = 2), the electronic BCube(2, 2)
// and a leaf-spine (the presets sipac-testbed, bcube-testbed, sipac-testbed-leafspine). The
// job-completion-time reduction is 1 − T_SiPAC/T_other per iteration: the epochs and the data set
// (not given) cancel. [AMB] the batch is taken per GPU (128 fits the M40's 12 GB), FP32 (the M40
// has no matrix engine), [X] SGD (the optimizer is not given); NCCL's tree-based all-reduce is
// ddlest's binary tree, its ring the ring.

// SiPACTestbedPresets are the testbed's networks, SiPAC first.
var SiPACTestbedPresets = []string{"sipac-testbed", "bcube-testbed", "sipac-testbed-leafspine"}

// SiPACTestbedAlgs are the all-reduces the testbed runs: "ring" and NCCL's tree.
var SiPACTestbedAlgs = []string{"ring", "tree"}

// SiPACTestbed is each preset's iteration (seconds) per all-reduce, every run once and at once.
var SiPACTestbed = memo(func() (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	times := make([]float64, len(SiPACTestbedPresets)*len(SiPACTestbedAlgs))
	err := parallel(len(times), func(i int) error {
		p, alg := SiPACTestbedPresets[i/len(SiPACTestbedAlgs)], SiPACTestbedAlgs[i%len(SiPACTestbedAlgs)]
		var err error
		times[i], err = iterOf(job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: "mobilenetv2", GPUs: 4, Batch: 128,
			Precision: partition.FP32, Optimizer: partition.SGD, RunOptions: job.RunOptions{GPU: "m40", Efficiency: roofline.DefaultEfficiency,
				Network: job.NetworkChoice{Preset: p, Params: []string{"strategy=" + alg}}}}))
		return err
	})
	for i, t := range times {
		p := SiPACTestbedPresets[i/len(SiPACTestbedAlgs)]
		if out[p] == nil {
			out[p] = map[string]float64{}
		}
		out[p][SiPACTestbedAlgs[i%len(SiPACTestbedAlgs)]] = t
	}
	return out, err
})

// sipacTestbedReduction is SiPAC's JCT reduction over a preset with an all-reduce, in %.
func sipacTestbedReduction(other, alg string) func() (float64, error) {
	return pick(SiPACTestbed, func(r map[string]map[string]float64) float64 {
		return 100 * (1 - r["sipac-testbed"][alg]/r[other][alg])
	})
}

func init() { register(sipacTestbedRows) }

func sipacTestbedRows() []Row {
	const cite = "§IV-B"
	// A measured testbed against an α–β model: ±25% of the reduction.
	const tol = 0.25
	const sameRate = "the presets give every network the same 20 Gb/s per GPU (the paper's normalisation, §VI-A-1; the testbed's leaf-spine and BCube rates are not given)"
	const buffering = "the paper credits BCube's extra time to \"more in-network buffering delay\" in its packet switches, which an α–β fabric does not model: on the same graph with the same bytes SiPAC and BCube differ only by BCube's 120 ns per switch"
	return []Row{
		{ID: "sipac/testbed-ring-leafspine", Seed: "sipac", Cite: cite,
			What:  "MobileNetV2 on 4 M40s, ring all-reduce: SiPAC(2, 2)'s JCT reduction over the leaf-spine",
			Paper: 8, Unit: "%", Tol: tol,
			Deviation: "ddlest's ring on SiPAC(2, 2) runs each step on one of a CU's two 10 Gb/s ports (Gray order, alternating levels), while " + sameRate + ": the leaf-spine's ring sends at 20 Gb/s, so SiPAC is the slower by the gradient all-reduce's transfer (17 ms against 8.5 ms of a 320 ms iteration)",
			Known:     [2]float64{-4, -1.5}, Value: sipacTestbedReduction("sipac-testbed-leafspine", "ring")},
		{ID: "sipac/testbed-ring-bcube", Seed: "sipac", Cite: cite,
			What:  "MobileNetV2 on 4 M40s, ring all-reduce: SiPAC(2, 2)'s JCT reduction over the electronic BCube(2, 2)",
			Paper: 4, Unit: "%", Tol: tol, Deviation: buffering,
			Known: [2]float64{0, 0.1}, Value: sipacTestbedReduction("bcube-testbed", "ring")},
		{ID: "sipac/testbed-nccl-leafspine", Seed: "sipac", Cite: cite,
			What:  "MobileNetV2 on 4 M40s, NCCL's tree all-reduce: SiPAC(2, 2)'s JCT reduction over the leaf-spine",
			Paper: 22, Unit: "%", Tol: tol,
			Deviation: "the paper credits the tree's gain to \"the multi-port property of the SiPAC architecture\"; a binary tree's node sends to its two children at once, over two 10 Gb/s ports on SiPAC and through one 20 Gb/s NIC on the leaf-spine, because " + sameRate + ": the same time on both",
			Known:     [2]float64{-0.1, 0.1}, Value: sipacTestbedReduction("sipac-testbed-leafspine", "tree")},
		{ID: "sipac/testbed-nccl-bcube", Seed: "sipac", Cite: cite + " (\"The JCT improvement of SiPAC over BCube remains constant\")",
			What:  "MobileNetV2 on 4 M40s, NCCL's tree all-reduce: SiPAC(2, 2)'s JCT reduction over the electronic BCube(2, 2), the ring's 4%",
			Paper: 4, Unit: "%", Tol: tol, Deviation: buffering,
			Known: [2]float64{0, 0.1}, Value: sipacTestbedReduction("bcube-testbed", "tree")},
	}
}
