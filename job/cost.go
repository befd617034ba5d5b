package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
)

// Shares are a network's bandwidth at full scale as HammingMesh Table II reports it "for large
// messages": a linear all-to-all among every accelerator and an all-reduce among them, each as
// its nccl-tests bus bandwidth over the transfer time H2T (the bytes one accelerator sends per
// second) over the injection rate — the bandwidth limits, latency left out. For the all-reduce
// that is 2(p−1)/p · S/t over the injection, the paper's "S/t over half the injection" at large p.
// AllReduceAt is the all-reduce's share at its stated size with every term (latency included).
// Network time only: no local reduction is charged.
type Shares struct {
	GlobalBytes    units.Bytes  `json:"global_bytes"` // nccl-tests size: one accelerator's send buffer
	Global         float64      `json:"global_share"`
	GlobalCost     network.Cost `json:"global_cost"`
	AllReduceBytes units.Bytes  `json:"allreduce_bytes"`
	AllReduce      float64      `json:"allreduce_share"`
	AllReduceAt    float64      `json:"allreduce_share_at_size"`
	AllReduceCost  network.Cost `json:"allreduce_cost"`
}

// StructureReport is a routed network's bill, structure and bandwidth shares.
type StructureReport struct {
	Network   string            `json:"network"`
	Params    []string          `json:"params,omitempty"`
	Structure network.Structure `json:"structure"`
	CostUSD   float64           `json:"cost_usd"`
	Shares    Shares            `json:"shares"`
}

// ShareSettings say how to measure the shares: the all-to-all's bytes per peer, the all-reduce's
// size, the all-reduce algorithms to take the best of (none: the network's strategy) and
// parameters that apply to the all-to-all only.
type ShareSettings struct {
	PerPeer        units.Bytes
	AllReduceBytes units.Bytes
	AllReduce      []string
	GlobalParams   []string
}

// DefaultShareSettings are Table II's: 1 MiB per peer, a 32 GiB all-reduce.
func DefaultShareSettings() ShareSettings {
	t, _ := HammingMeshTable()
	return ShareSettings{PerPeer: units.Bytes(t.GlobalPerPeer), AllReduceBytes: units.Bytes(t.AllReduceBytes)}
}

// Structure prices a routed network's bill and its bandwidth shares at full scale.
func Structure(n NetworkChoice, set ShareSettings) (StructureReport, error) {
	spec, cfg, err := n.Config()
	if err != nil {
		return StructureReport{}, err
	}
	st, ok := cfg.(network.Structured)
	if !ok {
		return StructureReport{}, errs.Usage("network %s has no bill of materials; valid: %s", spec.Name, structuredNames())
	}
	s, err := st.Structure()
	if err != nil {
		return StructureReport{}, err
	}
	rep := StructureReport{Network: spec.Name, Params: n.Params, Structure: s, CostUSD: s.Bill.CostUSD()}
	p := s.Endpoints
	all := network.Group{Size: p, Stride: 1}
	price := func(extra []string, c network.Collective) (network.Cost, error) {
		m := n
		m.Params = append(append([]string(nil), n.Params...), extra...)
		net, _, err := m.Build(network.Env{GPUs: p})
		if err != nil {
			return network.Cost{}, err
		}
		return net.Price(c)
	}
	sh := &rep.Shares
	sh.GlobalBytes = set.PerPeer * units.Bytes(p)
	a2a := append(append([]string(nil), set.GlobalParams...), "strategy=all-to-all=linear")
	if sh.GlobalCost, err = price(a2a, network.Collective{Op: network.AllToAll, Bytes: sh.GlobalBytes, Group: all, DType: dtype.FP32}); err != nil {
		return rep, err
	}
	sh.Global = busBW(network.AllToAll, sh.GlobalBytes, p, sh.GlobalCost.H2T) / s.InjectionBps
	sh.AllReduceBytes = set.AllReduceBytes
	algs := set.AllReduce
	if len(algs) == 0 {
		algs = []string{""}
	}
	for _, a := range algs {
		var extra []string
		if a != "" {
			extra = []string{"strategy=all-reduce=" + a}
		}
		c, err := price(extra, network.Collective{Op: network.AllReduce, Bytes: set.AllReduceBytes, Group: all, DType: dtype.FP32})
		if err != nil {
			return rep, err
		}
		if sh.AllReduceCost.Total == 0 || c.H2T < sh.AllReduceCost.H2T {
			sh.AllReduceCost = c
		}
	}
	sh.AllReduce = busBW(network.AllReduce, set.AllReduceBytes, p, sh.AllReduceCost.H2T) / s.InjectionBps
	sh.AllReduceAt = busBW(network.AllReduce, set.AllReduceBytes, p, sh.AllReduceCost.Total) / s.InjectionBps
	return rep, nil
}

// busBW is the nccl-tests bus bandwidth of op on p ranks moving S in t: what each rank injects
// per second, so that its share of the injection rate is 1 at the optimum.
func busBW(op network.Op, s units.Bytes, p int, t units.Seconds) float64 {
	return float64(s) / float64(t) * op.BusFactor(p)
}

func structuredNames() string {
	var out []byte
	for _, s := range all.Specs() {
		if _, ok := s.NewConfig().(network.Structured); ok {
			if len(out) > 0 {
				out = append(out, ", "...)
			}
			out = append(out, s.Name...)
		}
	}
	return string(out)
}

// PaperTable is a paper's network comparison table as data.
type PaperTable struct {
	Name           string     `json:"name"`
	Title          string     `json:"title"`
	Source         string     `json:"source"`
	GlobalPerPeer  float64    `json:"global_bytes_per_peer"`
	GlobalSource   string     `json:"global_source"`
	AllReduceBytes float64    `json:"allreduce_bytes"`
	AllReduceSrc   string     `json:"allreduce_source"`
	Rows           []PaperRow `json:"rows"`
}

// PaperRow is one network of the table: the preset that builds it and the paper's values.
type PaperRow struct {
	Preset          string   `json:"preset"`
	Cluster         string   `json:"cluster"`
	Topology        string   `json:"topology"`
	CostMUSD        float64  `json:"cost_musd"`
	GlobalPct       float64  `json:"global_pct"`
	GlobalSaving    float64  `json:"global_saving"`
	AllReducePct    float64  `json:"allreduce_pct"`
	AllReduceSaving float64  `json:"allreduce_saving"`
	Diameter        int      `json:"diameter"`
	AllReduceAlgs   []string `json:"allreduce_algorithms"`
	GlobalParams    []string `json:"global_params,omitempty"`
	Note            string   `json:"note,omitempty"`
}

// HammingMeshTable decodes configs/hammingmesh_table2.json.
func HammingMeshTable() (PaperTable, error) {
	var t PaperTable
	dec := json.NewDecoder(bytes.NewReader(configs.HammingMeshTable2))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("configs/hammingmesh_table2.json: %w", err)
	}
	return t, nil
}

// TableRow is one row of a reproduced table: ours beside the paper's.
type TableRow struct {
	Paper  PaperRow        `json:"paper"`
	Ours   StructureReport `json:"ours"`
	Global struct {
		Saving float64 `json:"saving"`
	} `json:"global"`
	AllReduce struct {
		Saving float64 `json:"saving"`
	} `json:"allreduce"`
}

// Tables lists the tables `ddlest cost --table` reproduces.
func Tables() []string { return []string{"hammingmesh"} }

// ReproduceTable rebuilds a paper's table from its presets: cost, diameter, bandwidth shares, and
// the savings relative to each cluster's first row (the non-blocking fat tree): cost_FT/cost_X ×
// share_X/share_FT (HammingMesh Table II's caption).
func ReproduceTable(name string) (PaperTable, []TableRow, error) {
	if name != "hammingmesh" {
		return PaperTable{}, nil, errs.Usage("--table %q is not valid; valid: %s", name, Tables()[0])
	}
	t, err := HammingMeshTable()
	if err != nil {
		return t, nil, err
	}
	rows := make([]TableRow, len(t.Rows))
	errs := make([]error, len(t.Rows))
	// The rows are independent networks: price them on every core.
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				pr := t.Rows[i]
				set := ShareSettings{PerPeer: units.Bytes(t.GlobalPerPeer), AllReduceBytes: units.Bytes(t.AllReduceBytes),
					AllReduce: pr.AllReduceAlgs, GlobalParams: pr.GlobalParams}
				r, err := Structure(NetworkChoice{Preset: pr.Preset}, set)
				rows[i], errs[i] = TableRow{Paper: pr, Ours: r}, err
			}
		}()
	}
	for i := range t.Rows {
		next <- i
	}
	close(next)
	wg.Wait()
	base := map[string]int{}
	for i, pr := range t.Rows {
		if errs[i] != nil {
			return t, nil, fmt.Errorf("%s: %w", pr.Preset, errs[i])
		}
		if _, ok := base[pr.Cluster]; !ok {
			base[pr.Cluster] = i
		}
		r, ft := rows[i].Ours, rows[base[pr.Cluster]].Ours
		rows[i].Global.Saving = ft.CostUSD / r.CostUSD * r.Shares.Global / ft.Shares.Global
		rows[i].AllReduce.Saving = ft.CostUSD / r.CostUSD * r.Shares.AllReduce / ft.Shares.AllReduce
	}
	return t, rows, nil
}
