package nccl

import "github.com/ddlest/ddlest/internal/params"

// Params are the NCCL settings an electrical network's config embeds (internal/params tags).
type Params struct {
	NCCL          string  `json:"nccl" help:"collective library: off (the network's own α–β schedules) or NCCL 2.20's cost model with the tables of a GPU generation: volta, ampere, hopper" source:"[D] off: the seeds' papers price their own schedules; the DGX cluster presets turn it on (NCCL 2.20.3 src/graph/tuning.cc)"`
	CPU           string  `json:"nccl_cpu" help:"host CPU vendor, which sets NCCL's network post overhead and LL cap across nodes: intel or amd" source:"[P] NCCL 2.20.3 tuning.cc getNetOverhead: 1 µs Intel, 2 µs AMD"`
	Algo          string  `json:"nccl_algo" help:"NCCL_ALGO: auto (the model's choice), ring or tree (all-reduce)" source:"[P] NCCL environment variable NCCL_ALGO"`
	Proto         string  `json:"nccl_proto" help:"NCCL_PROTO: auto (the model's choice), ll, ll128 or simple" source:"[P] NCCL environment variable NCCL_PROTO"`
	NICEfficiency float64 `json:"nccl_nic_efficiency" help:"share of the NIC line rate NCCL's transfers reach, in (0, 1]" source:"[P] NCCL maintainers: 'we usually consider 24GB/s is the peak performance per 200G NIC' (sjeaugey, nccl-tests issue #119, 2022-11-17) and 'around 48GB/s from each CX7 NIC at 400Gbps' (AddyLaddy, nccl-tests issue #319, 2025-06-11): 0.96 of the line rate"`
}

// DefaultParams is off, on an Intel host, NICs at 96% of their line rate.
func DefaultParams() Params {
	return Params{NCCL: ArchNames[Off], CPU: CPUNames[Intel], Algo: AlgoNames[AlgoAuto], Proto: ProtoNames[ProtoAuto], NICEfficiency: 0.96}
}

// Check records the parameters' problems.
func (p *Params) Check(pr *params.Problems) {
	pr.OneOf("nccl", p.NCCL, ArchNames)
	pr.OneOf("nccl_cpu", p.CPU, CPUNames)
	pr.OneOf("nccl_algo", p.Algo, AlgoNames)
	pr.OneOf("nccl_proto", p.Proto, ProtoNames)
	if !(p.NICEfficiency > 0 && p.NICEfficiency <= 1) {
		pr.Addf("nccl_nic_efficiency %g must be in (0, 1]", p.NICEfficiency)
	}
}

// Config is the checked parameters as the model's typed settings (zero values where a name is
// not valid: Check reports those).
func (p *Params) Config() Config {
	return Config{Arch: Arch(index(ArchNames, p.NCCL)), CPU: CPU(index(CPUNames, p.CPU)),
		Algo: Algo(index(AlgoNames, p.Algo)), Proto: Proto(index(ProtoNames, p.Proto)), NICEfficiency: p.NICEfficiency}
}

func index(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return 0
}
