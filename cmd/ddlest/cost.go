package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
)

func newCostCommand() *cobra.Command {
	var (
		nf       netFlags
		capacity float64
		f        format
	)
	cmd := &cobra.Command{
		Use:   "cost",
		Short: "Network cost per Gbit (RAMP Table 3) and power (RAMP Table 4) of a network at full scale",
		Example: `  ddlest cost --net ramp
  ddlest cost --net superpod --capacity-tbps 12.8 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(capacity >= 0) {
				return errs.Usage("--capacity-tbps %g must be ≥ 0", capacity)
			}
			choice, err := nf.choice()
			if err != nil {
				return err
			}
			spec, cfg, err := choice.Config()
			if err != nil {
				return err
			}
			costing, ok := cfg.(network.Costing)
			if !ok {
				var have []string
				for _, s := range all.Specs() {
					if _, ok := s.NewConfig().(network.Costing); ok {
						have = append(have, s.Name)
					}
				}
				return errs.Usage("network %s has no cost model; valid: %s", spec.Name, strings.Join(have, ", "))
			}
			e, err := costing.Economics(capacity)
			if err != nil {
				return err
			}
			return writeEconomics(cmd.OutOrStdout(), spec.Name, e, f)
		},
	}
	addNetFlags(cmd, &nf, "ramp")
	cmd.Flags().Float64Var(&capacity, "capacity-tbps", 12.8, "node capacity the total power is quoted at (Tb/s; RAMP Table 4 compares networks at 12.8); 0 = the network's own")
	addFormatFlag(cmd.Flags(), &f)
	_ = cmd.RegisterFlagCompletionFunc("format", completeFormats)
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
