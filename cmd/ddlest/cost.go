package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
)

func newCostCommand() *cobra.Command {
	var (
		nf       netFlags
		capacity float64
		gpus     int
		table    string
		cluster  string
		f        format
	)
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Network cost: per Gbit and power (RAMP Tables 3–4), or bill of materials and bandwidth shares (HammingMesh Table II)",
		Long: `Price a network's equipment. RAMP and the SuperPod report cost per Gbit of node capacity and
power (RAMP Tables 3–4). The routed networks (fattree, dragonfly, hxmesh) report their switches and
cables per plane, the capital cost over all planes at list prices, the diameter and the bandwidth
shares of HammingMesh Table II "for large messages": a linear all-to-all among every accelerator
(1 MiB per peer) and an all-reduce among them (32 GiB), each as its bus bandwidth (nccl-tests)
over the injection bandwidth, 100% at the optimum, from the transfer time (the all-reduce's share
with latency is shown too).
--table hammingmesh rebuilds Table II from the sixteen presets beside the paper's values.`,
		Example: `  ddlest cost --net ramp
  ddlest cost --net superpod --capacity-tbps 12.8 --format json
  ddlest cost --net-preset hx4-large
  ddlest cost --cluster torus-small
  ddlest cost --table hammingmesh`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(capacity >= 0) {
				return errs.Usage("--capacity-tbps %g must be ≥ 0", capacity)
			}
			if gpus < 2 {
				return errs.Usage("--gpus %d must be ≥ 2", gpus)
			}
			w := cmd.OutOrStdout()
			if table != "" {
				t, rows, err := job.ReproduceTable(table)
				if err != nil {
					return err
				}
				return writeTable(w, t, rows, f)
			}
			choice, err := nf.choice()
			if err != nil {
				return err
			}
			if c, err := clusterFor(cluster, &nf); err != nil {
				return err
			} else if c != nil {
				if choice, err = c.Network.Choice(); err != nil {
					return err
				}
			}
			spec, cfg, err := choice.Config()
			if err != nil {
				return err
			}
			if inv, ok := cfg.(network.Inventoried); ok {
				n := gpus
				if !cmd.Flags().Changed("gpus") {
					n = 0 // the network's own size where it has one (sipac r= levels=), else the flag's default
				}
				list, err := inv.Inventory(n)
				if err != nil {
					return err
				}
				return writeInventory(w, list, f)
			}
			if _, ok := cfg.(network.Structured); ok {
				rep, err := job.Structure(choice, job.DefaultShareSettings())
				if err != nil {
					return err
				}
				return writeStructure(w, rep, f)
			}
			costing, ok := cfg.(network.Costing)
			if !ok {
				var have []string
				for _, s := range all.Specs() {
					c := s.NewConfig()
					_, a := c.(network.Costing)
					_, b := c.(network.Structured)
					if a || b {
						have = append(have, s.Name)
					}
				}
				return errs.Usage("network %s has no cost model; valid: %s", spec.Name, strings.Join(have, ", "))
			}
			e, err := costing.Economics(capacity)
			if err != nil {
				return err
			}
			return writeEconomics(w, spec.Name, e, f)
		},
	}
	addNetFlags(cmd, &nf, "ramp")
	addClusterFlag(cmd, &cluster)
	cmd.Flags().IntVar(&gpus, "gpus", 1024, "nodes a network sized by its job is listed for (oddl, sipac; default 1,024 where the network has no size of its own)")
	cmd.Flags().Float64Var(&capacity, "capacity-tbps", 12.8, "node capacity the total power is quoted at (Tb/s; RAMP Table 4 compares networks at 12.8); 0 = the network's own")
	cmd.Flags().StringVar(&table, "table", "", "rebuild a paper's network table from presets: "+strings.Join(job.Tables(), ", "))
	addFormatFlag(cmd, &f)
	_ = cmd.RegisterFlagCompletionFunc("table", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return job.Tables(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

type economicsDoc struct {
	Network          string                  `json:"network"`
	Nodes            int                     `json:"nodes"`
	Items            []network.Item          `json:"items"`
	CostPerGbit      [2]float64              `json:"cost_per_gbit_usd"`
	TransceiverShare [2]float64              `json:"transceiver_share"`
	Path             []network.PathComponent `json:"path"`
	EnergyPerBitJ    float64                 `json:"energy_per_bit_j"`
	CapacityBps      float64                 `json:"capacity_bit_per_s"`
	PowerW           float64                 `json:"power_w"`
}

func writeEconomics(w io.Writer, name string, e network.Economics, f format) error {
	if f == formatJSON {
		return writeJSON(w, economicsDoc{Network: name, Nodes: e.Nodes, Items: e.Items, CostPerGbit: e.CostPerGbit,
			TransceiverShare: e.TransceiverShare, Path: e.PathComponents, EnergyPerBitJ: e.EnergyPerBit,
			CapacityBps: e.CapacityBps, PowerW: e.PowerW})
	}
	rng := func(v [2]float64, format string) string {
		if v[0] == v[1] {
			return fmt.Sprintf(format, v[0])
		}
		return fmt.Sprintf(format+"–"+format, v[0], v[1])
	}
	if f == formatCSV {
		fmt.Fprintln(w, "network,nodes,cost_per_gbit_low,cost_per_gbit_high,transceiver_share_low,transceiver_share_high,energy_per_bit_j,capacity_bit_per_s,power_w")
		fmt.Fprintf(w, "%s,%d,%s,%s,%s,%s,%s,%s,%s\n", name, e.Nodes, ftoa(e.CostPerGbit[0]), ftoa(e.CostPerGbit[1]),
			ftoa(e.TransceiverShare[0]), ftoa(e.TransceiverShare[1]), ftoa(e.EnergyPerBit), ftoa(e.CapacityBps), ftoa(e.PowerW))
		return nil
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s at %d nodes\n\n", name, e.Nodes)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "component\tcount\trate\t$/Gbit\tsource")
	for _, it := range e.Items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", it.Name, units.Count(it.Count), units.Gbps(it.Gbps).Bits(), rng(it.CostPerGbit, "%.2f"), it.Source)
	}
	_ = tw.Flush()
	share := [2]float64{100 * e.TransceiverShare[0], 100 * e.TransceiverShare[1]}
	fmt.Fprintf(b, "\nnetwork cost  $%s per Gbit of node capacity; transceivers %s%% of it\n\n", rng(e.CostPerGbit, "%.2f"), rng(share, "%.0f"))
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "on the path\tcount\tpJ/bit each\tsource")
	for _, p := range e.PathComponents {
		fmt.Fprintf(tw, "%s\t%d\t%.4g\t%s\n", p.Name, p.Count, p.JoulePerB*1e12, p.Source)
	}
	_ = tw.Flush()
	fmt.Fprintf(b, "\nenergy        %.4g pJ/bit/path\n", e.EnergyPerBit*1e12)
	fmt.Fprintf(b, "total power   %.4g MW for %d nodes at %s each\n", e.PowerW/1e6, e.Nodes, units.Gbps(e.CapacityBps/1e9).Bits())
	_, err := io.WriteString(w, b.String())
	return err
}

// writeInventory renders a network's equipment and derived facts (ODDL: WSSs, transceivers,
// wavelengths, link budget).
func writeInventory(w io.Writer, inv network.Inventory, f format) error {
	switch f {
	case formatJSON:
		return writeJSON(w, inv)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"network", "nodes", "kind", "name", "count_or_value", "detail_or_unit", "flag", "source"})
		for _, it := range inv.Items {
			_ = cw.Write([]string{inv.Network, itoa(inv.Nodes), "item", it.Name, itoa(it.Count), it.Detail, "", it.Source})
		}
		for _, x := range inv.Facts {
			_ = cw.Write([]string{inv.Network, itoa(inv.Nodes), "fact", x.Name, ftoa(x.Value), x.Unit, fmt.Sprint(x.Flag), x.Source})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s, %d nodes\n\n", inv.Network, inv.Nodes)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "equipment\tcount\t\tsource")
	for _, it := range inv.Items {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", it.Name, it.Count, it.Detail, it.Source)
	}
	fmt.Fprintln(tw, "\t\t\t")
	for _, x := range inv.Facts {
		v := fmt.Sprintf("%.4g %s", x.Value, x.Unit)
		if x.Flag {
			v += "  ← needs attention"
		}
		fmt.Fprintf(tw, "%s\t%s\t\t%s\n", x.Name, v, x.Source)
	}
	_ = tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStructure renders a routed network's bill, structure and bandwidth shares.
func writeStructure(w io.Writer, r job.StructureReport, f format) error {
	s, sh := r.Structure, r.Shares
	switch f {
	case formatJSON:
		return writeJSON(w, r)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"network", "endpoints", "planes", "switches_per_plane", "dac_per_plane", "aoc_per_plane", "cost_usd",
			"diameter_cables", "bisection_share", "global_share", "allreduce_share", "allreduce_algorithm"})
		_ = cw.Write([]string{r.Network, itoa(s.Endpoints), itoa(s.Bill.Planes), itoa(s.Bill.Switches), itoa(s.Bill.DAC), itoa(s.Bill.AoC),
			ftoa(r.CostUSD), itoa(s.Diameter), ftoa(s.Bisection), ftoa(sh.Global), ftoa(sh.AllReduce), sh.AllReduceCost.Algorithm})
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s, %d accelerators\n\n", r.Network, s.Endpoints)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "per plane\tcount\tprice\t")
	fmt.Fprintf(tw, "switches\t%d\t$%.0f\t\n", s.Bill.Switches, s.Bill.SwitchUSD)
	fmt.Fprintf(tw, "DAC cables\t%d\t$%.0f\t\n", s.Bill.DAC, s.Bill.DACUSD)
	fmt.Fprintf(tw, "AoC cables\t%d\t$%.0f\t\n", s.Bill.AoC, s.Bill.AoCUSD)
	_ = tw.Flush()
	fmt.Fprintf(b, "\ncost          $%.2f M over %d planes (HammingMesh §III-C: switches, cables, optics)\n", r.CostUSD/1e6, s.Bill.Planes)
	fmt.Fprintf(b, "diameter      %d cables (endpoint cables included, §III-B)\n", s.Diameter)
	if s.Bisection > 0 {
		fmt.Fprintf(b, "bisection     %.4g of the injection bandwidth (§III-A)\n", s.Bisection)
	}
	fmt.Fprintf(b, "global        %.1f%% of %s injection as bus bandwidth: linear all-to-all of %v per accelerator, %v transfer, bottleneck %s\n",
		100*sh.Global, units.BytesPerSecond(s.InjectionBps).Bits(), sh.GlobalBytes, sh.GlobalCost.H2T, sh.GlobalCost.Bottleneck)
	fmt.Fprintf(b, "all-reduce    %.1f%% of the injection as bus bandwidth (%.1f%% with latency): %v in %v with %s, bottleneck %s\n",
		100*sh.AllReduce, 100*sh.AllReduceAt, sh.AllReduceBytes, sh.AllReduceCost.Total, sh.AllReduceCost.Algorithm, sh.AllReduceCost.Bottleneck)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTable renders a reproduced paper table: ours beside the paper's values.
func writeTable(w io.Writer, t job.PaperTable, rows []job.TableRow, f format) error {
	switch f {
	case formatJSON:
		return writeJSON(w, struct {
			Table  string         `json:"table"`
			Source string         `json:"source"`
			Rows   []job.TableRow `json:"rows"`
		}{t.Name, t.Source, rows})
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"preset", "cluster", "topology", "cost_musd", "paper_cost_musd", "global_pct", "paper_global_pct",
			"global_saving", "paper_global_saving", "allreduce_pct", "paper_allreduce_pct", "allreduce_saving", "paper_allreduce_saving",
			"diameter", "paper_diameter"})
		for _, r := range rows {
			p, o := r.Paper, r.Ours
			_ = cw.Write([]string{p.Preset, p.Cluster, p.Topology, ftoa(o.CostUSD / 1e6), ftoa(p.CostMUSD), ftoa(100 * o.Shares.Global), ftoa(p.GlobalPct),
				ftoa(r.Global.Saving), ftoa(p.GlobalSaving), ftoa(100 * o.Shares.AllReduce), ftoa(p.AllReducePct), ftoa(r.AllReduce.Saving),
				ftoa(p.AllReduceSaving), itoa(o.Structure.Diameter), itoa(p.Diameter)})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s\n%s\n\n", t.Title, t.Source)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "preset\ttopology\tcost M$\t(paper)\tglobal BW\t(paper)\tsaving\t(paper)\tall-reduce BW\t(paper)\tsaving\t(paper)\tdiameter\t(paper)\t")
	cluster := ""
	for _, r := range rows {
		p, o := r.Paper, r.Ours
		if p.Cluster != cluster {
			if cluster != "" {
				fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t")
			}
			cluster = p.Cluster
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f%%\t%.1f%%\t%.2fx\t%.1fx\t%.1f%%\t%.1f%%\t%.2fx\t%.1fx\t%d\t%d\t\n", p.Preset, p.Topology,
			o.CostUSD/1e6, p.CostMUSD, 100*o.Shares.Global, p.GlobalPct, r.Global.Saving, p.GlobalSaving,
			100*o.Shares.AllReduce, p.AllReducePct, r.AllReduce.Saving, p.AllReduceSaving, o.Structure.Diameter, p.Diameter)
	}
	_ = tw.Flush()
	fmt.Fprintf(b, "\nglobal: %s\nall-reduce: %s\n", t.GlobalSource, t.AllReduceSrc)
	for _, r := range rows {
		if r.Paper.Note != "" {
			fmt.Fprintf(b, "%s: %s\n", r.Paper.Preset, r.Paper.Note)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
