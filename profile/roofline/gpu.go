package roofline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/internal/units"
)

// GPU is one row of the GPU table (configs/gpus.json). Every numeric field has an entry in
// Sources citing where it comes from.
type GPU struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// MemoryBytes is the HBM capacity.
	MemoryBytes float64 `json:"memory_bytes"`
	// HBMBytesPerS is the peak HBM bandwidth.
	HBMBytesPerS float64 `json:"hbm_bytes_per_s"`
	// TensorFLOPs is the dense matrix-engine peak per dtype name (fp8, fp16, bf16, fp32).
	TensorFLOPs map[string]float64 `json:"tensor_flop_per_s"`
	// VectorFLOPs is the non-matrix (CUDA core) peak per dtype name.
	VectorFLOPs map[string]float64 `json:"vector_flop_per_s"`
	// TDPW is the maximum thermal design power (W): what the GPU draws at most, the search's
	// energy ranking charges it for every second of an iteration (an upper bound).
	TDPW float64 `json:"tdp_w"`
	// MPParamsPerGPU is the model-parallel limit of the RAMP partitioner (§7.2.1).
	MPParamsPerGPU float64 `json:"mp_params_per_gpu"`
	// ConvEfficiency, when > 0, is this GPU type's convolution efficiency, calibrated once on one
	// published measurement (its source says which): a run with --conv-eff 0 (auto, the default)
	// uses it.
	ConvEfficiency float64 `json:"conv_efficiency,omitempty"`
	// HostLinkBytesPerS, when > 0, is the measured copy rate between host memory and the GPU in
	// one direction (pinned memory, cudaMemcpyAsync on a copy engine): what activation
	// offloading moves its copies at. 0: not measured, and offloading is refused.
	HostLinkBytesPerS float64 `json:"host_link_bytes_per_s,omitempty"`
	// Sources cites each numeric field by its JSON key.
	Sources map[string]string `json:"sources"`
}

// Memory is the capacity as a unit type.
func (g GPU) Memory() units.Bytes { return units.Bytes(g.MemoryBytes) }

// HostLink is the measured host-to-GPU copy rate per direction (0: not measured).
func (g GPU) HostLink() units.BytesPerSecond { return units.BytesPerSecond(g.HostLinkBytesPerS) }

// HBM is the peak memory bandwidth.
func (g GPU) HBM() units.BytesPerSecond { return units.BytesPerSecond(g.HBMBytesPerS) }

// TensorPeak returns the dense matrix peak for dt, or a usage error listing the supported dtypes.
func (g GPU) TensorPeak(dt dtype.DType) (units.FLOPPerSecond, error) {
	return peak(g, g.TensorFLOPs, dt, "tensor")
}

// VectorPeak returns the non-matrix peak for dt, falling back to fp32's when the table has no
// entry (e.g. fp8 elementwise math runs in fp32).
func (g GPU) VectorPeak(dt dtype.DType) units.FLOPPerSecond {
	if v, ok := g.VectorFLOPs[dt.String()]; ok {
		return units.FLOPPerSecond(v)
	}
	return units.FLOPPerSecond(g.VectorFLOPs[dtype.FP32.String()])
}

func peak(g GPU, table map[string]float64, dt dtype.DType, what string) (units.FLOPPerSecond, error) {
	if v, ok := table[dt.String()]; ok {
		return units.FLOPPerSecond(v), nil
	}
	return 0, errs.Usage("GPU %s has no %s %s peak; supported: %s", g.Name, dt, what, strings.Join(keys(table), ", "))
}

func keys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Validate reports every problem of a GPU entry at once.
func (g GPU) Validate() error {
	var p params.Problems
	if g.Name == "" {
		p.Addf("name is empty")
	}
	positive := func(key string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			p.Addf("%s %g must be > 0", key, v)
		}
		if g.Sources[key] == "" {
			p.Addf("%s has no source", key)
		}
	}
	positive("memory_bytes", g.MemoryBytes)
	positive("hbm_bytes_per_s", g.HBMBytesPerS)
	positive("mp_params_per_gpu", g.MPParamsPerGPU)
	if g.HostLinkBytesPerS != 0 {
		positive("host_link_bytes_per_s", g.HostLinkBytesPerS)
	}
	if g.ConvEfficiency != 0 {
		if !(g.ConvEfficiency > 0 && g.ConvEfficiency <= 1) {
			p.Addf("conv_efficiency %g must be in (0, 1]", g.ConvEfficiency)
		}
		if g.Sources["conv_efficiency"] == "" {
			p.Addf("conv_efficiency has no source")
		}
	}
	for _, tbl := range []struct {
		key string
		m   map[string]float64
	}{{"tensor_flop_per_s", g.TensorFLOPs}, {"vector_flop_per_s", g.VectorFLOPs}} {
		if g.Sources[tbl.key] == "" {
			p.Addf("%s has no source", tbl.key)
		}
		if _, ok := tbl.m["fp32"]; !ok {
			p.Addf("%s needs an fp32 entry", tbl.key)
		}
		for _, k := range keys(tbl.m) {
			if _, err := dtype.Parse(k); err != nil {
				p.Addf("%s has unknown dtype %q; valid: %s", tbl.key, k, strings.Join(dtype.Names(), ", "))
			}
			if v := tbl.m[k]; !(v > 0) || math.IsInf(v, 0) {
				p.Addf("%s[%s] %g must be > 0", tbl.key, k, v)
			}
		}
	}
	return p.Err("GPU " + g.Name)
}

// DecodeGPUs reads a JSON array of GPUs strictly (unknown fields rejected) and validates each.
func DecodeGPUs(r io.Reader, name string) ([]GPU, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, errs.Usage("%s: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var gpus []GPU
	if err := dec.Decode(&gpus); err != nil {
		return nil, errs.Usage("%s: %v", name, err)
	}
	if dec.More() {
		return nil, errs.Usage("%s: unexpected data after the JSON array at byte %d", name, dec.InputOffset())
	}
	if err := checkGPUs(gpus, name); err != nil {
		return nil, err
	}
	return gpus, nil
}

// checkGPUs validates a decoded GPU table: at least one GPU, each valid, no name twice.
func checkGPUs(gpus []GPU, name string) error {
	if len(gpus) == 0 {
		return errs.Usage("%s: no GPUs; want a JSON array of GPU objects", name)
	}
	seen := map[string]bool{}
	for _, g := range gpus {
		if err := g.Validate(); err != nil {
			return errs.Usage("%s: %v", name, err)
		}
		if seen[g.Name] {
			return errs.Usage("%s: GPU %q defined twice", name, g.Name)
		}
		seen[g.Name] = true
	}
	return nil
}

// DefaultGPU is the GPU of the RAMP paper's evaluation.
const DefaultGPU = "ramp-a100"

var (
	tableOnce sync.Once
	table     *registry.Registry[GPU]
	tableErr  error
)

// GPUs returns the built-in GPU table (configs/gpus.json, compiled in as tables_gen.go: see
// TestBuiltinTables), checked once.
func GPUs() (*registry.Registry[GPU], error) {
	tableOnce.Do(func() {
		gpus := builtinGPUs()
		if err := checkGPUs(gpus, "configs/gpus.json"); err != nil {
			tableErr = fmt.Errorf("built-in GPU table: %w", err)
			return
		}
		table = registry.New[GPU]("GPU")
		for _, g := range gpus {
			table.Add(g.Name, g)
		}
	})
	return table, tableErr
}

// LookupGPU finds a built-in GPU by name.
func LookupGPU(name string) (GPU, error) {
	t, err := GPUs()
	if err != nil {
		return GPU{}, err
	}
	return t.Lookup(name)
}

// MatchGPU finds the table's GPU for a device name as CUDA reports it ("NVIDIA A100-SXM4-80GB",
// "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "NVIDIA B200", "NVIDIA GeForce RTX 2080 Ti",
// "Tesla M40"). An A100 without a memory size in its name
// (e.g. the HGX "A100-PG509-200") is the 40 GB part when memBytes says so, else the 80 GB one.
func MatchGPU(name string, memBytes int64) (GPU, bool) {
	n := strings.ToLower(name)
	var key string
	switch {
	case strings.Contains(n, "b200"):
		key = "b200"
	case strings.Contains(n, "2080 ti"):
		key = "rtx2080ti"
	case strings.Contains(n, "tesla m40"):
		key = "m40"
	case strings.Contains(n, "h200"):
		key = "h200"
	case strings.Contains(n, "h100"):
		key = "h100"
	case strings.Contains(n, "a100"):
		key = "a100-80gb"
		if strings.Contains(n, "40gb") || (!strings.Contains(n, "80gb") && memBytes > 0 && memBytes < 60<<30) {
			key = "a100-40gb"
		}
	case strings.Contains(n, "v100"):
		key = "v100"
	default:
		return GPU{}, false
	}
	g, err := LookupGPU(key)
	return g, err == nil
}
