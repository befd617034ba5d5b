package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/network/collective"
)

// netFlags are the network options every command that prices communication shares.
type netFlags struct {
	net, preset, config, bw, latency, strategy, nodeTbps string
	params                                               []string
	flags                                                *pflag.FlagSet
}

func addNetFlags(cmd *cobra.Command, f *netFlags, defaultNet string) {
	fs := cmd.Flags()
	f.flags = fs
	fs.StringVar(&f.net, "net", defaultNet, "network `MODEL` (ddlest nets lists them)")
	fs.StringVar(&f.preset, "net-preset", "", "network preset `NAME` (configs/networks.json, ddlest nets), e.g. hx4-small; it names its network, so --net may be left out")
	fs.StringArrayVar(&f.params, "net-param", nil, "network parameter `KEY=VALUE` (repeatable; keys in ddlest nets)")
	fs.StringVar(&f.config, "net-config", "", "JSON file of network parameters (strict; --net-param overrides it)")
	fs.StringVar(&f.strategy, "strategy", "", "collective algorithm: "+strings.Join(all.AlgorithmNames(), ", ")+", or op=name pairs (sets strategy; the network must offer it, see ddlest nets)")
	fs.StringVar(&f.nodeTbps, "node-tbps", "", "node (per-GPU) bandwidth in Tb/s, e.g. 2.4 (sets node_tbps)")
	fs.StringVar(&f.bw, "net-bw", "", "per-GPU bandwidth of the alphabeta network, e.g. 400Gbps or 50GB/s (sets bandwidth_gbit_per_s)")
	fs.StringVar(&f.latency, "net-latency", "", "per-step latency of the alphabeta network, e.g. 2us (sets latency_ns)")
	_ = cmd.RegisterFlagCompletionFunc("net", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return all.Registry().Names(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("strategy", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return all.AlgorithmNames(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("net-preset", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		r, err := all.Presets()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return r.Names(), cobra.ShellCompDirectiveNoFileComp
	})
}

// choice maps the flags onto a network choice; the shorthands become key=value parameters after
// the --net-param ones, so they win.
func (f *netFlags) choice() (job.NetworkChoice, error) {
	n := job.NetworkChoice{Name: f.net, Preset: f.preset, ConfigFile: f.config, Params: append([]string(nil), f.params...)}
	if f.preset != "" && (f.flags == nil || !f.flags.Changed("net")) {
		n.Name = "" // the preset names its network
	}
	if f.strategy != "" {
		if _, err := collective.ParseFor(f.strategy, all.Algorithms()); err != nil {
			return n, errs.Usage("--strategy: %v", err)
		}
		n.Params = append(n.Params, "strategy="+f.strategy)
	}
	if f.nodeTbps != "" {
		n.Params = append(n.Params, "node_tbps="+f.nodeTbps)
	}
	if f.bw != "" {
		bw, err := units.ParseBandwidth(f.bw)
		if err != nil {
			return n, errs.Usage("--net-bw: %v", err)
		}
		n.Params = append(n.Params, "bandwidth_gbit_per_s="+ftoa(bw.Gbit()))
	}
	if f.latency != "" {
		lat, err := units.ParseDuration(f.latency)
		if err != nil {
			return n, errs.Usage("--net-latency: %v", err)
		}
		n.Params = append(n.Params, "latency_ns="+ftoa(float64(lat)*1e9))
	}
	return n, nil
}

// addClusterFlag registers --cluster on the network commands (collective, trace collectives).
func addClusterFlag(cmd *cobra.Command, name *string) {
	cmd.Flags().StringVar(name, "cluster", "", "price on a cluster preset's network (`NAME`, ddlest clusters; its GPU reduces), the --net flags applied to it")
}

// clusterFor is the named cluster preset with the network flags applied (nil without a name).
func clusterFor(name string, nf *netFlags) (*job.Cluster, error) {
	if name == "" {
		return nil, nil
	}
	c, err := job.LookupCluster(name)
	if err != nil {
		return nil, errs.Usage("--cluster: %v", err)
	}
	if err := nf.applyTo(&c.Network); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
