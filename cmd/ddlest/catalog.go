package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/profile/roofline"
)

func newGPUsCommand() *cobra.Command {
	var f format
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPU presets of the roofline profile, with their sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGPUs(f, cmd.OutOrStdout())
		},
	}
	addFormatFlag(cmd, &f)
	return cmd
}

func runGPUs(f format, w io.Writer) error {
	tbl, err := roofline.GPUs()
	if err != nil {
		return err
	}
	gpus := tbl.All()
	peak := func(m map[string]float64, k string) string {
		if v, ok := m[k]; ok {
			return units.FLOPPerSecond(v).String()
		}
		return "-"
	}
	switch f {
	case formatJSON:
		return writeJSON(w, gpus)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"name", "memory_bytes", "hbm_bytes_per_s", "fp8_tensor_flop_per_s", "fp16_tensor_flop_per_s",
			"bf16_tensor_flop_per_s", "tf32_tensor_flop_per_s", "fp32_tensor_flop_per_s", "mp_params_per_gpu", "host_link_bytes_per_s", "description"})
		for _, g := range gpus {
			num := func(k string) string {
				if v, ok := g.TensorFLOPs[k]; ok {
					return ftoa(v)
				}
				return ""
			}
			_ = cw.Write([]string{g.Name, ftoa(g.MemoryBytes), ftoa(g.HBMBytesPerS), num("fp8"), num("fp16"), num("bf16"),
				num("tf32"), num("fp32"), ftoa(g.MPParamsPerGPU), hostLink(g, ftoa, ""), g.Description})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMEMORY\tHBM\tFP16 TENSOR\tBF16 TENSOR\tFP8 TENSOR\tTF32 TENSOR\tFP32\tTP LIMIT\tHOST LINK\tDESCRIPTION")
	for _, g := range gpus {
		fmt.Fprintf(tw, "%s\t%v\t%v\t%s\t%s\t%s\t%s\t%s\t%s params\t%s\t%s\n", g.Name, units.Bytes(g.MemoryBytes), g.HBM(),
			peak(g.TensorFLOPs, "fp16"), peak(g.TensorFLOPs, "bf16"), peak(g.TensorFLOPs, "fp8"), peak(g.TensorFLOPs, "tf32"), peak(g.TensorFLOPs, "fp32"),
			units.Count(g.MPParamsPerGPU), hostLink(g, func(float64) string { return g.HostLink().String() }, "-"), g.Description)
	}
	_ = tw.Flush()
	fmt.Fprintln(b, "\nsources ([P] paper, [D] derived, [X] datasheet or assumption)")
	for _, g := range gpus {
		fmt.Fprintf(b, "%s\n", g.Name)
		for _, k := range []string{"memory_bytes", "hbm_bytes_per_s", "tensor_flop_per_s", "vector_flop_per_s", "mp_params_per_gpu", "host_link_bytes_per_s"} {
			if src, ok := g.Sources[k]; ok {
				fmt.Fprintf(b, "  %s: %s\n", k, src)
			}
		}
	}
	gemm, err := roofline.GEMMTable()
	if err != nil {
		return err
	}
	fmt.Fprintln(b, "\nshape-aware GEMMs (--gemm shape|auto, configs/gemm.json): measured ceiling × tile and wave quantisation")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tSMs\tTILE\tMAMF")
	for _, e := range gemm.All() {
		var mamf []string
		for _, dt := range []string{"fp8", "fp16", "bf16"} {
			if v, ok := e.MAMF[dt]; ok {
				mamf = append(mamf, dt+" "+units.FLOPPerSecond(v).String())
			}
		}
		fmt.Fprintf(tw, "%s\t%d\t%d×%d\t%s\n", e.GPU, e.SMs, e.TileM, e.TileN, strings.Join(mamf, ", "))
	}
	_ = tw.Flush()
	for _, e := range gemm.All() {
		fmt.Fprintf(b, "%s\n", e.GPU)
		for _, k := range []string{"sms", "tile", "mamf_flop_per_s"} {
			fmt.Fprintf(b, "  %s: %s\n", k, e.Sources[k])
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func newNetsCommand() *cobra.Command {
	var f format
	cmd := &cobra.Command{
		Use:   "nets",
		Short: "List the network models, their parameters (keys for --net-param) and sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNets(f, cmd.OutOrStdout())
		},
	}
	addFormatFlag(cmd, &f)
	return cmd
}

type netDoc struct {
	Name       string     `json:"name"`
	Summary    string     `json:"summary"`
	Source     string     `json:"source"`
	Algorithms []string   `json:"algorithms"`
	Params     []paramDoc `json:"params"`
}

type presetDoc struct {
	Name        string            `json:"name"`
	Network     string            `json:"network"`
	Description string            `json:"description"`
	Params      map[string]any    `json:"params"`
	Sources     map[string]string `json:"sources"`
}

type algorithmDoc struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

type netsDoc struct {
	Networks   []netDoc       `json:"networks"`
	Algorithms []algorithmDoc `json:"algorithms"`
	Presets    []presetDoc    `json:"presets"`
}

type paramDoc struct {
	Key     string `json:"key"`
	Default string `json:"default"`
	Help    string `json:"help"`
	Source  string `json:"source"`
}

func runNets(f format, w io.Writer) error {
	var doc netsDoc
	for _, s := range all.Registry().All() {
		d := netDoc{Name: s.Name, Summary: s.Summary, Source: s.Source, Params: []paramDoc{}, Algorithms: []string{}}
		cfg := s.NewConfig()
		if a, ok := cfg.(interface{ Algorithms() []collective.Algorithm }); ok {
			d.Algorithms = collective.Names(a.Algorithms())
		}
		for _, p := range params.List(cfg) {
			d.Params = append(d.Params, paramDoc{Key: p.Key, Default: p.Value, Help: p.Help, Source: p.Source})
		}
		doc.Networks = append(doc.Networks, d)
	}
	for _, a := range all.Algorithms() {
		doc.Algorithms = append(doc.Algorithms, algorithmDoc{Name: a.Name(), Summary: a.Summary()})
	}
	presets, err := all.Presets()
	if err != nil {
		return err
	}
	for _, p := range presets.All() {
		pd := presetDoc{Name: p.Name, Network: p.Network, Description: p.Description, Sources: p.Sources}
		if err := json.Unmarshal(p.Params, &pd.Params); err != nil {
			return err
		}
		doc.Presets = append(doc.Presets, pd)
	}
	switch f {
	case formatJSON:
		return writeJSON(w, doc)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"network", "param", "default", "help", "source"})
		for _, d := range doc.Networks {
			if len(d.Params) == 0 {
				_ = cw.Write([]string{d.Name, "", "", d.Summary, d.Source})
			}
			for _, p := range d.Params {
				_ = cw.Write([]string{d.Name, p.Key, p.Default, p.Help, p.Source})
			}
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	for i, d := range doc.Networks {
		if i > 0 {
			fmt.Fprintln(b)
		}
		fmt.Fprintf(b, "%s: %s\n  source: %s\n", d.Name, d.Summary, d.Source)
		if len(d.Algorithms) > 0 {
			fmt.Fprintf(b, "  algorithms: %s\n", strings.Join(d.Algorithms, ", "))
		}
		for _, p := range d.Params {
			fmt.Fprintf(b, "  %s = %s  %s\n    source: %s\n", p.Key, p.Default, p.Help, p.Source)
		}
	}
	fmt.Fprintf(b, "\nalgorithms (--strategy NAME, or op=NAME pairs; best picks the cheapest per collective):\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, a := range doc.Algorithms {
		fmt.Fprintf(tw, "  %s\t%s\n", a.Name, a.Summary)
	}
	_ = tw.Flush()
	fmt.Fprintf(b, "\npresets (--net-preset NAME; configs/networks.json):\n")
	tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, p := range presets.All() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Network, p.Description, string(p.Params))
	}
	_ = tw.Flush()
	_, err = io.WriteString(w, b.String())
	return err
}

// hostLink renders a GPU's measured host-link rate with format, or missing when
// configs/gpus.json has none.
func hostLink(g roofline.GPU, format func(float64) string, missing string) string {
	if g.HostLinkBytesPerS > 0 {
		return format(g.HostLinkBytesPerS)
	}
	return missing
}
