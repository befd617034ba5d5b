package cosmoflow

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// Parameters by hand (3×3×3 kernels with bias; 128³ → 4³·512 = 32,768 features):
//
//	conv  4·32·27+32 = 3,488; 32·64·27+64 = 55,360; 64·128·27+128 = 221,312;
//	      128·256·27+256 = 884,992; 256·512·27+512 = 3,539,456        → 4,704,608
//	dense 32768·128+128 = 4,194,432; 128·64+64 = 8,256; 64·4+4 = 260 → 4,202,948
//
// 8,907,556 in all (HammingMesh §V-B3's "8.9M trainable parameters" is the row
// hammingmesh/params-cosmoflow of internal/repro). The motif's gradient
// all-reduce sizes (reference/hammingmesh.md §6.2) are the five convolutions and the dense
// layers over O = 4: 4,202,948 / 4 = 1,050,737 floats.
func TestParams(t *testing.T) {
	if p := Params(); p != 8907556 {
		t.Fatalf("params %.0f, want 8,907,556", p)
	}
	plan := job(t, 4)
	var conv, dense float64
	for _, b := range plan.Stages[0].Blocks {
		switch b.Sync {
		case 0:
			conv += b.Params
		case 1:
			dense += b.Params
		}
	}
	if conv != 4704608 || dense != 1050737 {
		t.Errorf("per-GPU conv %.0f (want 4,704,608), dense shard %.0f (want 1,050,737)", conv, dense)
	}
	g := plan.Stages[0].Grads
	if g[0].Group != (network.Group{Size: 1024, Stride: 1}) || g[1].Group != (network.Group{Size: 256, Stride: 4}) ||
		g[0].Bytes != units.Bytes(4704608*4) || g[1].Bytes != units.Bytes(1050737*4) {
		t.Errorf("gradient reductions %+v", g)
	}
}

// job is the HammingMesh configuration: D = 256, O = 4, local batch 32, FP32 (TF32 kernels).
func job(t *testing.T, o int) *partition.Plan {
	t.Helper()
	p, err := Plan(Config{DP: 1024 / o, Spatial: o, LocalBatch: 32, Precision: partition.TF32, Optimizer: partition.SGD, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The halo faces times the local batch of 32 are the SST motif's halo sizes
// (reference/hammingmesh.md §6.2): forward, on the inputs of conv1–conv4 (64³·32 … 8³·256 split
// 2 × 2), C·D·w·32 = 2,097,152, 1,048,576, 524,288, 262,144 floats; backward, on the pooled
// outputs of conv4 … conv1, 131,072, 262,144, 524,288, 1,048,576 floats.
func TestHaloMatchesMotif(t *testing.T) {
	fwd := map[string]float64{"conv1": 2097152, "conv2": 1048576, "conv3": 524288, "conv4": 262144}
	bwd := map[string]float64{"conv4": 131072, "conv3": 262144, "conv2": 524288, "conv1": 1048576}
	plan := job(t, 4)
	seen := 0
	for _, b := range plan.Stages[0].Blocks {
		for _, c := range b.Collectives {
			if c.Name != "sp.halo" {
				continue
			}
			want := fwd[b.Name]
			if c.Phase == partition.Backward {
				want = bwd[b.Name]
			}
			if c.Bytes != units.Bytes(want*4) || c.Count != 1 || c.HideBehind == "" {
				t.Errorf("%s %s halo %v ×%d, want %v floats ×1", b.Name, c.Phase, c.Bytes, c.Count, want)
			}
			seen++
		}
		if b.Name == "conv0" && len(b.Collectives) != 0 {
			t.Errorf("conv0 exchanges %+v; its halo comes with the input slab", b.Collectives)
		}
	}
	if seen != 16 { // 4 convolutions × (H + W) × (forward + backward)
		t.Errorf("%d halo exchanges, want 16", seen)
	}
}

// Spatial splitting divides every convolution's work by O exactly.
func TestSpatialSplitDividesWork(t *testing.T) {
	one, four := job(t, 1), job(t, 4)
	flop := func(p *partition.Plan, name string) units.FLOP {
		for _, b := range p.Stages[0].Blocks {
			if b.Name == name {
				return b.Ops[0].FLOP
			}
		}
		return 0
	}
	// conv1: 64·32·27·64³ MACs per sample, 2 FLOP each, 32 samples.
	if f := flop(one, "conv1"); f != units.FLOP(2*64*32*27*math.Pow(64, 3)*32) {
		t.Errorf("conv1 FLOP %v", f)
	}
	for _, n := range []string{"conv0", "conv1", "conv4"} {
		if 4*flop(four, n) != flop(one, n) {
			t.Errorf("%s: O=4 %v ×4 ≠ O=1 %v", n, flop(four, n), flop(one, n))
		}
	}
}

func TestBadSpatial(t *testing.T) {
	for _, o := range []int{3, 32, 0} {
		_, err := Plan(Config{DP: 1, Spatial: o, LocalBatch: 1, Capacity: units.GiB})
		if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "--spatial") {
			t.Errorf("O=%d: %v", o, err)
		}
	}
}

// Functional check on real tensors: a 3×3×3 convolution of a volume split over a 2 × 2 grid,
// where each GPU convolves its slab padded with the faces and edges its neighbours send (sized
// by HaloOf), equals the convolution of the whole volume.
func TestSplitConvolutionWithHalo(t *testing.T) {
	const c, co, d, h, w = 2, 3, 4, 8, 6
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(tensor.WithShape(c, d, h, w), tensor.WithBacking(randSlice(rng, c*d*h*w)))
	k := tensor.New(tensor.WithShape(co, c, 3, 3, 3), tensor.WithBacking(randSlice(rng, co*c*27)))
	full := conv(x, k, d, h, w)

	gy, gx := Grid(4)
	lh, lw := h/gy, w/gx
	slab := func(ry, rx int) *tensor.Dense { // rank (ry, rx)'s slab, the only data it owns
		s, err := x.Slice(nil, nil, tensor.S(ry*lh, (ry+1)*lh), tensor.S(rx*lw, (rx+1)*lw))
		if err != nil {
			t.Fatal(err)
		}
		return s.(*tensor.Dense).Materialize().(*tensor.Dense)
	}
	halo := HaloOf([]int{c, d, lh, lw}, gy, gx)
	for ry := 0; ry < gy; ry++ {
		for rx := 0; rx < gx; rx++ {
			own := slab(ry, rx)
			// Padded local volume; received halo voxels go in the border, zeros outside the
			// global volume.
			p := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(c, d, lh+2, lw+2))
			var got float64 // halo elements received
			put := func(src *tensor.Dense, sy, sx, dy, dx int) {
				for ci := 0; ci < c; ci++ {
					for di := 0; di < d; di++ {
						v, _ := src.At(ci, di, sy, sx)
						_ = p.SetAt(v, ci, di, dy, dx)
					}
				}
				got++
			}
			for y := 0; y < lh; y++ {
				for xx := 0; xx < lw; xx++ {
					for ci := 0; ci < c; ci++ {
						for di := 0; di < d; di++ {
							v, _ := own.At(ci, di, y, xx)
							_ = p.SetAt(v, ci, di, y+1, xx+1)
						}
					}
				}
			}
			got = 0
			for _, dir := range [][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}} {
				ny, nx := ry+dir[0], rx+dir[1]
				if ny < 0 || ny >= gy || nx < 0 || nx >= gx {
					continue
				}
				nb := slab(ny, nx) // what the neighbour sends comes from its own slab
				rows, cols := rowsOf(dir[0], lh), rowsOf(dir[1], lw)
				for _, r := range rows {
					for _, q := range cols {
						put(nb, r[0], q[0], r[1], q[1])
					}
				}
			}
			// Received elements = the halo HaloOf sizes (per sample: C·D per voxel column).
			want := float64(halo.HNeighbours)*halo.HFace + float64(halo.WNeighbours)*halo.WFace + float64(halo.Diagonals)*halo.Edge
			if got*c*d != want {
				t.Errorf("rank (%d,%d) received %v elements, HaloOf says %v", ry, rx, got*c*d, want)
			}
			local := conv(p, k, d, lh, lw) // valid convolution of the padded slab (D padded below)
			for o := 0; o < co; o++ {
				for di := 0; di < d; di++ {
					for y := 0; y < lh; y++ {
						for xx := 0; xx < lw; xx++ {
							a, _ := local.At(o, di, y, xx)
							b, _ := full.At(o, di, ry*lh+y, rx*lw+xx)
							if math.Abs(a.(float64)-b.(float64)) > 1e-12 {
								t.Fatalf("rank (%d,%d) out[%d,%d,%d,%d] = %v, whole volume gives %v", ry, rx, o, di, y, xx, a, b)
							}
						}
					}
				}
			}
		}
	}
}

// rowsOf pairs a neighbour's boundary index with the border index it fills, along one axis:
// dir −1 (neighbour before us) sends its last row into our row 0; +1 its first row into row n+1;
// 0 means the interior rows 0…n−1 into 1…n (a diagonal edge uses one row of each axis).
func rowsOf(dir, n int) [][2]int {
	switch dir {
	case -1:
		return [][2]int{{n - 1, 0}}
	case 1:
		return [][2]int{{0, n + 1}}
	}
	rs := make([][2]int, n)
	for i := range rs {
		rs[i] = [2]int{i, i + 1}
	}
	return rs
}

func randSlice(rng *rand.Rand, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = rng.Float64()*2 - 1
	}
	return s
}

// conv is a direct 3×3×3 convolution producing [Cout, d, oh, ow]. For a [C, d, oh, ow] input it
// zero-pads all three axes ("same"); for a [C, d, oh+2, ow+2] input it pads only D (the split
// slab arrives with its H and W border filled).
func conv(x, k *tensor.Dense, d, oh, ow int) *tensor.Dense {
	s := x.Shape()
	padHW := 1
	if s[2] == oh+2 {
		padHW = 0
	}
	co, ci := k.Shape()[0], k.Shape()[1]
	out := tensor.New(tensor.Of(tensor.Float64), tensor.WithShape(co, d, oh, ow))
	for o := 0; o < co; o++ {
		for z := 0; z < d; z++ {
			for y := 0; y < oh; y++ {
				for xx := 0; xx < ow; xx++ {
					var sum float64
					for c := 0; c < ci; c++ {
						for dz := -1; dz <= 1; dz++ {
							for dy := 0; dy < 3; dy++ {
								for dx := 0; dx < 3; dx++ {
									zz, yy, xi := z+dz, y+dy-padHW, xx+dx-padHW
									if zz < 0 || zz >= d || yy < 0 || yy >= s[2] || xi < 0 || xi >= s[3] {
										continue
									}
									v, _ := x.At(c, zz, yy, xi)
									kv, _ := k.At(o, c, dz+1, dy, dx)
									sum += v.(float64) * kv.(float64)
								}
							}
						}
					}
					_ = out.SetAt(sum, o, z, y, xx)
				}
			}
		}
	}
	return out
}
