package wdmring_test

import (
	"fmt"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
)

// price prices an all-reduce of d over n ranks on a network choice, without reductions (the
// paper's SimGrid runs and Eq. 6 price none).
func price(t *testing.T, n int, d units.Bytes, ch job.NetworkChoice) float64 {
	t.Helper()
	m, _, err := ch.Build(network.Env{GPUs: n})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: d, Group: network.Group{Size: n, Stride: 1}, DType: dtype.FP32})
	if err != nil {
		t.Fatal(err)
	}
	return float64(c.Total)
}

// electrical is the wrht-electrical preset (Table 2's fat tree of 32-port routers, 40 Gb/s, 25 µs
// per router) with strategy st; N > 512 adds the third level 32-port routers need
// (reference/wrht.md A13).
func electrical(n int, st string) job.NetworkChoice {
	ch := job.NetworkChoice{Preset: "wrht-electrical", Params: []string{"strategy=" + st}}
	if n > 512 {
		ch.Params = append(ch.Params, fmt.Sprintf("endpoints=%d", n), "levels=3")
	}
	return ch
}

func optical(st string) job.NetworkChoice {
	return job.NetworkChoice{Name: "wdmring", Params: []string{"strategy=" + st}}
}

// Fig. 7 (N = 128 … 1,024, the four DNNs): O-Ring is faster than E-Ring at every point and both
// rise with N (the ring's 2(N−1) steps each pay the ring's 25 µs reconfiguration, or the three
// routers' 75 µs on the tree, five beyond 512 hosts). Rabenseifner's recursive halving/doubling
// on the non-blocking tree beats E-Ring (2 log2 N steps instead of 2(N−1)). The paper's averages
// V4 61.23% (WRHT vs E-Ring), V5 55.51% (vs E-RD) and V6 48.74% (O-Ring vs E-Ring) are printed
// beside ddlest's: without the routers' congestion that SimGrid models (§5.4, A9, A13) the fat
// tree carries the ring at full rate, so ddlest's gaps are large, and full-vector recursive
// doubling (E-RD read as rd) moves log2 N times the buffer and is slower than E-Ring except where
// the ring's 2(N−1) router delays dominate.
func TestFig7Electrical(t *testing.T) {
	dnns := []struct {
		name   string
		params float64
	}{{"BEiT-L", 307e6}, {"VGG16", 138e6}, {"AlexNet", 62.3e6}, {"ResNet50", 25e6}} // WRHT §5.1
	var v4, v5, v5rhd, v6 float64
	points := 0
	for _, m := range dnns {
		d := units.Bytes(4 * m.params)
		prevE, prevO := 0.0, 0.0
		for _, n := range []int{128, 256, 512, 1024} {
			eRing, eRD, eRHD := price(t, n, d, electrical(n, "ring")), price(t, n, d, electrical(n, "rd")), price(t, n, d, electrical(n, "rhd"))
			oRing, wrht := price(t, n, d, optical("ring")), price(t, n, d, optical("wrht"))
			if oRing >= eRing {
				t.Errorf("%s N=%d: O-Ring %.1f ms ≥ E-Ring %.1f ms", m.name, n, 1e3*oRing, 1e3*eRing)
			}
			if eRing <= prevE || oRing <= prevO {
				t.Errorf("%s N=%d: E-Ring %.1f ms, O-Ring %.1f ms do not rise with N", m.name, n, 1e3*eRing, 1e3*oRing)
			}
			// Hand count for ResNet-50 (S/B = 20 ms) at N = 1,024: rd ≈ 10 × 20 = 200 ms, the
			// ring 2 × 20 ms + 2,046 × 5 × 25 µs = 296 ms; everywhere else the ring is faster.
			if rdWins := m.name == "ResNet50" && n == 1024; (eRD < eRing) != rdWins {
				t.Errorf("%s N=%d: full-vector recursive doubling %.1f ms, E-Ring %.1f ms", m.name, n, 1e3*eRD, 1e3*eRing)
			}
			if eRHD >= eRing {
				t.Errorf("%s N=%d: recursive halving/doubling %.1f ms ≥ E-Ring %.1f ms", m.name, n, 1e3*eRHD, 1e3*eRing)
			}
			prevE, prevO = eRing, oRing
			v4 += 1 - wrht/eRing
			v5 += 1 - wrht/eRD
			v5rhd += 1 - wrht/eRHD
			v6 += 1 - oRing/eRing
			points++
		}
	}
	k := 100 / float64(points)
	t.Logf("V4 WRHT vs E-Ring: ddlest %.2f%%, paper 61.23%%", k*v4)
	t.Logf("V5 WRHT vs E-RD: ddlest %.2f%% (full-vector rd), %.2f%% (Rabenseifner rhd), paper 55.51%%", k*v5, k*v5rhd)
	t.Logf("V6 O-Ring vs E-Ring: ddlest %.2f%%, paper 48.74%%", k*v6)
}
