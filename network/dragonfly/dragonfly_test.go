package dragonfly

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network/fabric"
)

// HammingMesh App. A-C: the small Dragonfly (a = 16, p = 8, h = 8, 8 groups, two virtual
// routers per 64-port switch) and the large one (a = 32, p = 17, h = 16, 30 groups): endpoints,
// switches and cables per plane (the appendix's counts). Table II's cost is a row of the
// reproduction table (internal/repro, hammingmesh/table2-cost-df-*).
func TestBill(t *testing.T) {
	for _, c := range []struct {
		name                          string
		a, p, h, g                    int
		endpoints, switches, dac, aoc int
	}{
		{"small", 16, 8, 8, 8, 1024, 64, 1920, 512},
		{"large", 32, 17, 16, 30, 16320, 960, 31200, 7680},
	} {
		cfg := DefaultConfig()
		cfg.A, cfg.P, cfg.H, cfg.Groups = c.a, c.p, c.h, c.g
		s, err := cfg.Structure()
		if err != nil {
			t.Fatal(err)
		}
		if s.Endpoints != c.endpoints || s.Bill.Switches != c.switches || s.Bill.DAC != c.dac || s.Bill.AoC != c.aoc {
			t.Errorf("%s: %d endpoints, %d switches, %d DAC, %d AoC; App. A-C %d, %d, %d, %d", c.name, s.Endpoints,
				s.Bill.Switches, s.Bill.DAC, s.Bill.AoC, c.endpoints, c.switches, c.dac, c.aoc)
		}
	}
}

// Every pair of groups gets ⌊a·h/(g−1)⌋ or one more global links, no router more than h.
func TestGlobals(t *testing.T) {
	cfg := DefaultConfig() // 8 groups, 128 global ports each: 18 or 19 links per pair
	per := map[[2]int]int{}
	used := map[int32]int{}
	for _, gl := range cfg.Globals() {
		gi, gj := int(gl[0])/cfg.A, int(gl[1])/cfg.A
		per[[2]int{gi, gj}]++
		used[gl[0]]++
		used[gl[1]]++
	}
	for pair, n := range per {
		if n < 128/7 || n > 128/7+1 {
			t.Errorf("groups %v: %d links", pair, n)
		}
	}
	if len(per) != 8*7/2 {
		t.Errorf("%d connected pairs, want 28", len(per))
	}
	for r, n := range used {
		if n > cfg.H {
			t.Errorf("router %d uses %d global ports of %d", r, n, cfg.H)
		}
	}
}

// The router table gives the exact distances. The longest minimal path of the large Dragonfly is
// 5 cables (endpoint, local, global, local, endpoint; Table II: 5): a router's 16 global links
// cannot reach all 29 other groups. In the small one every router's 8 links reach all 7 other
// groups, so 4 cables (endpoint, global, local, endpoint); Table II prints 3, the canonical
// Dragonfly's router-to-router diameter (local, global, local) — no cable count of this network
// gives 3 (reference/hammingmesh.md §3.5: "no derivation given"). A 5-group Dragonfly of 4
// routers with 2 global links each: 5.
func TestDistance(t *testing.T) {
	large := DefaultConfig()
	large.A, large.P, large.H, large.Groups = 32, 17, 16, 30
	for _, c := range []struct {
		cfg          *Config
		cables, hops int32
	}{{DefaultConfig(), 4, 2}, {large, 5, 3}, {&Config{A: 4, P: 2, H: 2, Groups: 5, Radix: 64, LinkGbit: 1600, CostPlanes: 16}, 5, 3}} {
		cfg := c.cfg
		if cfg.Routing == "" {
			cfg.Common, cfg.Prices = fabric.DefaultCommon(), DefaultConfig().Prices
		}
		s, err := cfg.Structure()
		if err != nil {
			t.Fatal(err)
		}
		if int32(s.Diameter) != c.cables {
			t.Errorf("a=%d: diameter %d cables, want %d", cfg.A, s.Diameter, c.cables)
		}
		if cfg.A == 32 {
			continue // the exact search over 17,280 nodes is slow; the structure's router table is checked on the others
		}
		g, err := cfg.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		exact := fabric.NewLazyDist(g)
		longest, routers := int32(0), int32(0)
		for u := int32(0); int(u) < g.Nodes(); u++ {
			for v := int32(0); int(v) < g.Endpoints; v++ {
				if a, b := g.Distance(u, v), exact.Dist(u, v); a != b {
					t.Fatalf("a=%d: dist(%d, %d) = %d, exact %d", cfg.A, u, v, a, b)
				}
				if int(u) < g.Endpoints {
					longest = max(longest, exact.Dist(u, v))
				} else {
					routers = max(routers, exact.Dist(u, v)-1)
				}
			}
		}
		// The next hops the router takes from the oracle are those a scan of the out-links finds.
		if err := fabric.CheckNext(g, 1); err != nil {
			t.Errorf("a=%d: %v", cfg.A, err)
		}
		if longest != c.cables || routers != c.hops {
			t.Errorf("a=%d: longest path %d cables, %d between routers; want %d and %d", cfg.A, longest, routers, c.cables, c.hops)
		}
	}
}

func TestBadInput(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Groups = 200 // a·h + 1 = 129 at most
	err := cfg.Validate()
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "a·h = 16·8 = 128 global links (at most 129 groups)") {
		t.Errorf("too few global links: %v", err)
	}
	cfg = DefaultConfig()
	cfg.A = 60
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "p + a − 1 + h = 75 ports") {
		t.Errorf("oversized router: %v", err)
	}
}
