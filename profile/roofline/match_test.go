package roofline

import "testing"

// Device names as the CUDA runtime (cudaDeviceProp.name, nvidia-smi --query-gpu=name) reports
// them map to the table's GPUs: the H100's from the shared TraceLens trace
// (deviceProperties), the B200's as nvidia-smi prints it on a DGX B200 ("NVIDIA B200, …,
// 183359 MiB"), the older parts' with the "Tesla"/"GeForce" brands those drivers use; the A100
// without a size in its name is told apart by its memory.
func TestMatchGPU(t *testing.T) {
	for _, c := range []struct {
		device string
		mem    int64
		want   string
	}{
		{"NVIDIA H100 80GB HBM3", 0, "h100"},
		{"NVIDIA H200", 0, "h200"},
		{"NVIDIA B200", 183359 << 20, "b200"},
		{"NVIDIA A100-SXM4-80GB", 0, "a100-80gb"},
		{"NVIDIA A100-SXM4-40GB", 0, "a100-40gb"},
		{"NVIDIA A100-PG509-200", 40 << 30, "a100-40gb"},
		{"Tesla V100-SXM2-32GB", 0, "v100"},
		{"NVIDIA GeForce RTX 2080 Ti", 0, "rtx2080ti"},
		{"GeForce RTX 2080 Ti", 0, "rtx2080ti"},
		{"Tesla M40", 0, "m40"},
		{"AMD Instinct MI300X", 0, ""},
		{"", 0, ""},
	} {
		g, ok := MatchGPU(c.device, c.mem)
		if got := map[bool]string{true: g.Name, false: ""}[ok]; got != c.want {
			t.Errorf("%q: %q, want %q", c.device, got, c.want)
		}
	}
}
