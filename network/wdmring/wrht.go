package wdmring

import (
	"fmt"
	"math"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// CeilLog is the smallest k ≥ 0 with m^k ≥ n (n ≥ 1, m ≥ 2), in integers: a float log misses
// exact powers (ln 125 / ln 5 = 3.0000000000000004; reference/wrht.md §2.7).
func CeilLog(n, m int) int {
	k := 0
	for p := 1; p < n; p *= m {
		k++
	}
	return k
}

// Plan is WRHT's step structure for p members in groups of m on a ring of w wavelengths (WRHT
// §4.1–4.2): k = ⌈log_m p⌉ reduce levels; after k−1 of them m* = ⌈p/m^(k−1)⌉ representatives
// remain, which finish with a one-step all-to-all when ⌈m*²/8⌉ ≤ w wavelengths suffice (Liang &
// Shen, ref. [13]) under the exact rule, and with one more gather otherwise.
type Plan struct {
	P, M     int
	K        int  // reduce levels ⌈log_m p⌉
	MStar    int  // representatives in the last reduce step
	A2A      int  // wavelengths their all-to-all needs, ⌈m*²/8⌉
	AllToAll bool // the last reduce step is that all-to-all
	// Theta is the all-reduce's steps: 2k − 1 with the all-to-all, else 2k (Table 1).
	Theta int
}

// NewPlan builds the plan; lemma forbids the all-to-all (θ = 2k always: Lemma 1 and Theorem 1 as
// printed, reference/wrht.md A3). It needs p ≥ 1 and m ≥ 2.
func NewPlan(p, m, w int, lemma bool) Plan {
	pl := Plan{P: p, M: m}
	if p <= 1 {
		return pl
	}
	pl.K = CeilLog(p, m)
	den := 1
	for i := 0; i < pl.K-1; i++ {
		den *= m
	}
	pl.MStar = (p + den - 1) / den
	pl.A2A = (pl.MStar*pl.MStar + 7) / 8
	pl.AllToAll = !lemma && pl.MStar > 1 && pl.A2A <= w
	pl.Theta = 2 * pl.K
	if pl.AllToAll {
		pl.Theta--
	}
	return pl
}

// Reps is the number of representatives after l gather levels: ⌈p/m^l⌉.
func (pl Plan) Reps(l int) int {
	r := pl.P
	for i := 0; i < l; i++ {
		r = (r + pl.M - 1) / pl.M
	}
	return r
}

// members lists the representatives after l levels (level 0: every member): the middle member
// ⌊size/2⌋ of each run of m consecutive representatives of the level below, the last run
// possibly shorter.
func (pl Plan) members(l int, dst []int32) []int32 {
	dst = dst[:0]
	for i := 0; i < pl.P; i++ {
		dst = append(dst, int32(i))
	}
	for ; l > 0; l-- {
		k := 0
		for lo := 0; lo < len(dst); lo += pl.M {
			hi := min(lo+pl.M, len(dst))
			dst[k] = dst[lo+(hi-lo)/2]
			k++
		}
		dst = dst[:k]
	}
	return dst
}

// gather is level l's lightpaths (l ≥ 1): every representative of level l−1 sends to the middle
// of its run of m, the left ones clockwise and the right ones counter-clockwise (the shorter
// way), each on its own wavelength: ⌊m/2⌋ per fibre (WRHT §4.1.2, reference/wrht.md A1). down
// reverses them (the broadcast).
func (pl Plan) gather(l int, down bool, scratch []int32, dst []Lightpath) []Lightpath {
	reps := pl.members(l-1, scratch)
	for lo := 0; lo < len(reps); lo += pl.M {
		hi := min(lo+pl.M, len(reps))
		mid := reps[lo+(hi-lo)/2]
		for _, r := range reps[lo:hi] {
			if r == mid {
				continue
			}
			if down {
				dst = append(dst, Lightpath{Src: mid, Dst: r})
			} else {
				dst = append(dst, Lightpath{Src: r, Dst: mid})
			}
		}
	}
	return dst
}

// allToAll is the last reduce step's lightpaths: every one of the m* representatives sends its
// partial sum to every other, the shorter way round.
func (pl Plan) allToAll(scratch []int32, dst []Lightpath) []Lightpath {
	reps := pl.members(pl.K-1, scratch)
	for _, a := range reps {
		for _, b := range reps {
			if a != b {
				dst = append(dst, Lightpath{Src: a, Dst: b})
			}
		}
	}
	return dst
}

// WRHT is the wavelength-reused hierarchical tree (Dai et al., ICPP 2023): every step moves the
// whole buffer S, so it takes few steps and pays the reconfiguration few times.
//
//	all-reduce  gather levels 1…k−1, then the all-to-all of the m* representatives, then the
//	            broadcast levels k−1…1 (2k−1 steps); without the all-to-all, gather levels 1…k and
//	            broadcast k…1 (2k steps)
//	reduce      gather levels 1…k
//	broadcast   broadcast levels k…1
type WRHT struct{}

func (WRHT) Name() string { return "wrht" }
func (WRHT) Summary() string {
	return "wdmring: wavelength-reused hierarchical tree (WRHT §4): groups of m send to their middle node on distinct wavelengths"
}
func (WRHT) Implements(op network.Op) bool {
	return op == network.AllReduce || op == network.Reduce || op == network.Broadcast
}

func (WRHT) steps(m *model, op network.Op, s units.Bytes, p int, out *[]ringStep) (string, error) {
	pl, err := m.cfg.plan(p)
	if err != nil {
		return "", err
	}
	gather := func(l int) {
		fan := min(pl.M, pl.Reps(l-1))
		*out = append(*out, ringStep{key: stepKey{kind: kGather, level: int32(l), size: int32(pl.M)}, bytes: s, fanIn: fan, reduce: s})
	}
	bcast := func(l int) {
		*out = append(*out, ringStep{key: stepKey{kind: kBcast, level: int32(l), size: int32(pl.M)}, bytes: s})
	}
	switch op {
	case network.AllReduce:
		top := pl.K
		if pl.AllToAll {
			top--
		}
		for l := 1; l <= top; l++ {
			gather(l)
		}
		if pl.AllToAll {
			*out = append(*out, ringStep{key: stepKey{kind: kAllToAll, level: int32(pl.K), size: int32(pl.M)}, bytes: s, fanIn: pl.MStar, reduce: s})
		}
		for l := top; l >= 1; l-- {
			bcast(l)
		}
	case network.Reduce:
		for l := 1; l <= pl.K; l++ {
			gather(l)
		}
	case network.Broadcast:
		for l := pl.K; l >= 1; l-- {
			bcast(l)
		}
	}
	return "wrht", nil
}

// groupSize is WRHT's m for this configuration: group, or 2w+1 when 0, capped by max_group (the
// insertion-loss bound, which depends on the group's members, applies in plan).
func (c *Config) groupSize() int {
	m := c.Group
	if m == 0 {
		m = 2*c.Wavelengths + 1
	}
	if c.MaxGroup > 0 {
		m = min(m, c.MaxGroup)
	}
	return m
}

// MaxLength is Eq. 7's longest lightpath, in interfaces passed, of WRHT with groups of m on p
// members: ⌊m/2⌋ when one level suffices, else m·m^(k−2) = m^(k−1) for k = ⌈log_m p⌉ (the log
// read as ⌈·⌉, reference/wrht.md A4): the top level's span.
func MaxLength(p, m int) int {
	k := CeilLog(p, m)
	if k <= 1 {
		return m / 2
	}
	l := 1
	for i := 0; i < k-1; i++ {
		l *= m
	}
	return l
}

// lossOK reports whether the longest lightpath l (interfaces passed) keeps Eqs. 8–9's
// insertion-loss budget, L_l + P_p ≤ P_laser with L_l = P_m + l·P_pass.
func (c *Config) lossOK(l int) bool {
	return c.PassLossDb <= 0 || c.ModulatorDb+float64(l)*c.PassLossDb+c.PenaltyDb <= c.LaserDbm
}

// BER is Eq. 13's bit-error rate after the longest lightpath l: BER = ½·e^(−SNR/4) with Eq. 11's
// SNR = P_S / (P_N + P_O), the signal P_S = P_laser − L_l (Eq. 8's loss, dBm → mW) and Eq. 12's
// worst-case crosstalk P_N = l·P_Rx + P_Tx (powers in mW). snr_scale db puts 10·log10 of it in
// Eq. 13 instead, as Eq. 11 prints it (A5).
func (c *Config) BER(l int) float64 {
	mw := units.FromDecibels // dBm → mW
	signal := mw(c.LaserDbm - c.ModulatorDb - float64(l)*c.PassLossDb)
	snr := signal / (float64(l)*mw(c.XtalkRxDbm) + mw(c.XtalkTxDbm) + mw(c.NoiseDbm))
	if c.SNRScale == snrDB {
		snr = units.Decibels(snr)
	}
	return 0.5 * math.Exp(-snr/4)
}

// berOK reports whether the longest lightpath l keeps the BER below ber_max (always, when 0).
func (c *Config) berOK(l int) bool { return c.BERMax <= 0 || c.BER(l) < c.BERMax }

// boundedGroup is the largest group m′ ≤ m whose longest lightpath (Eq. 7) for p members keeps
// the insertion-loss budget (Eqs. 8–9, pass_loss_db > 0) and the crosstalk bound (Eqs. 11–13,
// ber_max > 0) (0: none does).
func (c *Config) boundedGroup(p, m int) int {
	for ; m >= 2; m-- {
		if l := MaxLength(p, m); c.lossOK(l) && c.berOK(l) {
			return m
		}
	}
	return 0
}

// plan is WRHT's plan for p members; a usage error when the group needs more wavelengths than
// the fibre has, an infeasible one when no group keeps the insertion-loss or crosstalk bound.
func (c *Config) plan(p int) (Plan, error) {
	m := c.groupSize()
	if (c.PassLossDb > 0 || c.BERMax > 0) && m >= 2 {
		lim := c.boundedGroup(p, m)
		if lim == 0 {
			l := MaxLength(p, 2)
			if !c.lossOK(l) {
				return Plan{}, errs.Infeasible(fmt.Sprintf("P_m %g + L_max %d × P_pass %g + P_p %g dB > P_laser %g dBm even for groups of 2", c.ModulatorDb, l, c.PassLossDb, c.PenaltyDb, c.LaserDbm),
					"wdmring: no WRHT group of %d members keeps the insertion-loss budget (WRHT Eqs. 7–9)", p)
			}
			return Plan{}, errs.Infeasible(fmt.Sprintf("BER %.3g ≥ ber_max %g after L_max %d interfaces even for groups of 2", c.BER(l), c.BERMax, l),
				"wdmring: no WRHT group of %d members keeps the crosstalk bound (WRHT Eqs. 11–13)", p)
		}
		m = lim
	}
	if m < 2 {
		return Plan{}, errs.Usage("wdmring: group %d must be ≥ 2 (0: 2w+1)", m)
	}
	if m/2 > c.Wavelengths {
		return Plan{}, errs.Usage("wdmring: a group of m = %d needs ⌊m/2⌋ = %d wavelengths, the fibre has %d; say group ≤ 2w+1 = %d", m, m/2, c.Wavelengths, 2*c.Wavelengths+1)
	}
	return NewPlan(p, m, c.Wavelengths, c.StepRule == ruleLemma), nil
}

var _ collective.Algorithm = WRHT{}
