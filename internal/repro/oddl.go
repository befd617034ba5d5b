package repro

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/oddl"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/zoo"
	"github.com/ddlest/ddlest/profile/roofline"
)

// ODDLNet is one of the networks of the ODDL simulation (§5A, Figs. 10–13): its name (a figure
// series, the paper's label) and the network it is (the model "oddl" or a preset of
// configs/networks.json, with parameters).
type ODDLNet struct {
	Name   string
	Net    string
	Params []string
}

// ODDLNets are the §5A networks: ODDL (5 µs reconfiguration and control hop), ODDL_10 (10 µs
// and 10 µs), SiP-Ring (ring all-reduce), the fat tree with ring and with HD all-reduce.
var ODDLNets = []ODDLNet{
	{Name: "oddl", Net: "oddl"},
	{Name: "oddl_10", Net: "oddl-10"},
	{Name: "sip-ring", Net: "sip-ring"},
	{Name: "fattree (ring)", Net: "oddl-ft"},
	{Name: "fattree (hd)", Net: "oddl-ft", Params: []string{"strategy=hd"}},
}

// ODDLSetting is one of the Table 2 settings the paper's ranges span (reference/oddl.md §7.2).
type ODDLSetting struct {
	NIC    int // Gb/s
	Fusion units.Bytes
}

// ODDLSettings are NIC 100/200/400 Gb/s × fusion threshold 16/32 MiB (Table 2).
var ODDLSettings = []ODDLSetting{{100, 16 * units.MiB}, {100, 32 * units.MiB}, {200, 16 * units.MiB},
	{200, 32 * units.MiB}, {400, 16 * units.MiB}, {400, 32 * units.MiB}}

// ODDLPoint is one run's iteration time, epoch time (s) and bandwidth utilisation (a share).
type ODDLPoint struct{ Iter, Epoch, Util float64 }

// ODDLRun is one run of the ODDL simulation's data-parallel job (§5A, Table 2): a zoo model at
// batch 16 per 2080 Ti (its convolution efficiency fitted once, configs/gpus.json), FP32, SGD,
// Horovod fusion at the threshold with 1 µs per fused buffer, one epoch of ImageNet-1k (§5A:
// "ImageNet1K is used as the training dataset", for LeNet too, whose input the paper leaves
// undefined: ddlest's LeNet-5 takes 32×32 images, reference/oddl.md §7.13), on nodes nodes of
// net at nic Gb/s (extra parameters after the net's own).
func ODDLRun(model string, nodes int, s ODDLSetting, net ODDLNet, extra ...string) (*job.Report, error) {
	params := append([]string{fmt.Sprintf("nic_gbps=%d", s.NIC)}, net.Params...)
	n := job.NetworkChoice{Preset: net.Net, Params: append(params, extra...)}
	if net.Net == oddl.Name {
		n = job.NetworkChoice{Name: net.Net, Params: n.Params}
	}
	r, err := job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: model, GPUs: nodes, Batch: 16,
		Precision: partition.FP32, Optimizer: partition.SGD, BucketBytes: s.Fusion, Fusion: partition.FuseTensors,
		FusionLatency: units.Us(1), RunOptions: job.RunOptions{GPU: "rtx2080ti", Efficiency: roofline.DefaultEfficiency,
			Epochs: 1, Samples: zoo.ImageNet1k, Network: n}})
	if err != nil {
		return nil, fmt.Errorf("%s on %d nodes of %s (%d Gb/s, %v): %w", model, nodes, net.Name, s.NIC, s.Fusion, err)
	}
	return r, nil
}

// ODDLPointOf is a run's point: the iteration, the epoch (its iterations × the iteration; the
// WSS set-up, once per job, is left out) and the utilisation at nic Gb/s.
func ODDLPointOf(r *job.Report, nic int) ODDLPoint {
	it := float64(r.Result.Iteration.Total)
	return ODDLPoint{Iter: it, Epoch: r.Steps * it, Util: Utilisation(r.Result.Collectives, units.Gbps(float64(nic)))}
}

// Utilisation is the bandwidth utilisation of ODDL's Figs. 10–13 as ddlest reads it (the paper
// defines none, reference/oddl.md §7.15): the bytes the reductions move per node, 2(p−1)/p × S
// per all-reduce of S bytes over p nodes (the nccl-tests bus bandwidth's), over the time they take
// at the NIC rate b: the share of the line rate the gradient all-reduces keep busy.
func Utilisation(cs []estimator.CollectiveTime, b units.BytesPerSecond) float64 {
	var bus, t float64
	for _, c := range cs {
		p := float64(c.Group)
		bus += 2 * (p - 1) / p * float64(c.Bytes) * float64(c.Count)
		t += float64(c.Time)
	}
	return bus / (t * float64(b))
}

// oddlPoint runs one job and takes its point.
func oddlPoint(model string, nodes int, s ODDLSetting, net ODDLNet, extra ...string) (ODDLPoint, error) {
	r, err := ODDLRun(model, nodes, s, net, extra...)
	if err != nil {
		return ODDLPoint{}, err
	}
	return ODDLPointOf(r, s.NIC), nil
}

// ODDL1024Result is the VGG jobs at 1,024 nodes (§5A, V1–V11) in every ODDLSettings setting on
// every ODDLNets network: Iter[model][net][setting] (s), and the same with H = 2 control hops
// for ODDL and ODDL_10 (Hops2).
type ODDL1024Result struct {
	Iter, Hops2 map[string]map[string][]float64
}

// ODDLVGG are the models of the speed-up claims (V1–V11, V15).
var ODDLVGG = []string{"vgg16", "vgg19"}

// ODDL1024 computes it once.
var ODDL1024 = memo(func() (ODDL1024Result, error) {
	out := ODDL1024Result{Iter: map[string]map[string][]float64{}, Hops2: map[string]map[string][]float64{}}
	for _, model := range ODDLVGG {
		out.Iter[model], out.Hops2[model] = map[string][]float64{}, map[string][]float64{}
		for _, net := range ODDLNets {
			for _, s := range ODDLSettings {
				p, err := oddlPoint(model, 1024, s, net)
				if err != nil {
					return out, err
				}
				out.Iter[model][net.Name] = append(out.Iter[model][net.Name], p.Iter)
				if net.Net != "oddl" && net.Net != "oddl-10" {
					continue
				}
				if p, err = oddlPoint(model, 1024, s, net, "ctrl_hops=2"); err != nil {
					return out, err
				}
				out.Hops2[model][net.Name] = append(out.Hops2[model][net.Name], p.Iter)
			}
		}
	}
	return out, nil
})

// Speedups are ODDL's speed-ups over base in every setting (base's iteration / ODDL's).
func (r ODDL1024Result) Speedups(model, base string) []float64 {
	var out []float64
	for i, t := range r.Iter[model][base] {
		out = append(out, t/r.Iter[model]["oddl"][i])
	}
	return out
}

// Reconfig is the largest relative change of the iteration from ODDL to ODDL_10 over the VGG
// models and the settings (V11), with H = 2 control hops when hops2.
func (r ODDL1024Result) Reconfig(hops2 bool) float64 {
	it := r.Iter
	if hops2 {
		it = r.Hops2
	}
	worst := 0.0
	for _, model := range ODDLVGG {
		for i, o5 := range it[model]["oddl"] {
			worst = max(worst, it[model]["oddl_10"][i]/o5-1)
		}
	}
	return worst
}

// ODDLScaling is one model's Figs. 10–13 sweep: per Table 2 setting (ODDLSettings: NIC rate ×
// fusion threshold) and ODDLNets network, the epoch time (s) and the utilisation (a share) at
// each of ODDLNodes.
type ODDLScaling struct {
	Model       string
	Epoch, Util []map[string][]float64
}

// ODDLNodes are the figures' system sizes: 1D up to 32 nodes, 2D above, to the evaluation's
// 1,024 (§5A; the paper's exact x axis is not in the text, reference/oddl.md §7.1).
var ODDLNodes = []int{16, 32, 64, 128, 256, 512, 1024}

// ODDLFusions are Table 2's fusion thresholds, the figures' two halves.
var ODDLFusions = []units.Bytes{16 * units.MiB, 32 * units.MiB}

// ODDLSettingIndex is the index in ODDLSettings of a NIC rate and fusion threshold.
func ODDLSettingIndex(nic int, fusion units.Bytes) int {
	return slices.Index(ODDLSettings, ODDLSetting{NIC: nic, Fusion: fusion})
}

// oddlScaling sweeps a model, every (setting, network, size) at once.
func oddlScaling(model string) (ODDLScaling, error) {
	ns, nn, nk := len(ODDLSettings), len(ODDLNets), len(ODDLNodes)
	pts := make([]ODDLPoint, ns*nn*nk)
	err := parallel(len(pts), func(i int) error {
		var err error
		pts[i], err = oddlPoint(model, ODDLNodes[i%nk], ODDLSettings[i/(nn*nk)], ODDLNets[i/nk%nn])
		return err
	})
	out := ODDLScaling{Model: model}
	if err != nil {
		return out, err
	}
	for si := range ODDLSettings {
		ep, ut := map[string][]float64{}, map[string][]float64{}
		for ni, net := range ODDLNets {
			for _, p := range pts[(si*nn+ni)*nk : (si*nn+ni+1)*nk] {
				ep[net.Name] = append(ep[net.Name], p.Epoch)
				ut[net.Name] = append(ut[net.Name], p.Util)
			}
		}
		out.Epoch, out.Util = append(out.Epoch, ep), append(out.Util, ut)
	}
	return out, nil
}

// ODDLFig10 … ODDLFig13 are the sweeps of ResNet-50, LeNet-5, VGG16 and VGG19 (Figs. 10–13),
// each computed once.
var (
	ODDLFig10 = memo(func() (ODDLScaling, error) { return oddlScaling("resnet50") })
	ODDLFig11 = memo(func() (ODDLScaling, error) { return oddlScaling("lenet5") })
	ODDLFig12 = memo(func() (ODDLScaling, error) { return oddlScaling("vgg16") })
	ODDLFig13 = memo(func() (ODDLScaling, error) { return oddlScaling("vgg19") })
)

// ODDLTestbedResult is the 4-node testbed (§5B, Table 4): ResNet-50, HD, 20 epochs on Ascend
// 910s, on ODDL and on one 100 GE switch (minutes, the WSS set-up included).
type ODDLTestbedResult struct{ ODDL, Switch float64 }

// ODDLTestbed computes it once.
var ODDLTestbed = memo(func() (ODDLTestbedResult, error) {
	run := func(n job.NetworkChoice) (float64, error) {
		r, err := job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: "resnet50", GPUs: 4,
			Precision: partition.MixedFP16, Optimizer: partition.SGD, BucketBytes: 64 * units.MiB, Fusion: partition.FuseTensors,
			FusionLatency: units.Us(1), RunOptions: job.RunOptions{GPU: "ascend910", Efficiency: roofline.DefaultEfficiency, Epochs: 20, Network: n}})
		if err != nil {
			return 0, err
		}
		return float64(r.Result.TimeToAccuracy) / 60, nil
	}
	var out ODDLTestbedResult
	var err error
	if out.ODDL, err = run(job.NetworkChoice{Name: "oddl", Params: []string{"strategy=hd"}}); err != nil {
		return out, err
	}
	out.Switch, err = run(job.NetworkChoice{Preset: "oddl-testbed"})
	return out, err
})

func init() { register(oddlRows) }

// inventoryCount is the count of the first item of ODDL's inventory for n nodes (its WSSs).
func inventoryCount(n int) (float64, error) {
	inv, err := oddl.DefaultConfig().Inventory(n)
	if err != nil {
		return 0, err
	}
	return float64(inv.Items[0].Count), nil
}

func oddlRows() []Row {
	// exact is a count's tolerance: ±0.1% admits the count itself only.
	const exact = 1e-3
	// The ends of a range over settings or sizes.
	lowest, highest := slices.Min[[]float64], slices.Max[[]float64]
	speedups := func(model, base string, end func([]float64) float64) func() (float64, error) {
		return pick(ODDL1024, func(r ODDL1024Result) float64 { return end(r.Speedups(model, base)) })
	}
	const settings = "1,024 nodes, over 100/200/400 Gb/s × 16/32 MiB fusion"
	// V7: VGG16 at 100 Gb/s and 16 MiB fusion from 64 to 1,024 nodes (the level is ±10 pp).
	util := func(end func([]float64) float64) func() (float64, error) {
		return pick(ODDLFig12, func(r ODDLScaling) float64 {
			var pct []float64
			for i, n := range ODDLNodes {
				if n >= 64 {
					pct = append(pct, 100*r.Util[0]["oddl"][i])
				}
			}
			return end(pct)
		})
	}
	at100 := func(model, base string) func() (float64, error) {
		return pick(ODDL1024, func(r ODDL1024Result) float64 { return r.Speedups(model, base)[0] })
	}
	rows := []Row{
		{ID: "oddl/v1-fattree-ring", Seed: "oddl", Cite: "abstract, §7 (V1)",
			What:  "VGG19, 1,024 nodes, 100 Gb/s, 16 MiB fusion: ODDL's speed-up over the fat tree with ring all-reduce",
			Paper: 1.6, Unit: "×", Tol: 0.25, Value: at100("vgg19", "fattree (ring)")}, // nothing fitted on it
		{ID: "oddl/v2-sip-ring", Seed: "oddl", Cite: "abstract, §7 (V2)",
			What:  "VGG19, 1,024 nodes, 100 Gb/s, 16 MiB fusion: ODDL's speed-up over SiP-Ring (the point ring_alpha_us is fitted on)",
			Paper: 1.7, Unit: "×", Tol: 0.02, Value: at100("vgg19", "sip-ring")}, // the fit: met to its precision
	}
	// §5A's ranges at 1,024 nodes over the six settings: each end a row. Over SiP-Ring and the
	// fat tree + ring the ends are held to ±0.2 (out of sample: only V2 is fitted); over the fat
	// tree + HD, whose congestion the paper's packet-level simulator alone sees, to ±50%.
	ring := func(end float64) float64 { return 0.2 / end }
	hd := func(float64) float64 { return 0.5 }
	for _, c := range []struct {
		v, model, base, against string
		ends                    [2]float64
		tol                     func(end float64) float64
		// a deviation of the top end, with its documented range
		deviation string
		known     [2]float64
	}{
		{v: "V4", model: "vgg16", base: "sip-ring", against: "SiP-Ring", ends: [2]float64{1.1, 1.6}, tol: ring},
		{v: "V5", model: "vgg16", base: "fattree (ring)", against: "the fat tree + ring", ends: [2]float64{1.1, 1.55}, tol: ring},
		{v: "V6", model: "vgg16", base: "fattree (hd)", against: "the fat tree + HD", ends: [2]float64{2.4, 7}, tol: hd},
		{v: "V8", model: "vgg19", base: "sip-ring", against: "SiP-Ring", ends: [2]float64{1.1, 1.7}, tol: ring},
		{v: "V9", model: "vgg19", base: "fattree (ring)", against: "the fat tree + ring", ends: [2]float64{1.1, 1.6}, tol: ring},
		{v: "V10", model: "vgg19", base: "fattree (hd)", against: "the fat tree + HD", ends: [2]float64{2, 7.1}, tol: hd,
			deviation: "a flow model charges an ECMP hash collision its shared link's bytes only; the paper's packet-level OMNeT++ fat tree (routing, buffers and transport not given, reference/oddl.md §7.16) loses more to congestion",
			known:     [2]float64{3.3, 3.55}},
	} {
		id := fmt.Sprintf("oddl/%s-%s-%s", strings.ToLower(c.v), c.model, strings.NewReplacer(" (", "-", ")", "").Replace(c.base))
		model := strings.ToUpper(c.model[:3]) + c.model[3:]
		rows = append(rows,
			Row{ID: id + "-low", Seed: "oddl", Cite: "§5A (" + c.v + ")", What: model + ", " + settings + ": smallest speed-up over " + c.against,
				Paper: c.ends[0], Unit: "×", Tol: c.tol(c.ends[0]), Value: speedups(c.model, c.base, lowest)},
			Row{ID: id + "-high", Seed: "oddl", Cite: "§5A (" + c.v + ")", What: model + ", " + settings + ": largest speed-up over " + c.against,
				Paper: c.ends[1], Unit: "×", Tol: c.tol(c.ends[1]), Deviation: c.deviation, Known: c.known, Value: speedups(c.model, c.base, highest)})
	}
	return append(rows, []Row{
		{ID: "oddl/v11-oddl10-change", Seed: "oddl", Cite: "§5A (V11, \"less than 4%\")",
			What:  "VGG16 and VGG19, " + settings + ": largest change of the iteration from ODDL (5 µs, 5 µs) to ODDL_10 (10 µs, 10 µs)",
			Paper: 4, Unit: "%", Bound: AtMost,
			Deviation: "at 100 Gb/s with 16 MiB buffers every HD step's gap, grown by 5 + 2·5·H µs (Eq. 1, 55 µs at the default H = 5 control hops), is on the critical path (ten of the twelve settings meet it); the paper gives no H: V11 holds for H ≤ 2 (next row), V7's ≈ 85% for H = 5",
			Known:     [2]float64{6, 7}, Value: pick(ODDL1024, func(r ODDL1024Result) float64 { return 100 * r.Reconfig(false) })},
		{ID: "oddl/v11-oddl10-change-h2", Seed: "oddl", Cite: "§5A (V11, \"less than 4%\")",
			What:  "as the row above with H = 2 control hops (ctrl_hops=2, the cause of its deviation)",
			Paper: 4, Unit: "%", Bound: AtMost, Value: pick(ODDL1024, func(r ODDL1024Result) float64 { return 100 * r.Reconfig(true) })},
		{ID: "oddl/v13-lenet-16mib", Seed: "oddl", Cite: "§5A, Fig. 11 (V13, \"ODDL outperforms other networks when the fusion value is set as 16 MB\")",
			What:  "LeNet-5, 100 Gb/s, 16 MiB fusion, 16–1,024 nodes: ODDL's speed-up over the fastest other network at the size where it is largest (> 1: ODDL outperforms them)",
			Paper: 1, Unit: "×", Bound: AtLeast,
			Deviation: "LeNet-5's 247 kB of gradients are latency-bound: each HD step pays Eq. 1's gap (5 + 2·5·H µs, 35–55 µs) against the fat tree's 1 µs per switch, so the fat tree + HD is 4.5–6.5× faster at every size (with no gap ODDL is the fastest); and one buffer holds them at 16 and 32 MiB alike, so the paper's contrast between the thresholds cannot appear. The paper's ImageNet LeNet is undefined (reference/oddl.md §7.13)",
			Known:     [2]float64{0.2, 0.25}, Value: pick(ODDLFig11, func(r ODDLScaling) float64 {
				best := 0.0
				for k := range ODDLNodes {
					lo := math.Inf(1)
					for _, net := range ODDLNets[1:] {
						lo = min(lo, r.Epoch[0][net.Name][k]/r.Epoch[0]["oddl"][k])
					}
					best = max(best, lo)
				}
				return best
			})},
		{ID: "oddl/v7-utilisation-low", Seed: "oddl", Cite: "§5A, Fig. 12 (V7, \"approximately 85%\")",
			What:  "VGG16, 100 Gb/s, 16 MiB fusion, 64–1,024 nodes: ODDL's lowest bandwidth utilisation (the all-reduces' bus bytes over their time at the NIC rate; ±10 pp)",
			Paper: 85, Unit: "%", Tol: 10.0 / 85, Value: util(lowest)},
		{ID: "oddl/v7-utilisation-high", Seed: "oddl", Cite: "§5A, Fig. 12 (V7, \"approximately 85%\")",
			What:  "VGG16, 100 Gb/s, 16 MiB fusion, 64–1,024 nodes: ODDL's highest bandwidth utilisation (±10 pp)",
			Paper: 85, Unit: "%", Tol: 10.0 / 85, Value: util(highest)},
		{ID: "oddl/table4-testbed", Seed: "oddl", Cite: "Table 4 (V3: 97.8 / 97.3 min)",
			What:  "4 Ascend 910s, ResNet-50, HD, 20 epochs: ODDL's training time over one 100 GE switch's",
			Paper: 97.8 / 97.3, Unit: "×", Tol: 0.015,
			Value: pick(ODDLTestbed, func(r ODDLTestbedResult) float64 { return r.ODDL / r.Switch })},
		// The testbed is compute-bound (the network is < 1% of it): its minutes are the Ascend
		// 910 roofline's with the default fractions, held to rooflineTol as HammingMesh's compute.
		{ID: "oddl/table4-oddl-minutes", Seed: "oddl", Cite: "Table 4",
			What:  "4 Ascend 910s, ResNet-50, HD, 20 epochs on ODDL (the WSS set-up included): training time",
			Paper: 97.8, Unit: "min", Tol: rooflineTol, Value: pick(ODDLTestbed, func(r ODDLTestbedResult) float64 { return r.ODDL })},
		{ID: "oddl/table4-switch-minutes", Seed: "oddl", Cite: "Table 4",
			What:  "the same on one 100 GE switch (the one-tier electrical network): training time",
			Paper: 97.3, Unit: "min", Tol: rooflineTol, Value: pick(ODDLTestbed, func(r ODDLTestbedResult) float64 { return r.Switch })},
		{ID: "oddl/table3-wss-setup", Seed: "oddl", Cite: "Table 3",
			What:  "reconfiguration of the WSS, paid once per job",
			Paper: 56, Unit: "ms", Tol: exact, Value: func() (float64, error) {
				m, err := Build("oddl", 64, nil)
				if err != nil {
					return 0, err
				}
				su, ok := m.(network.SetUp)
				if !ok {
					return 0, fmt.Errorf("oddl has no set-up time")
				}
				return 1e3 * float64(su.SetupTime()), nil
			}},
		{ID: "oddl/s3c-wss-1024", Seed: "oddl", Cite: "§3C",
			What:  "1,024 nodes (32×32): LCoS WSSs of 32 ports",
			Paper: 64, Unit: "WSSs", Tol: exact, Value: func() (float64, error) { return inventoryCount(1024) }},
		{ID: "oddl/s3c-wss-4096", Seed: "oddl", Cite: "§3C",
			What:  "4,096 nodes in 3D (16×16×16): LCoS WSSs of 16 ports",
			Paper: 288, Unit: "WSSs", Tol: exact,
			Deviation: "a counting slip in the paper: a WSS per row of each of 3 dimensions is 3 × 4,096 / 16 = 768 (reference/oddl.md §7.10)",
			Known:     [2]float64{767, 769}, Value: func() (float64, error) { return inventoryCount(4096) }},
		{ID: "oddl/s3c-wavelengths-32x32", Seed: "oddl", Cite: "§3C (w ≥ log2 max(n, m))",
			What:  "wavelengths the 32×32 system's routing table uses (HD, one hop per step)",
			Paper: 5, Unit: "λ", Tol: exact, Value: func() (float64, error) {
				t, err := oddl.WavelengthTable(1024, []int{32, 32})
				if err != nil {
					return 0, err
				}
				most := int8(0)
				for _, row := range t {
					for _, l := range row {
						most = max(most, l)
					}
				}
				return float64(most) + 1, nil
			}},
		{ID: "oddl/s3a-per-destination-256", Seed: "oddl", Cite: "§3A",
			What:  "a 256-node job on an 8-wavelength laser: wavelengths per destination",
			Paper: 1, Unit: "λ", Tol: exact, Value: perDestination(256)},
		{ID: "oddl/s3a-per-destination-16", Seed: "oddl", Cite: "§3A",
			What:  "a 16-node job on an 8-wavelength laser: wavelengths per destination",
			Paper: 2, Unit: "λ", Tol: exact, Value: perDestination(16)},
		{ID: "oddl/s3c-circuit-loss-8-port", Seed: "oddl", Cite: "§3C (\"approximately 7 dB\")",
			What:  "64 nodes (8×8, 8-port WSSs, 200 m of fibre): a circuit's loss",
			Paper: 7, Unit: "dB", Tol: 0.05, Value: func() (float64, error) {
				c := oddl.DefaultConfig()
				dims, err := c.Layout(64)
				return c.LinkBudget(dims).LossDB, err
			}},
	}...)
}

// perDestination is the wavelengths per destination of an n-node job on an 8-wavelength laser.
func perDestination(n int) func() (float64, error) {
	return func() (float64, error) {
		c := oddl.DefaultConfig()
		c.Lambdas = 8
		return float64(c.PerDestination(n)), nil
	}
}
