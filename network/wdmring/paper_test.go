package wdmring

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
)

// The WRHT paper's published numbers (Table 1, Fig. 2, the averages of §5.3–5.6) are rows of the
// reproduction table (internal/repro/wrht.go), with the shape checks of Figs. 4–7 beside them;
// what stays here are hand counts of the optical-constraint model (§4.4), which has no published
// numbers.

// Eqs. 7–9 cap the group: with P_m = P_p = 1 dB, P_pass = 0.125 dB and P_laser = 10 dBm, a
// lightpath may pass L_max ≤ 64 interfaces (1 + 64/8 + 1 = 10). At N = 1,024 two levels have
// L_max = m′, so m′ = 64: k = 2, m* = 16, ⌈16²/8⌉ = 32 ≤ 64 wavelengths, θ = 3 steps. With
// P_laser = 5 dBm (L_max ≤ 24) no group works: two levels need m′ ≥ 32 = L_max, more levels have
// L_max = m′^(k−1) ≥ 256; the configuration is infeasible (exit 3).
func TestInsertionLossGroup(t *testing.T) {
	if l := MaxLength(1024, 129); l != 129 {
		t.Errorf("Eq. 7, N = 1,024, m′ = 129: L_max %d, want 129", l)
	}
	if l := MaxLength(100, 129); l != 64 {
		t.Errorf("Eq. 7, one level of 100 in groups of 129: L_max %d, want ⌊129/2⌋ = 64", l)
	}
	set := func(laser float64) func(*Config) {
		return func(c *Config) { c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, laser }
	}
	c := newModel(t, 1024, set(10)).cfg
	pl, err := c.plan(1024)
	if err != nil || pl.M != 64 || pl.Theta != 3 {
		t.Errorf("budget of 64 interfaces: m = %d, θ = %d (%v); want 64, 3", pl.M, pl.Theta, err)
	}
	if cost := allReduce(t, 1024, 1e6, "wrht", set(10)); cost.Steps != 3 {
		t.Errorf("budget of 64 interfaces: %d steps, want 3", cost.Steps)
	}
	m := newModel(t, 1024, func(c *Config) { set(5)(c); c.Strategy = "wrht" })
	_, err = m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: network.Group{Size: 1024, Stride: 1}})
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "insertion-loss budget") {
		t.Errorf("budget of 24 interfaces: %v, want infeasible", err)
	}
}

// Eqs. 11–13 cap the group by crosstalk. Hand count with P_laser = 0 dBm (1 mW), no loss
// (P_m = P_pass = 0), P_Tx = P_O = −30 dBm (1 µW) and P_Rx = −40 dBm (0.1 µW) per passed
// interface: SNR(L) = 1000 / (2 + 0.1·L). BER = ½e^(−SNR/4) < 1e-9 needs SNR > 4·ln(5e8) =
// 80.12, so L ≤ 104: BER(104) = ½e^(−80.645/4) = 8.8e-10, BER(105) = ½e^(−20) = 1.03e-9. At
// N = 1,024 two levels have L_max = m′, so m′ = 104: k = 2, m* = ⌈1024/104⌉ = 10,
// ⌈10²/8⌉ = 13 ≤ 64 wavelengths, θ = 3. Read in dB as Eq. 11 prints it, the SNR never exceeds
// 10·log10(1000/2) = 27 dB, far below 80: infeasible.
func TestCrosstalkGroup(t *testing.T) {
	set := func(c *Config) {
		c.LaserDbm, c.ModulatorDb, c.PassLossDb = 0, 0, 0
		c.BERMax, c.XtalkTxDbm, c.XtalkRxDbm, c.NoiseDbm = 1e-9, -30, -40, -30
	}
	c := newModel(t, 1024, set).cfg
	for _, tc := range []struct {
		l   int
		ber float64
	}{{104, 0.5 * math.Exp(-1000/12.4/4)}, {105, 0.5 * math.Exp(-20)}} {
		if got := c.BER(tc.l); math.Abs(got-tc.ber) > 1e-6*tc.ber {
			t.Errorf("BER after %d interfaces = %.4g, want %.4g", tc.l, got, tc.ber)
		}
	}
	pl, err := c.plan(1024)
	if err != nil || pl.M != 104 || pl.Theta != 3 {
		t.Errorf("crosstalk bound L ≤ 104: m = %d, θ = %d (%v); want 104, 3", pl.M, pl.Theta, err)
	}
	m := newModel(t, 1024, func(c *Config) { set(c); c.SNRScale = "db"; c.Strategy = "wrht" })
	_, err = m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: network.Group{Size: 1024, Stride: 1}})
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "crosstalk bound") {
		t.Errorf("SNR in dB: %v, want infeasible (crosstalk bound)", err)
	}
	// With the insertion-loss budget of TestInsertionLossGroup (64 interfaces) too, the tighter wins.
	c = newModel(t, 1024, func(c *Config) {
		set(c)
		c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, 10
	}).cfg
	if pl, err := c.plan(1024); err != nil || pl.M != 64 {
		t.Errorf("loss budget 64 and crosstalk: m = %d (%v), want 64", pl.M, err)
	}
}

// Under best, a WRHT the loss budget forbids gives way to the other algorithms.
func TestInsertionLossBest(t *testing.T) {
	c := allReduce(t, 1024, 1e6, "best", func(c *Config) { c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, 5 })
	if c.Algorithm == "wrht" || c.Total <= 0 {
		t.Errorf("best with an infeasible WRHT: %+v", c)
	}
}
