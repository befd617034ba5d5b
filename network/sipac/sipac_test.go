package sipac

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
)

// sipacModel builds SiPAC r^l at a per-CU bandwidth, no reduction compute (the paper prices none).
func sipacModel(t testing.TB, r, l int, nodeGbit float64, strategy string, set func(*Config)) network.Model {
	t.Helper()
	c := DefaultConfig()
	c.Radix, c.Levels, c.NodeTbps, c.Strategy = r, l, nodeGbit/1000, strategy
	if set != nil {
		set(c)
	}
	m, err := Spec().New(c, network.Env{GPUs: pow(r, l)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logical is Table II's logical topology for Ring, Mesh and H-Ring (Logical).
func logical(t testing.TB, p, k int, gbit, alphaUs float64, strategy string) network.Model {
	t.Helper()
	m, err := Logical(p, k, gbit, alphaUs, strategy)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func price(t testing.TB, m network.Model, op network.Op, bytes float64, p int) network.Cost {
	t.Helper()
	cost, err := m.Price(network.Collective{Op: op, Bytes: units.Bytes(bytes), Group: network.Group{Size: p, Stride: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return cost
}

func near(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// TestTableII prices the four all-reduces of SiPAC Table II by their schedules at the Fig. 7
// constants (α = 1 µs, 512 Gb/s, n = 10^8 B, no reduction compute) against the closed forms
// evaluated by hand in reference/sipac.md §2.6 (r = k = √p, L = 2; p = 4096: r = 16, L = 3).
// SiPCO runs on SiPAC with B = 512 Gb/s per link (per-CU L·512: Table II gives SiPCO L ports,
// §2.5(1)); the others on the logical one-port topology.
func TestTableII(t *testing.T) {
	rows := []struct {
		p, r, l                    int
		ring, mesh, hring, sipcoMs float64
	}{
		{16, 4, 2, 2.9597, 2.9317, 7.0492, 1.7608},
		{64, 8, 2, 3.2022, 3.0782, 8.2451, 2.0538},
		{256, 16, 2, 3.6228, 3.1148, 8.8791, 2.2003},
		{1024, 32, 2, 5.1679, 3.1239, 9.2680, 2.2735},
		{4096, 16, 3, 11.3142, 3.1262, 56.2341, 1.9571},
	}
	for _, row := range rows {
		for _, c := range []struct {
			name string
			m    network.Model
			want float64
		}{
			{"ring", logical(t, row.p, row.r, 512, 1, "ring"), row.ring},
			{"mesh", logical(t, row.p, row.r, 512, 1, "mesh"), row.mesh},
			{"hring", logical(t, row.p, row.r, 512, 1, "hring"), row.hring},
			{"sipco", sipacModel(t, row.r, row.l, 512*float64(row.l), "sipco", nil), row.sipcoMs},
		} {
			got := float64(price(t, c.m, network.AllReduce, 1e8, row.p).Total) * 1e3
			if !near(got, c.want, 1e-4) {
				t.Errorf("p=%d %s: %.5f ms, Table II gives %.4f", row.p, c.name, got, c.want)
			}
		}
	}
	// The message sweep at p = 1024 (r = k = 32, L = 2), §2.6: Ring, Mesh, H-Ring, SiPCO (ms).
	for _, row := range []struct{ n, ring, mesh, hring, sipco float64 }{
		{100, 2.046, 0.002003, 0.18601, 0.003002},
		{1e4, 2.04631, 0.002312, 0.18691, 0.003227},
		{1e6, 2.07722, 0.03322, 0.27682, 0.02571},
		{1e9, 33.2655, 31.2215, 91.0063, 22.7081},
	} {
		for _, c := range []struct {
			strat string
			want  float64
		}{{"ring", row.ring}, {"mesh", row.mesh}, {"hring", row.hring}, {"sipco", row.sipco}} {
			var m network.Model
			if c.strat == "sipco" {
				m = sipacModel(t, 32, 2, 1024, "sipco", nil)
			} else {
				m = logical(t, 1024, 32, 512, 1, c.strat)
			}
			if got := float64(price(t, m, network.AllReduce, row.n, 1024).Total) * 1e3; !near(got, c.want, 5e-4) {
				t.Errorf("n=%g %s: %.6f ms, Table II gives %.6g", row.n, c.strat, got, c.want)
			}
		}
	}
	// SiPAC(r = 2, L = 2), the testbed's size: 3 µs + 0.75 · 1.5625 ms (§2.6).
	if got := float64(price(t, sipacModel(t, 2, 2, 1024, "sipco", nil), network.AllReduce, 1e8, 4).Total); !near(got, 1.174875e-3, 1e-9) {
		t.Errorf("SiPAC(2,2) SiPCO %.9g s, want 1.174875 ms", got)
	}
}

// TestSiPCOL1IsMesh: "when L = 1 … this algorithm reduces to the mesh-based all-reduce" (§V-A).
func TestSiPCOL1IsMesh(t *testing.T) {
	for _, r := range []int{2, 5, 16} {
		a := price(t, sipacModel(t, r, 1, 512, "sipco", nil), network.AllReduce, 1e8, r)
		b := price(t, sipacModel(t, r, 1, 512, "mesh", nil), network.AllReduce, 1e8, r)
		want := 2e-6 + 2*float64(r-1)/float64(r)*1e8*8/512e9 // Table II's mesh row
		if !near(float64(a.Total), float64(b.Total), 1e-12) || !near(float64(a.Total), want, 1e-12) || a.Steps != 2 {
			t.Errorf("r=%d: sipco %v in %d steps, mesh %v, Table II %v", r, a.Total, a.Steps, b.Total, want)
		}
	}
}

// TestAccounting: the physical reading gives each pair b = B/r, r/(r−1) × the paper's bandwidth
// term (reference/sipac.md §2.5(2)).
func TestAccounting(t *testing.T) {
	paper := price(t, sipacModel(t, 8, 3, 2048, "sipco", nil), network.AllReduce, 1e8, 512)
	phys := price(t, sipacModel(t, 8, 3, 2048, "sipco", func(c *Config) { c.Accounting = AccountPhysical }), network.AllReduce, 1e8, 512)
	if !near(float64(phys.H2T), float64(paper.H2T)*8/7, 1e-9) || !near(float64(phys.H2H), float64(paper.H2H), 1e-12) {
		t.Errorf("physical h2t %v, paper %v × 8/7 = %v", phys.H2T, paper.H2T, paper.H2T*8/7)
	}
	// Wavelengths: B = w·u. 64 λ × 16 Gb/s = 1,024 Gb/s per link, L = 2: the same as 2.048 Tb/s per CU.
	w := price(t, sipacModel(t, 8, 2, 0, "sipco", func(c *Config) { c.Lambdas, c.LambdaGbit = 64, 16 }), network.AllReduce, 1e8, 64)
	n := price(t, sipacModel(t, 8, 2, 2048, "sipco", nil), network.AllReduce, 1e8, 64)
	if !near(float64(w.Total), float64(n.Total), 1e-12) {
		t.Errorf("64 λ × 16 Gb/s: %v, 2.048 Tb/s per CU over 2 links: %v", w.Total, n.Total)
	}
}

// TestDerived checks the derived collectives against their closed forms (reference/sipac.md §2.7,
// not from the paper), paper accounting: RS and AG j·α + (p−1)/(pj)·S·β, all-to-all
// j·α + (r−1)/r·S·β, RS+AG the sum, broadcast and reduce j·α + (r−1)·S·β.
func TestDerived(t *testing.T) {
	const S, alpha = 1e8, 1e-6
	for _, c := range []struct{ r, l int }{{8, 3}, {4, 2}, {3, 3}, {16, 1}} {
		p, beta := pow(c.r, c.l), float64(c.l)*8/2048e9
		j, rf, pf := float64(c.l), float64(c.r), float64(p)
		half := j*alpha + (pf-1)/(pf*j)*S*beta
		for _, w := range []struct {
			op    network.Op
			strat string
			want  float64
		}{
			{network.ReduceScatter, "sipco", half},
			{network.AllGather, "sipco", half},
			{network.AllReduce, "sipco-rsag", 2 * half},
			{network.AllToAll, "sipco", j*alpha + (rf-1)/rf*S*beta},
			{network.Broadcast, "sipco", j*alpha + (rf-1)*S*beta},
			{network.Reduce, "sipco", j*alpha + (rf-1)*S*beta},
		} {
			m := sipacModel(t, c.r, c.l, 2048, w.strat, nil)
			if got := price(t, m, w.op, S, p); !near(float64(got.Total), w.want, 1e-9) {
				t.Errorf("r=%d L=%d %s %s: %v, closed form %v", c.r, c.l, w.op, w.strat, got.Total, w.want)
			}
		}
	}
}

// TestStructure: the default r and L for a job of p CUs (the smallest L ≤ 3 with a whole
// r ≤ 32, §VI-A-1's limits; §III-A's published sizes, r = 16 → 256 and 4,096 CUs, are the rows
// sipac/size-* of internal/repro), the closed forms L(r−1) one-hop neighbours and diameter L
// (§III-A), and Fig. 9's counts by hand.
func TestStructure(t *testing.T) {
	c := DefaultConfig()
	for _, s := range []struct{ p, r, l int }{{256, 16, 2}, {4096, 16, 3}, {512, 8, 3}, {64, 8, 2}, {1024, 32, 2}, {16, 16, 1}} {
		if r, l, err := c.Size(s.p); err != nil || r != s.r || l != s.l {
			t.Errorf("p=%d: r=%d L=%d (%v), want r=%d L=%d", s.p, r, l, err, s.r, s.l)
		}
	}
	for _, s := range []struct{ r, l, wss, links int }{{8, 3, 192, 1536}, {8, 2, 16, 128}, {16, 2, 32, 512}} {
		g, err := c.Graph(s.r, s.l)
		if err != nil {
			t.Fatal(err)
		}
		p := pow(s.r, s.l)
		if sw := g.Nodes() - p; sw != s.wss {
			t.Errorf("r=%d L=%d: %d WSSs, want %d", s.r, s.l, sw, s.wss)
		}
		if n := g.Physical() / 2; n != s.links {
			t.Errorf("r=%d L=%d: %d CU–WSS links, want %d", s.r, s.l, n, s.links)
		}
		// One-hop neighbours L(r−1) and diameter L: CU 0's distances (2 links per hop).
		ones, diam := 0, int32(0)
		for x := int32(1); int(x) < p; x++ {
			d := g.Distance(0, x)
			if d == 2 {
				ones++
			}
			diam = max(diam, d/2)
		}
		if ones != s.l*(s.r-1) || int(diam) != s.l {
			t.Errorf("r=%d L=%d: %d one-hop neighbours, diameter %d; want %d and %d", s.r, s.l, ones, diam, s.l*(s.r-1), s.l)
		}
		checkDistances(t, g)
	}
	// Fig. 9's counts at p = 512 (r = 8, L = 3): 192 WSSs, 1,536 links and transceivers; the
	// electronic BCube a transceiver at both ends, 3,072.
	for _, f := range []struct {
		fabric string
		trx    int
	}{{FabricSiPAC, 1536}, {FabricBCube, 3072}} {
		cfg := DefaultConfig()
		cfg.Fabric = f.fabric
		inv, err := cfg.Inventory(512)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Items[0].Count != 192 || inv.Items[1].Count != 1536 || inv.Items[2].Count != f.trx {
			t.Errorf("%s 512: %+v; want 192 switches, 1,536 links, %d transceivers", f.fabric, inv.Items, f.trx)
		}
	}
	ph := DefaultConfig()
	ph.Accounting = AccountPhysical
	g, err := ph.Graph(4, 3)
	if err != nil {
		t.Fatal(err)
	}
	if g.Nodes() != 64 || g.Physical() != 64*3*3 {
		t.Errorf("physical 4^3: %d nodes, %d links; want 64 CUs and 576 wavelength groups", g.Nodes(), g.Physical())
	}
	checkDistances(t, g)
}

// checkDistances compares the closed-form distances with the exact search from every node.
func checkDistances(t *testing.T, g *fabric.Graph) {
	t.Helper()
	if err := fabric.CheckDistances(g); err != nil {
		t.Fatal(err)
	}
}

// TestGrayRing: every ring neighbour one digit (one WSS hop) away, the wrap-around too for even r.
func TestGrayRing(t *testing.T) {
	for _, c := range []struct{ r, j int }{{2, 3}, {4, 3}, {8, 2}, {3, 2}, {16, 3}} {
		next := collective.GrayNext(slices.Repeat([]int{c.r}, c.j)...)
		seen := map[int32]bool{}
		x := int32(0)
		for range next {
			if seen[x] {
				t.Fatalf("r=%d j=%d: the ring revisits %d", c.r, c.j, x)
			}
			seen[x] = true
			y := next[x]
			d := (&dist{r: int32(c.r), l: int32(c.j)}).ham(x, y, -1)
			if d != 1 && !(c.r%2 == 1 && y == 0) {
				t.Errorf("r=%d j=%d: %d → %d differ in %d digits", c.r, c.j, x, y, d)
			}
			x = y
		}
		if x != 0 || len(seen) != len(next) {
			t.Errorf("r=%d j=%d: not one cycle through all %d", c.r, c.j, len(next))
		}
	}
}

// members is a flat group for calling an algorithm's rounds directly.
type members int

func (m members) P() int                                         { return int(m) }
func (members) Layout() collective.Layout                        { return collective.Layout{} }
func (members) Link(collective.Pattern) (collective.Link, error) { return collective.Link{}, nil }
func (members) Grid() (*collective.Grid, error)                  { return nil, errors.New("no grid") }

// sipcoRun executes Algorithm 1 on the flows SiPCO(r) emits for r^L members. The test decides
// which chunk a flow carries from the paper's text (§V-A; reference/sipac.md §2.4): step 0 on
// level l sends the receiver's chunk (l, own) and it reduces; steps 1 … L−1 on level l multicast
// the sender's partial chunk of group (s + l) mod L, which the receiver shares and reduces;
// step L on level l multicasts the sender's reduced chunk (l, own). own(x, g) = (x_g + off) mod
// r (off = 1 is Table III's labelling). Each state is a set of contributors per chunk (bit masks)
// and, in parallel, a real tensor. It checks the flows' sizes and counts on the way.
func sipcoRun(t *testing.T, r, l, off int, each func(step int, masks [][]uint64)) {
	t.Helper()
	p := pow(r, l)
	const chunkLen = 3
	n := r * l * chunkLen
	var flows collective.Flows
	if err := SiPCO(r).Rounds(network.AllReduce, units.Bytes(n), members(p), &flows); err != nil {
		t.Fatal(err)
	}
	digit := func(x, g int) int { return (x / pow(r, g)) % r }
	own := func(x, g int) int { return (digit(x, g) + off) % r }
	idx := func(g, c int) int { return g*r + c }
	rng := rand.New(rand.NewPCG(uint64(r), uint64(l)))
	bufs := make([]*tensor.Dense, p)
	want := tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float64))
	masks := make([][]uint64, p) // per CU and chunk: contributors (p ≤ 64 for the masks)
	for x := range bufs {
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(rng.IntN(1000))
		}
		bufs[x] = tensor.New(tensor.WithShape(n), tensor.WithBacking(data))
		sum, _ := tensor.Add(want, bufs[x])
		want = sum.(*tensor.Dense)
		masks[x] = make([]uint64, r*l)
		for c := range masks[x] {
			masks[x][c] = 1 << uint(x%64)
		}
	}
	chunk := func(b *tensor.Dense, c int) *tensor.Dense {
		v, err := b.Slice(tensor.S(c*chunkLen, (c+1)*chunkLen))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense)
	}
	step := 0
	for _, rd := range flows.Rounds {
		for range max(1, rd.Repeat) {
			if rd.Bytes != units.Bytes(chunkLen) {
				t.Fatalf("step %d: %v per flow, want one chunk n/(rL) = %d", step, rd.Bytes, chunkLen)
			}
			snap := make([]*tensor.Dense, p)
			snapM := make([][]uint64, p)
			for x := range bufs {
				snap[x] = bufs[x].Clone().(*tensor.Dense)
				snapM[x] = append([]uint64(nil), masks[x]...)
			}
			perLink := map[[2]int]int{}
			for k := 0; k < rd.Pattern.N; k++ {
				part := rd.Pattern.Parts[k]
				lv := 0
				for s := 1; s < int(part.Stride); s *= r {
					lv++
				}
				part.Each(p, func(src, dst int, _ float64) {
					perLink[[2]int{src, lv}]++
					var g, c int
					switch {
					case step == 0:
						g, c = lv, own(dst, lv)
					case step < l:
						g = (step + lv) % l
						c = own(src, g)
						if own(dst, g) != c {
							t.Fatalf("step %d level %d: %d multicasts chunk (%d,%d) to %d, which holds (%d,%d)", step, lv, src, g, c, dst, g, own(dst, g))
						}
					default:
						g, c = lv, own(src, lv)
					}
					i := idx(g, c)
					if step < l { // reduce
						sum, err := tensor.Add(chunk(bufs[dst], i), chunk(snap[src], i))
						if err != nil {
							t.Fatal(err)
						}
						_ = tensor.Copy(chunk(bufs[dst], i), sum)
						if masks[dst][i]&snapM[src][i] != 0 {
							t.Fatalf("step %d: chunk %d of %d counted twice at %d", step, i, src, dst)
						}
						masks[dst][i] |= snapM[src][i]
					} else {
						_ = tensor.Copy(chunk(bufs[dst], i), chunk(snap[src], i))
						masks[dst][i] = snapM[src][i]
					}
				})
			}
			for key, f := range perLink {
				if f != r-1 {
					t.Fatalf("step %d: CU %d sends %d flows on level %d, want r−1 = %d", step, key[0], f, key[1], r-1)
				}
			}
			if len(perLink) != p*l {
				t.Fatalf("step %d: %d of the %d links busy", step, len(perLink), p*l)
			}
			if each != nil {
				each(step, masks)
			}
			step++
		}
	}
	if step != l+1 {
		t.Fatalf("r=%d L=%d: %d steps, want L+1 = %d", r, l, step, l+1)
	}
	for x := range bufs {
		for i, v := range bufs[x].Data().([]float64) {
			if v != want.Data().([]float64)[i] {
				t.Fatalf("r=%d L=%d: CU %d element %d = %g, want the sum %g", r, l, x, i, v, want.Data().([]float64)[i])
			}
		}
	}
}

// TestSiPCORealTensors: Algorithm 1 on its own flows is a correct all-reduce for the (r, L)
// the reference's script checked (reference/sipac.md §2.4).
func TestSiPCORealTensors(t *testing.T) {
	for _, c := range []struct{ r, l int }{{2, 1}, {2, 2}, {3, 2}, {2, 3}, {3, 3}, {4, 3}, {8, 2}} {
		t.Run(fmt.Sprintf("r%d_L%d", c.r, c.l), func(t *testing.T) { sipcoRun(t, c.r, c.l, 0, nil) })
	}
}

// TestTableIII replays SiPAC Table III (r = 2, L = 2; A, B, C, D = CUs 0–3, level 0 pairs A–B
// and C–D, level 1 A–C and B–D) step by step: who holds which partial sum of chunks 0–3.
func TestTableIII(t *testing.T) {
	// Table III, each CU's four chunks as the CUs summed in them ("AB" = A_i + B_i).
	want := [][4]string{
		{"A", "AB", "A", "AC"}, {"AB", "B", "B", "BD"}, {"C", "CD", "AC", "C"}, {"CD", "D", "BD", "D"}, // (b) step 0
		{"A", "ABCD", "A", "ABCD"}, {"ABCD", "B", "B", "ABCD"}, {"C", "ABCD", "ABCD", "C"}, {"ABCD", "D", "ABCD", "D"}, // (c) step 1
		{"ABCD", "ABCD", "ABCD", "ABCD"}, {"ABCD", "ABCD", "ABCD", "ABCD"}, {"ABCD", "ABCD", "ABCD", "ABCD"}, {"ABCD", "ABCD", "ABCD", "ABCD"}, // (d)
	}
	name := func(m uint64) string {
		var b strings.Builder
		for x := 0; x < 4; x++ {
			if m&(1<<x) != 0 {
				b.WriteByte("ABCD"[x])
			}
		}
		return b.String()
	}
	sipcoRun(t, 2, 2, 1, func(step int, masks [][]uint64) {
		for x := 0; x < 4; x++ {
			for c := 0; c < 4; c++ {
				// Table III lists only the chunks a CU keeps for later steps; the others are its own.
				if got, w := name(masks[x][c]), want[4*step+x][c]; got != w {
					t.Errorf("step %d CU %c chunk %d holds %s, Table III %s", step, "ABCD"[x], c, got, w)
				}
			}
		}
	})
}

// TestBadInput: one line, exit 2, naming the value and what would be valid.
func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		gpus int
		want []string
	}{
		{func(c *Config) {}, 1001, []string{"1001", "1000 = 10^3", "1024 = 32^2"}},
		{func(c *Config) { c.Radix = 8 }, 1000, []string{"1000", "512 = 8^3", "4096 = 8^4"}},
		{func(c *Config) { c.Levels = 2 }, 1000, []string{"1000", "961 = 31^2", "1024 = 32^2"}},
		{func(c *Config) { c.Radix, c.Levels = 8, 2 }, 512, []string{"512", "64 CUs"}},
		{func(c *Config) { c.Radix = 1 }, 64, []string{"r 1", "2 to 128"}},
		{func(c *Config) { c.Levels = -1 }, 64, []string{"levels -1"}},
		{func(c *Config) { c.Radix, c.Lambdas, c.LambdaGbit = 8, 20, 10 }, 64, []string{"wavelengths 20", "multiple of r = 8", "16"}},
		{func(c *Config) { c.Lambdas, c.LambdaGbit = 20, 10 }, 64, []string{"wavelengths 20", "multiple of r = 8", "16"}},
		{func(c *Config) { c.Accounting = "exact" }, 64, []string{"exact", "paper", "physical"}},
		{func(c *Config) { c.Strategy = "wrht" }, 64, []string{"wrht", "sipco"}},
	} {
		cfg := DefaultConfig()
		c.set(cfg)
		_, err := Spec().New(cfg, network.Env{GPUs: c.gpus})
		if err == nil {
			t.Errorf("%+v: accepted", cfg)
			continue
		}
		if errs.ExitCode(err) != 2 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: exit %d, want one line and exit 2", err, errs.ExitCode(err))
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q does not name %q", err, w)
			}
		}
	}
}

// TestSymmetricRouting: rounds routed towards the one representative under the digit-wise
// translations price as the same rounds routed flow by flow on the graph without its symmetry.
func TestSymmetricRouting(t *testing.T) {
	for _, acc := range accountings {
		c := DefaultConfig()
		c.Accounting = acc
		g, err := c.Graph(4, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, strat := range []string{"sipco", "sipco-rsag", "mesh", "linear"} {
			algs := algorithms(4)
			choice, _ := collective.ParseFor(strat, algs)
			opt := fabric.Options{Name: Name, Choice: choice, Offer: func(network.Op) []collective.Algorithm { return algs }}
			sym, _ := fabric.NewModel(g, network.Env{GPUs: 64}, opt)
			flat, _ := fabric.NewModel(fabric.WithoutSymmetry(g), network.Env{GPUs: 64}, opt)
			op := network.AllReduce
			if strat == "linear" {
				op = network.AllToAll
			}
			a, b := price(t, sym, op, 1e8, 64), price(t, flat, op, 1e8, 64)
			if !near(float64(a.Total), float64(b.Total), 1e-12) || a.Total <= 0 {
				t.Errorf("%s %s: %v by the symmetry, %v flow by flow", acc, strat, a.Total, b.Total)
			}
		}
	}
}

// derivedRun executes a derived collective (reference/sipac.md §2.7) with real tensors on the
// rounds SiPCO(r) emits for r^L members: the message in L slices, slice i moved along levels
// i, i+1, … (mod L), one level per step, so every level carries one slice per step. What each
// CU sends is decided here from §2.7's text, per op; the test checks that every flow has the
// round's size, runs on a level the round's pattern covers, that no CU sends more than r − 1
// flows on a level in a step, that there are L steps, and that the result is the collective's.
// u elements per block; a slice is p blocks (n = L·p·u elements; for all-to-all, the block for
// one destination is L·u, one u per slice).
func derivedRun(t *testing.T, r, l int, op network.Op) {
	t.Helper()
	p := pow(r, l)
	const u = 2
	n := l * p * u
	var flows collective.Flows
	if err := SiPCO(r).Rounds(op, units.Bytes(n), members(p), &flows); err != nil {
		t.Fatal(err)
	}
	digit := func(x, k int) int { return (x / pow(r, k)) % r }
	setDigit := func(x, k, v int) int { return x + (v-digit(x, k))*pow(r, k) }
	rng := rand.New(rand.NewPCG(uint64(r), uint64(l)*uint64(op+1)))
	const root = 1 // a root that is not CU 0
	in := make([]*tensor.Dense, p)
	for x := range in {
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(rng.IntN(1000))
		}
		in[x] = tensor.New(tensor.WithShape(n), tensor.WithBacking(data))
	}
	buf := make([]*tensor.Dense, p)
	for x := range buf {
		buf[x] = in[x].Clone().(*tensor.Dense)
	}
	// block (slice i, index b): u elements at (i·p + b)·u.
	block := func(d *tensor.Dense, i, b int) *tensor.Dense {
		v, err := d.Slice(tensor.S((i*p+b)*u, (i*p+b+1)*u))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*tensor.Dense)
	}
	add := func(dst, src *tensor.Dense) {
		sum, err := tensor.Add(dst, src)
		if err != nil {
			t.Fatal(err)
		}
		_ = tensor.Copy(dst, sum)
	}
	// processed reports whether level k is among the first s levels of slice i's order.
	processed := func(i, s, k int) bool { return (k-i+l)%l < s }
	// For the all-to-all, where item (origin o, destination t, slice i) is: its digits on the
	// processed levels are t's, the others o's; block index b = o·… is kept as (o, t) → item.
	at := func(o, dst, i, s int) int {
		x := o
		for k := range l {
			if processed(i, s, k) {
				x = setDigit(x, k, digit(dst, k))
			}
		}
		return x
	}
	// a2a data: CU o's block for destination t, slice i, is block (i, t) of in[o]; it ends as
	// block (i, o) of out[t].
	out := make([]*tensor.Dense, p)
	for x := range out {
		out[x] = tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float64))
	}
	steps := 0
	for _, rd := range flows.Rounds {
		for range max(1, rd.Repeat) {
			s := steps
			covered := map[int]bool{} // levels the round's pattern covers
			for k := 0; k < rd.Pattern.N; k++ {
				lv := 0
				for st := 1; st < int(rd.Pattern.Parts[k].Stride); st *= r {
					lv++
				}
				covered[lv] = true
			}
			snap := make([]*tensor.Dense, p)
			for x := range buf {
				snap[x] = buf[x].Clone().(*tensor.Dense)
			}
			sends := map[[2]int]int{} // (CU, level) → flows
			for i := range l {
				d := (i + s) % l
				if op == network.Reduce {
					d = (i + l - 1 - s) % l // the broadcast's order backwards
				}
				if !covered[d] {
					t.Fatalf("%s step %d: slice %d on level %d, which the round does not use", op, s, i, d)
				}
				for x := range p {
					for v := range r {
						if v == digit(x, d) {
							continue
						}
						y := setDigit(x, d, v)
						var moved int // elements x sends y
						switch op {
						case network.ReduceScatter: // blocks b matching x on the processed levels, b_d = v
							for b := range p {
								ok := digit(b, d) == v
								for k := range l {
									ok = ok && (!processed(i, s, k) || digit(b, k) == digit(x, k))
								}
								if ok {
									add(block(buf[y], i, b), block(snap[x], i, b))
									moved += u
								}
							}
						case network.AllGather: // the blocks x holds: b matching x off the processed levels
							for b := range p {
								ok := true
								for k := range l {
									ok = ok && (processed(i, s, k) || digit(b, k) == digit(x, k))
								}
								if ok {
									_ = tensor.Copy(block(buf[y], i, b), block(snap[x], i, b))
									moved += u
								}
							}
						case network.AllToAll: // the items at x bound for digit v on level d
							for o := range p {
								for dst := range p {
									if at(o, dst, i, s) == x && digit(dst, d) == v {
										moved += u
									}
								}
							}
						case network.Broadcast: // holders: x matching the root off the processed levels
							ok := true
							for k := range l {
								ok = ok && (processed(i, s, k) || digit(x, k) == digit(root, k))
							}
							if ok {
								for b := range p {
									_ = tensor.Copy(block(buf[y], i, b), block(snap[x], i, b))
								}
								moved = p * u
							}
						case network.Reduce: // x still holds a partial sum and y is towards the root
							ok := v == digit(root, d)
							for k := range l {
								// levels already reduced in slice i: the s after d in the backward order
								done := (i+l-1-k)%l < s
								ok = ok && (!done || digit(x, k) == digit(root, k))
							}
							if ok {
								for b := range p {
									add(block(buf[y], i, b), block(snap[x], i, b))
								}
								moved = p * u
							}
						}
						if moved == 0 {
							continue
						}
						if units.Bytes(moved) != rd.Bytes {
							t.Fatalf("%s r=%d L=%d step %d: %d → %d sends %d elements, the round %v", op, r, l, s, x, y, moved, rd.Bytes)
						}
						sends[[2]int{x, d}]++
					}
				}
			}
			for k, f := range sends {
				if f > r-1 {
					t.Fatalf("%s step %d: CU %d sends %d flows on level %d", op, s, k[0], f, k[1])
				}
			}
			steps++
		}
	}
	if steps != l {
		t.Fatalf("%s r=%d L=%d: %d steps, want L = %d", op, r, l, steps, l)
	}
	// The result: sums over the inputs, or the inputs moved.
	sum := func(i, b int) []float64 {
		acc := make([]float64, u)
		for x := range in {
			for e, v := range block(in[x], i, b).Data().([]float64) {
				acc[e] += v
			}
		}
		return acc
	}
	check := func(what string, got *tensor.Dense, want []float64) {
		for e, v := range got.Data().([]float64) {
			if v != want[e] {
				t.Fatalf("%s r=%d L=%d: %s element %d = %g, want %g", op, r, l, what, e, v, want[e])
			}
		}
	}
	for i := range l {
		for b := range p {
			switch op {
			case network.ReduceScatter:
				check(fmt.Sprintf("CU %d block (%d,%d)", b, i, b), block(buf[b], i, b), sum(i, b))
			case network.Reduce:
				check(fmt.Sprintf("root block (%d,%d)", i, b), block(buf[root], i, b), sum(i, b))
			case network.AllGather:
				for x := range p {
					check(fmt.Sprintf("CU %d block (%d,%d)", x, i, b), block(buf[x], i, b), block(in[b], i, b).Data().([]float64))
				}
			case network.Broadcast:
				for x := range p {
					check(fmt.Sprintf("CU %d block (%d,%d)", x, i, b), block(buf[x], i, b), block(in[root], i, b).Data().([]float64))
				}
			case network.AllToAll: // every item of slice i ends at its destination
				for o := range p {
					if at(o, b, i, l) != b {
						t.Fatalf("all-to-all r=%d L=%d: item (%d → %d, slice %d) ends at %d", r, l, o, b, i, at(o, b, i, l))
					}
				}
			}
		}
	}
}

// TestDerivedRealTensors: the derived collectives (reference/sipac.md §2.7) executed on their own
// rounds are correct for the (r, L) of the SiPCO check.
func TestDerivedRealTensors(t *testing.T) {
	for _, c := range []struct{ r, l int }{{2, 1}, {2, 2}, {3, 2}, {2, 3}, {3, 3}, {4, 3}, {8, 2}} {
		for _, op := range []network.Op{network.ReduceScatter, network.AllGather, network.AllToAll, network.Broadcast, network.Reduce} {
			t.Run(fmt.Sprintf("%s_r%d_L%d", op, c.r, c.l), func(t *testing.T) { derivedRun(t, c.r, c.l, op) })
		}
	}
}

// TestBCubeSpec: --net bcube is SiPAC's graph of packet switches: SiPCO at p = 64 (r = 8, L = 2)
// costs SiPAC's time plus switch_ns (120 ns) in each of its L + 1 = 3 one-hop steps, and the
// model and its counts carry the name bcube.
func TestBCubeSpec(t *testing.T) {
	col := network.Collective{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: 64, Stride: 1}}
	var got [2]network.Cost
	for i, spec := range []network.Spec{Spec(), BCubeSpec()} {
		c := spec.NewConfig().(*Config)
		c.Strategy = "sipco"
		m, err := spec.New(c, network.Env{GPUs: 64})
		if err != nil {
			t.Fatal(err)
		}
		if m.Name() != spec.Name {
			t.Errorf("%s: the model is named %q", spec.Name, m.Name())
		}
		if got[i], err = m.Price(col); err != nil {
			t.Fatal(err)
		}
	}
	if d := float64(got[1].Total - got[0].Total); !near(d, 3*120e-9, 1e-6) {
		t.Errorf("BCube − SiPAC = %g s, want 3 × 120 ns", d)
	}
	inv, err := BCubeSpec().NewConfig().(*Config).Inventory(512)
	if err != nil || inv.Network != "bcube" || inv.Items[2].Count != 3072 {
		t.Errorf("bcube counts: %+v, %v; want network bcube and 3,072 transceivers", inv, err)
	}
}
