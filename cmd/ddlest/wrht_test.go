package main

import (
	"math"
	"strings"
	"testing"
)

// The WRHT commands of issue 10 end to end: the collective on the WDM ring meets Eq. 6
// (θ(d/B + a) for BEiT-L's 1,228 MB at 40 Gb/s and 25 µs: WRHT 736.9 ms, O-Ring 541.9 ms, BT
// 4,912.7 ms; reference/wrht.md §5.4) with --no-reduce-compute, and the reductions add time
// without it. (Table 1's step counts are rows of the reproduction table, internal/repro/wrht.go.)
func TestWDMRingCollectiveCLI(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		ms       float64
	}{{"wrht", 736.9}, {"ring", 541.9}, {"tree", 4912.7}, {"hring", 0}} {
		args := []string{"collective", "--net", "wdmring", "--strategy", tc.strategy, "--op", "all-reduce", "--size", "1228MB",
			"--gpus", "1024", "--net-param", "wavelengths=64"}
		r := runJSON(t, append(args, "--no-reduce-compute")...).([]any)[0].(map[string]any)
		if r["compute_s"].(float64) != 0 {
			t.Errorf("%s: compute %v s; want no compute", tc.strategy, r["compute_s"])
		}
		if got := 1e3 * r["total_s"].(float64); tc.ms > 0 && math.Abs(got-tc.ms) > 1e-3*tc.ms {
			t.Errorf("%s: %.1f ms, Eq. 6 gives %.1f", tc.strategy, got, tc.ms)
		}
		with := runJSON(t, args...).([]any)[0].(map[string]any)
		if !(with["compute_s"].(float64) > 0) {
			t.Errorf("%s with reductions: compute %v s", tc.strategy, with["compute_s"])
		}
	}
}

// `ddlest dp --model M --net wdmring` runs for the paper's four DNNs, pricing the gradient
// buckets on the ring, and --no-reduce-compute shortens the data-parallel time.
func TestWDMRingDP(t *testing.T) {
	for _, model := range []string{"beit-large", "vgg16", "alexnet", "resnet50"} {
		args := []string{"dp", "--model", model, "--net", "wdmring", "--gpus", "1024"}
		dp := func(r map[string]any) float64 {
			return r["report"].(map[string]any)["breakdown"].(map[string]any)["dp_comm_s"].(float64)
		}
		with := runJSON(t, args...).(map[string]any)
		without := runJSON(t, append(args, "--no-reduce-compute")...).(map[string]any)
		if !(dp(with) > dp(without)) || !(dp(without) > 0) {
			t.Errorf("%s: data parallel %g s with reductions, %g s without", model, dp(with), dp(without))
		}
	}
}

// Bad WDM-ring input is one line naming the value and what is valid, exit 2.
func TestWDMRingBadInput(t *testing.T) {
	base := []string{"collective", "--net", "wdmring", "--size", "1MB", "--gpus", "64"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--net-param", "group=200"}, []string{"group 200", "⌊m/2⌋ = 100", "group ≤ 2w+1 = 129"}},
		{[]string{"--net-param", "wavelengths=4", "--net-param", "group=11"}, []string{"group 11", "group ≤ 2w+1 = 9"}},
		{[]string{"--net-param", "group=1"}, []string{"group 1", "≥ 2"}},
		{[]string{"--net-param", "nodes=1"}, []string{"nodes 1", "≥ 2"}},
		{[]string{"--gpus", "1"}, []string{"1 node", "≥ 2"}},
		{[]string{"--net-param", "step_rule=fast"}, []string{`"fast"`, "exact, lemma"}},
		{[]string{"--net-param", "hring_size=iii"}, []string{`"iii"`, "i, ii"}},
		{[]string{"--strategy", "wrht", "--op", "all-gather"}, []string{"wrht", "all-gather", "valid: best, ring"}},
		{[]string{"--net-param", "ber_max=0.6"}, []string{"ber_max 0.6", "[0, 0.5)"}},
		{[]string{"--net-param", "snr_scale=log"}, []string{`"log"`, "linear, db"}},
	} {
		_, errOut, code := execute(append(append([]string(nil), base...), tc.args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want one line, exit 2", tc.args, code, errOut)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: %q lacks %q", tc.args, errOut, w)
			}
		}
	}
}

// A group the insertion-loss budget (WRHT Eqs. 7–9) forbids at every size is a valid but
// infeasible configuration: one line, exit 3.
func TestWDMRingLossBudgetCLI(t *testing.T) {
	_, errOut, code := execute("collective", "--net", "wdmring", "--strategy", "wrht", "--size", "1MB", "--gpus", "1024",
		"--net-param", "pass_loss_db=0.125", "--net-param", "laser_dbm=5", "--net-param", "modulator_loss_db=1", "--net-param", "penalty_db=1")
	if code != 3 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "insertion-loss budget") {
		t.Errorf("exit %d, %q; want one line, exit 3", code, errOut)
	}
}

// The crosstalk bound (WRHT Eqs. 11–13) through the CLI, by hand: P_laser 0 dBm (1 mW), no loss,
// P_Tx = P_O = −30 dBm (1 µW), P_Rx = −36.02 dBm (0.25 µW) per passed interface: SNR(L) =
// 1000 / (2 + 0.25·L) > 80.12 (BER < 1e-9) for L ≤ 41. At 1,024 nodes two levels have
// L_max = m′ = 41, m* = ⌈1024/41⌉ = 25 and ⌈25²/8⌉ = 79 > 64 wavelengths: θ = 4 steps, where
// the unbounded m = 129 takes 3. Read in dB the SNR never reaches 80: infeasible.
func TestWDMRingCrosstalkCLI(t *testing.T) {
	args := []string{"collective", "--net", "wdmring", "--strategy", "wrht", "--size", "1MB", "--gpus", "1024", "--format", "json"}
	bound := []string{"--net-param", "laser_dbm=0", "--net-param", "ber_max=1e-9", "--net-param", "xtalk_tx_dbm=-30",
		"--net-param", "xtalk_rx_dbm=-36.0206", "--net-param", "noise_dbm=-30"}
	for _, tc := range []struct {
		extra []string
		steps string
	}{{nil, `"steps": 3`}, {bound, `"steps": 4`}} {
		out, errOut, code := execute(append(append([]string{}, args...), tc.extra...)...)
		if code != 0 || !strings.Contains(out, tc.steps) {
			t.Errorf("%v: exit %d (%s), want %s", tc.extra, code, errOut, tc.steps)
		}
	}
	_, errOut, code := execute(append(append(append([]string{}, args...), bound...), "--net-param", "snr_scale=db")...)
	if code != 3 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "crosstalk bound") {
		t.Errorf("SNR in dB: exit %d, %q; want one line, exit 3", code, errOut)
	}
}
