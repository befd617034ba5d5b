package hxmesh

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "hxmesh"

// Config is a HammingMesh (Hoefler et al. 2022, §III): x × y boards of a × b accelerators joined
// by PCB traces into a 2D mesh; every accelerator row is joined across the boards by a row
// network (one switch, or a two-level fat tree, on the W and E edge ports) and every accelerator
// column by a column network (N and S edge ports). HyperX is the 1×1 board (Hx1Mesh). With
// global = torus the edge ports are cabled to the neighbouring board instead: a 2D torus of
// boards (the paper's torus baseline of 2 × 2 boards).
type Config struct {
	BoardA     int     `json:"board_a" help:"accelerators along a board's rows (E–W); 1 makes a HyperX" source:"[P] HammingMesh §III: Hx2Mesh 2×2, Hx4Mesh 4×4 boards; 'a 2D HyperX is identical to an Hx1Mesh'"`
	BoardB     int     `json:"board_b" help:"accelerators along a board's columns (N–S)" source:"[P] HammingMesh §III (square boards in every evaluated network)"`
	GridX      int     `json:"grid_x" help:"boards per row (x)" source:"[P] HammingMesh App. A-C: 16 (small Hx2), 8 (small Hx4), 32 (small HyperX); 64, 32, 128 large"`
	GridY      int     `json:"grid_y" help:"boards per column (y)" source:"[P] HammingMesh App. A-C (square grids)"`
	Global     string  `json:"global" help:"trees: a switch or fat tree per accelerator row and column (HammingMesh); torus: edge ports cabled to the neighbouring boards, wrapping (a 2D torus of boards)" source:"[P] HammingMesh §III-B; App. A-C '2D torus ... 2×2 PCB boards'"`
	Radix      int     `json:"radix" help:"ports of a row or column switch; a row of 2x ports beyond it gets a two-level non-blocking fat tree" source:"[P] HammingMesh §III-B: 64-port switches, 'if the boards can be connected with a single 64-port switch, we use that instead of a fat tree'"`
	PortGbit   float64 `json:"port_gbit_per_s" help:"each of an accelerator's 4 ports (E, W, N, S) in the simulated plane (Gb/s)" source:"[P] HammingMesh §III-D, Table III: one plane of 4 × 400 Gb/s = 1.6 Tb/s per accelerator"`
	SimPlanes  int     `json:"sim_planes" help:"planes the packet simulation ran, as one network: 1 (one plane: 4 ports of port_gbit_per_s, 1.6 Tb/s injection) or 4 (four planes of a quarter of the injection each: ports at 4 × port_gbit_per_s, injection still 4 × port_gbit_per_s)" source:"[P] HammingMesh §III-D: 'a single plane of HammingMesh and four planes for all other topologies'; Table II's HyperX bandwidth (91.6/95.8%) exceeds one plane's port bound (~51%) and needs 4, its §V-B runtimes need 1 (reference/hammingmesh.md)"`
	BoardNs    float64 `json:"board_ns" help:"propagation of a PCB trace between neighbours on a board (ns)" source:"[P] HammingMesh Table III: link latency Hx boards 1 ns"`
	CostPlanes int     `json:"cost_planes" help:"planes the cost counts (each uses the E, W, N, S ports of the 16-port accelerator)" source:"[P] HammingMesh §III-C: 4 planes for HxMesh, HyperX and torus"`
	TorusCable string  `json:"torus_cable" help:"cable the torus prices between boards: aoc (reproduces Table II) or dac (the text's 'only DAC cables')" source:"[AMB] reference/hammingmesh.md §3.2: Table II's $2.5 M / $39.5 M torus costs need the AoC price; the text says DAC ($1.1 M small)"`
	Placement  string  `json:"placement" help:"rank order on the accelerators: board (fill a board, then boards row by row, as the SST motifs) or rows (row-major over the global accelerator grid)" source:"[S] HammingMesh SST hxmesh topology: ranks fill a board first, then boards row-major (reference/hammingmesh.md §6.4)"`
	fabric.Common
	network.Prices
}

var (
	globals    = []string{"trees", "torus"}
	cables     = []string{"aoc", "dac"}
	placements = []string{"board", "rows"}
)

// DefaultConfig is the small Hx2Mesh of HammingMesh Table II: 16 × 16 boards of 2 × 2.
func DefaultConfig() *Config {
	return &Config{BoardA: 2, BoardB: 2, GridX: 16, GridY: 16, Global: "trees", Radix: 64, PortGbit: 400, SimPlanes: 1, BoardNs: 1,
		CostPlanes: 4, TorusCable: "aoc", Placement: "board", Common: fabric.DefaultCommon(), Prices: network.DefaultPrices()}
}

// Endpoints is a·b·x·y.
func (c *Config) Endpoints() int { return c.BoardA * c.BoardB * c.GridX * c.GridY }

// Cols and Rows are the global accelerator grid's sizes.
func (c *Config) Cols() int { return c.BoardA * c.GridX }
func (c *Config) Rows() int { return c.BoardB * c.GridY }

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.AtLeast("board_a", c.BoardA, 1)
	p.AtLeast("board_b", c.BoardB, 1)
	p.AtLeast("grid_x", c.GridX, 1)
	p.AtLeast("grid_y", c.GridY, 1)
	p.OneOf("global", c.Global, globals)
	p.AtLeast("radix", c.Radix, 4)
	p.Positive("port_gbit_per_s", c.PortGbit)
	p.AtLeast("sim_planes", c.SimPlanes, 1)
	p.NonNegative("board_ns", c.BoardNs)
	p.AtLeast("cost_planes", c.CostPlanes, 1)
	p.OneOf("torus_cable", c.TorusCable, cables)
	p.OneOf("placement", c.Placement, placements)
	c.Common.Check(&p, algorithms)
	if len(p) == 0 && c.Global == "trees" {
		for _, q := range []int{2 * c.GridX, 2 * c.GridY} {
			if q > c.Radix && q > c.Radix*c.Radix/2 {
				p.Addf("a row or column of %d ports exceeds a two-level fat tree of %d-port switches (%d)", q, c.Radix, c.Radix*c.Radix/2)
			}
		}
	}
	return p.Err("network hxmesh")
}

var algorithms = []collective.Algorithm{collective.Ring, collective.BiRing, collective.Rings, collective.HMTorus, collective.HMTorusSST,
	collective.Hierarchical, collective.Torus2D, collective.RHD, collective.Tree, collective.Linear}

// Algorithms lists the algorithms the network offers.
func (c *Config) Algorithms() []collective.Algorithm { return algorithms }

// dim is one dimension's network: n accelerator positions along a row (or column), boards of
// `size` positions, joined by a single switch, a two-level fat tree or torus cables.
type dim struct {
	n, size, boards int
	radix           int
	torus           bool
}

// ports is the number of edge ports a row network joins (W and E of every board).
func (d dim) ports() int { return 2 * d.boards }

// leaves is 0 for a single switch (or a torus), else the fat tree's leaves.
func (d dim) leaves() int {
	if d.torus || d.ports() <= d.radix {
		return 0
	}
	return ceil(d.ports(), d.radix/2)
}

// nodes is the switch nodes of one row network: none (torus), one switch, or leaves + one
// aggregated spine.
func (d dim) nodes() int {
	switch {
	case d.torus:
		return 0
	case d.leaves() == 0:
		return 1
	}
	return d.leaves() + 1
}

// port returns the position of edge port k (2X: the W or N edge of board X; 2X+1: E or S).
func (d dim) port(k int) int {
	if k%2 == 0 {
		return (k / 2) * d.size
	}
	return (k/2)*d.size + d.size - 1
}

// attach is the switch node (0-based within the row network) port k connects to.
func (d dim) attach(k int) int {
	if d.leaves() == 0 {
		return 0
	}
	return k / (d.radix / 2)
}

// edges are one row network's links as (u, v, weight) on positions 0 … n−1 and switch nodes
// n, n+1, …: the board traces, the edge ports to their switch (or the torus cables), and each
// leaf's bundle to the spine.
func (d dim) edges() [][3]int32 {
	var e [][3]int32
	two := func(u, v int) { e = append(e, [3]int32{int32(u), int32(v), 1}, [3]int32{int32(v), int32(u), 1}) }
	for b := 0; b < d.boards; b++ {
		for i := 0; i+1 < d.size; i++ {
			two(b*d.size+i, b*d.size+i+1)
		}
	}
	switch {
	case d.torus:
		for b := 0; b < d.boards; b++ {
			if w, east := b*d.size, ((b+d.boards-1)%d.boards)*d.size+d.size-1; w != east {
				two(w, east)
			}
		}
	default:
		for k := 0; k < d.ports(); k++ {
			two(d.port(k), d.n+d.attach(k))
		}
		for l := 0; l < d.leaves(); l++ {
			two(d.n+l, d.n+d.leaves())
		}
	}
	return e
}

func (c *Config) dims() (row, col dim) {
	t := c.Global == "torus"
	return dim{n: c.Cols(), size: c.BoardA, boards: c.GridX, radix: c.Radix, torus: t},
		dim{n: c.Rows(), size: c.BoardB, boards: c.GridY, radix: c.Radix, torus: t}
}

// Endpoint numbers the accelerator at global column gx, row gy: boards row-major, a board's
// accelerators row-major.
func (c *Config) Endpoint(gx, gy int) int32 {
	X, Y, cx, ry := gx/c.BoardA, gy/c.BoardB, gx%c.BoardA, gy%c.BoardB
	return int32(((Y*c.GridX+X)*c.BoardB+ry)*c.BoardA + cx)
}

// Coord is the accelerator's (row, column) on the global grid.
func (c *Config) Coord(e int32) (int, int) {
	ab := c.BoardA * c.BoardB
	board, in := int(e)/ab, int(e)%ab
	X, Y := board%c.GridX, board/c.GridX
	return Y*c.BoardB + in/c.BoardA, X*c.BoardA + in%c.BoardA
}

// layout is the node numbering of a fabric.
type layout struct {
	cfg                   *Config
	row, col              dim
	rowNets, colNets      int32 // first node of the row and of the column networks
	rowNodes, colNodes    int
	endpoints, rows, cols int
}

func (c *Config) layout() layout {
	row, col := c.dims()
	l := layout{cfg: c, row: row, col: col, rowNodes: row.nodes(), colNodes: col.nodes(), endpoints: c.Endpoints(), rows: c.Rows(), cols: c.Cols()}
	l.rowNets = int32(l.endpoints)
	l.colNets = l.rowNets + int32(l.rows*l.rowNodes)
	return l
}

// rowNode is switch j of the row network of accelerator row gy.
func (l layout) rowNode(gy, j int) int32 { return l.rowNets + int32(gy*l.rowNodes+j) }
func (l layout) colNode(gx, j int) int32 { return l.colNets + int32(gx*l.colNodes+j) }

// Fabric builds the HammingMesh: board traces at board_ns, edge ports to their row and column
// networks (or torus cables) and the trees' leaf–spine bundles at cable latency; accelerators
// and switches forward with switch_ns. The distance is the sum of a row and a column distance
// (fabric.Product), and board translations are its symmetry.
func (c *Config) build() (*fabric.Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	l := c.layout()
	rate := units.Gbps(c.PortGbit * float64(c.SimPlanes))
	b := fabric.NewBuilder(l.endpoints, c.Forward())
	if c.SimPlanes > 1 {
		b.NIC(units.Gbps(4 * c.PortGbit))
	}
	b.Switches(l.rows*l.rowNodes+l.cols*l.colNodes, c.Forward())
	board := fabric.Spec{Class: "board link", Rate: rate, Latency: units.Ns(c.BoardNs)}
	for gy := 0; gy < l.rows; gy++ {
		for gx := 0; gx < l.cols; gx++ {
			e := c.Endpoint(gx, gy)
			if gx%c.BoardA+1 < c.BoardA {
				b.Duplex(e, c.Endpoint(gx+1, gy), board)
			}
			if gy%c.BoardB+1 < c.BoardB {
				b.Duplex(e, c.Endpoint(gx, gy+1), board)
			}
		}
	}
	if c.Global == "torus" {
		for gy := 0; gy < l.rows; gy++ {
			for X := 0; X < c.GridX; X++ {
				w, east := c.Endpoint(X*c.BoardA, gy), c.Endpoint(((X+c.GridX-1)%c.GridX)*c.BoardA+c.BoardA-1, gy)
				if w != east {
					b.Duplex(w, east, fabric.Spec{Class: "row cable", Rate: rate, Latency: c.Cable()})
				}
			}
		}
		for gx := 0; gx < l.cols; gx++ {
			for Y := 0; Y < c.GridY; Y++ {
				n, south := c.Endpoint(gx, Y*c.BoardB), c.Endpoint(gx, ((Y+c.GridY-1)%c.GridY)*c.BoardB+c.BoardB-1)
				if n != south {
					b.Duplex(n, south, fabric.Spec{Class: "column cable", Rate: rate, Latency: c.Cable()})
				}
			}
		}
	} else {
		c.trees(b, l, rate)
	}
	g, err := b.Build(c.EndpointCosts(), func(g *fabric.Graph) (fabric.Distancer, error) { return c.product(l, g), nil })
	if err != nil {
		return nil, err
	}
	if sym := c.symmetry(l, g); sym != nil {
		if err := g.SetSymmetry(sym); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// trees adds every row and column network.
func (c *Config) trees(b *fabric.Builder, l layout, rate units.BytesPerSecond) {
	for gy := 0; gy < l.rows; gy++ {
		for k := 0; k < l.row.ports(); k++ {
			b.Duplex(c.Endpoint(l.row.port(k), gy), l.rowNode(gy, l.row.attach(k)), fabric.Spec{Class: "row port", Rate: rate, Latency: c.Cable()})
		}
		for j := 0; j < l.row.leaves(); j++ {
			b.Duplex(l.rowNode(gy, j), l.rowNode(gy, l.row.leaves()), fabric.Spec{Class: "row tree uplink", Width: c.Radix / 2, Rate: rate, Latency: c.Cable()})
		}
	}
	for gx := 0; gx < l.cols; gx++ {
		for k := 0; k < l.col.ports(); k++ {
			b.Duplex(c.Endpoint(gx, l.col.port(k)), l.colNode(gx, l.col.attach(k)), fabric.Spec{Class: "column port", Rate: rate, Latency: c.Cable()})
		}
		for j := 0; j < l.col.leaves(); j++ {
			b.Duplex(l.colNode(gx, j), l.colNode(gx, l.col.leaves()), fabric.Spec{Class: "column tree uplink", Width: c.Radix / 2, Rate: rate, Latency: c.Cable()})
		}
	}
}

// product is the distance oracle: row distance + column distance on each dimension's network.
func (c *Config) product(l layout, g *fabric.Graph) *fabric.Product {
	p := &fabric.Product{H: fabric.AllPairs(l.row.n+l.row.nodes(), l.row.edges()), V: fabric.AllPairs(l.col.n+l.col.nodes(), l.col.edges())}
	p.HOf, p.VOf = make([]int32, g.Nodes()), make([]int32, g.Nodes())
	for e := int32(0); int(e) < l.endpoints; e++ {
		r, col := c.Coord(e)
		p.HOf[e], p.VOf[e] = int32(col), int32(r)
	}
	for gy := 0; gy < l.rows; gy++ {
		for j := 0; j < l.rowNodes; j++ {
			u := l.rowNode(gy, j)
			p.HOf[u], p.VOf[u] = int32(l.row.n+j), int32(gy)
		}
	}
	for gx := 0; gx < l.cols; gx++ {
		for j := 0; j < l.colNodes; j++ {
			u := l.colNode(gx, j)
			p.HOf[u], p.VOf[u] = int32(gx), int32(l.col.n+j)
		}
	}
	return p
}

// block is the number of boards a dimension's symmetries may rotate among themselves: all x
// for a single switch or torus cables (a cyclic shift), a leaf's boards for a fat tree (boards
// on one leaf are interchangeable: they are joined only through it); 0 when the boards do not
// split evenly over the leaves.
func (d dim) block() int {
	if d.leaves() == 0 {
		return d.boards
	}
	per := d.radix / 4 // boards (2 ports each) per leaf
	if d.boards%per != 0 {
		return 0
	}
	return per
}

// move is a symmetry of one dimension: rotate the leaves by dl and the boards inside every
// leaf's block by dw.
func (d dim) move(X, dl, dw int) int {
	B := d.block()
	nl := d.boards / B
	return (((X/B+dl)%nl+nl)%nl)*B + ((X%B+dw)%B+B)%B
}

// elem is a symmetry of the whole mesh: a move along the rows and one along the columns.
type elem struct{ lx, wx, ly, wy int }

// symmetry is the group of those moves: it acts freely on the boards, so one board's
// accelerators represent every destination. Nil when a dimension has no block structure.
func (c *Config) symmetry(l layout, g *fabric.Graph) *fabric.Symmetry {
	if l.row.block() == 0 || l.col.block() == 0 || c.GridX*c.GridY <= 1 {
		return nil
	}
	s := &fabric.Symmetry{Order: c.GridX * c.GridY, LinkOrbit: make([]int32, len(g.Links())), OrbitSize: make([]int32, len(g.Links())),
		Factors:  []int32{int32(l.row.block()), int32(c.GridX / l.row.block()), int32(l.col.block()), int32(c.GridY / l.col.block())},
		EndRep:   make([]int32, l.endpoints),
		EndElem:  make([]int32, l.endpoints),
		LinkElem: make([]int32, len(g.Links()))}
	for r := 0; r < c.BoardB; r++ {
		for col := 0; col < c.BoardA; col++ {
			s.Reps = append(s.Reps, c.Endpoint(col, r))
		}
	}
	// The element that takes board (0, 0) to a node's board is the inverse of its home move;
	// Reps are board (0, 0)'s accelerators in endpoint order.
	number := func(e elem) int32 {
		f := s.Factors
		mod := func(a int, m int32) int32 { return int32(((a % int(m)) + int(m)) % int(m)) }
		return mod(-e.wx, f[0]) + f[0]*(mod(-e.lx, f[1])+f[1]*(mod(-e.wy, f[2])+f[2]*mod(-e.ly, f[3])))
	}
	for e := int32(0); int(e) < l.endpoints; e++ {
		h, _ := l.home(e)
		s.EndRep[e], s.EndElem[e] = e%int32(c.BoardA*c.BoardB), number(h)
	}
	for i, lk := range g.Links() {
		// Anchor on an accelerator end, else on a leaf, and move it home: an accelerator has a
		// board, a leaf only a block (moves inside the block fix it), so links between the two
		// anchor on the accelerator, or their orbit would split.
		a := lk.From
		if int(lk.To) < l.endpoints || (int(lk.From) >= l.endpoints && !l.anchors(lk.From)) {
			a = lk.To
		}
		e, _ := l.home(a)
		img := g.Link(l.apply(lk.From, e), l.apply(lk.To, e))
		if img < 0 {
			return nil // not an automorphism: no symmetry to use
		}
		s.LinkOrbit[i], s.LinkElem[i] = img, number(e)
		s.OrbitSize[img]++
	}
	return s
}

// home is the move that takes node u's board to board (0, 0); false for a node without a board
// position (a row's only switch or its spine, which moves along the row fix).
func (l layout) home(u int32) (elem, bool) {
	c := l.cfg
	bx, by := l.row.block(), l.col.block()
	at := func(X, Y int) elem { return elem{lx: -(X / bx), wx: -(X % bx), ly: -(Y / by), wy: -(Y % by)} }
	switch {
	case int(u) < l.endpoints:
		r, col := c.Coord(u)
		return at(col/c.BoardA, r/c.BoardB), true
	case u < l.colNets:
		gy, j := int(u-l.rowNets)/l.rowNodes, int(u-l.rowNets)%l.rowNodes
		if j == l.row.leaves() {
			return elem{}, false
		}
		e := at(0, gy/c.BoardB)
		e.lx = -j
		return e, true
	default:
		gx, j := int(u-l.colNets)/l.colNodes, int(u-l.colNets)%l.colNodes
		if j == l.col.leaves() {
			return elem{}, false
		}
		e := at(gx/c.BoardA, 0)
		e.ly = -j
		return e, true
	}
}

// anchors reports whether node u has a board position to anchor a link on.
func (l layout) anchors(u int32) bool {
	_, ok := l.home(u)
	return ok
}

// apply moves node u by e.
func (l layout) apply(u int32, e elem) int32 {
	c := l.cfg
	switch {
	case int(u) < l.endpoints:
		r, col := c.Coord(u)
		X, Y := l.row.move(col/c.BoardA, e.lx, e.wx), l.col.move(r/c.BoardB, e.ly, e.wy)
		return c.Endpoint(X*c.BoardA+col%c.BoardA, Y*c.BoardB+r%c.BoardB)
	case u < l.colNets:
		gy, j := int(u-l.rowNets)/l.rowNodes, int(u-l.rowNets)%l.rowNodes
		if n := l.row.leaves(); n > 0 && j < n {
			j = ((j+e.lx)%n + n) % n
		}
		return l.rowNode(l.col.move(gy/c.BoardB, e.ly, e.wy)*c.BoardB+gy%c.BoardB, j)
	default:
		gx, j := int(u-l.colNets)/l.colNodes, int(u-l.colNets)%l.colNodes
		if n := l.col.leaves(); n > 0 && j < n {
			j = ((j+e.ly)%n + n) % n
		}
		return l.colNode(l.row.move(gx/c.BoardA, e.lx, e.wx)*c.BoardA+gx%c.BoardA, j)
	}
}

// Structure is HammingMesh App. A-C's bill per plane and §III-B's diameter. Trees: a row of 2x
// edge ports takes ⌊k/(2x)⌋ accelerator rows per k-port switch, or a two-level non-blocking tree
// (2x/(k/2) leaves and half as many spines) per row; one dimension's ports are DAC, the other's
// AoC, and every tree's second level adds as many AoC as it has ports. Torus: a + b cables per
// board (its E and N neighbours), no switches. The diameter is the longest row plus the longest
// column distance of the routing graph (§III-B's 2(⌊(a−1)/2⌋ + ⌊(b−1)/2⌋) + 2(⌈log_{k/2}(2x/k)⌉
// + 1) + 2(⌈log_{k/2}(2y/k)⌉ + 1); Σ⌊k_i/2⌋ for the torus); the relative bisection of a square
// board is 1/(2a) (§III-A) with trees, 1/n for an n × n torus.
func (c *Config) Structure() (network.Structure, error) {
	if err := c.Validate(); err != nil {
		return network.Structure{}, err
	}
	l := c.layout()
	b := network.Bill{Planes: c.CostPlanes, Prices: c.Prices}
	if c.Global == "torus" {
		cab := c.GridX * c.GridY * (c.BoardA + c.BoardB)
		if c.TorusCable == "dac" {
			b.DAC = cab
		} else {
			b.AoC = cab
		}
	} else {
		sw := func(d dim, lines int) (switches, uplinks int) {
			if d.leaves() == 0 {
				per := max(1, c.Radix/d.ports())
				return ceil(lines, per), 0
			}
			return lines * (d.leaves() + ceil(d.leaves(), 2)), lines * d.ports()
		}
		rs, ru := sw(l.row, l.rows)
		cs, cu := sw(l.col, l.cols)
		b.Switches = rs + cs
		b.DAC = l.rows * l.row.ports()
		b.AoC = l.cols*l.col.ports() + ru + cu
	}
	h, v := fabric.AllPairs(l.row.n+l.row.nodes(), l.row.edges()), fabric.AllPairs(l.col.n+l.col.nodes(), l.col.edges())
	far := func(t fabric.Table, n int) int {
		m := int32(0)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				m = max(m, t.D[i*t.N+j])
			}
		}
		return int(m)
	}
	s := network.Structure{Endpoints: c.Endpoints(), Bill: b, Diameter: far(h, l.row.n) + far(v, l.col.n),
		InjectionBps: 4 * float64(units.Gbps(c.PortGbit))}
	if c.BoardA == c.BoardB {
		if c.Global == "torus" {
			if c.Cols() == c.Rows() {
				s.Bisection = 1 / float64(c.Cols())
			}
		} else {
			s.Bisection = 1 / float64(2*c.BoardA)
		}
	}
	return s, nil
}

// Placement maps ranks to accelerators: nil for the board order (the endpoints' own numbering).
func (c *Config) placement() []int32 {
	if c.Placement != "rows" {
		return nil
	}
	out := make([]int32, c.Endpoints())
	for r := range out {
		out[r] = c.Endpoint(r%c.Cols(), r/c.Cols())
	}
	return out
}

// Tiers are the levels a hierarchical algorithm runs on: a board, a row of boards, everything
// (in the board placement).
func (c *Config) Tiers() []topology.Tier {
	ab := c.BoardA * c.BoardB
	return []topology.Tier{{Name: "board", Span: ab}, {Name: "board row", Span: ab * c.GridX}, {Name: "global", Span: c.Endpoints()}}
}

// grid is the GridMap of the global accelerator grid.
type grid struct{ c *Config }

func (g grid) Coord(e int32) (int, int) { return g.c.Coord(e) }

// gridTable is the grid read from the product distance's node coordinates (Config.product: an
// endpoint's column and row are Coord's), every endpoint's position listed.
type gridTable struct{ p *fabric.Product }

func (g gridTable) Coord(e int32) (int, int) { return int(g.p.VOf[e]), int(g.p.HOf[e]) }

func (g gridTable) Positions() (rows, cols []int32) { return g.p.VOf, g.p.HOf }

// gridOf is the fabric's GridMap: with positions listed where the graph routes by the product
// distance.
func gridOf(c *Config, g *fabric.Graph) fabric.GridMap {
	if p, ok := g.Distancer().(*fabric.Product); ok {
		return gridTable{p}
	}
	return grid{c}
}

// Describe names the network as the paper does (Hx2Mesh, HyperX, 2D torus).
func (c *Config) Describe() string {
	switch {
	case c.Global == "torus":
		return fmt.Sprintf("%d×%d torus of %d×%d boards", c.Cols(), c.Rows(), c.BoardA, c.BoardB)
	case c.BoardA == 1 && c.BoardB == 1:
		return fmt.Sprintf("%d×%d HyperX", c.GridX, c.GridY)
	case c.BoardA == c.BoardB:
		return fmt.Sprintf("%d×%d Hx%dMesh", c.GridX, c.GridY, c.BoardA)
	}
	return fmt.Sprintf("%d×%d H%dx%dMesh", c.GridX, c.GridY, c.BoardA, c.BoardB)
}

func ceil(a, b int) int { return (a + b - 1) / b }

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "HammingMesh: a×b accelerator boards (2D mesh) joined per row and column by switches or fat trees; HyperX = 1×1 boards; global=torus gives a 2D torus of boards; routed flows",
		Source:    "[P] Hoefler et al., HammingMesh (SC'22) §III–V, App. A-C, A-D; latencies Table III",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			g, err := c.Fabric()
			if err != nil {
				return nil, err
			}
			if env.GPUs > c.Endpoints() {
				return nil, errs.Usage("a job of %d GPUs does not fit network hxmesh (%s): it has %d accelerators", env.GPUs, c.Describe(), c.Endpoints())
			}
			opt := c.Common.Options(Name, algorithms)
			opt.Tiers, opt.Grid, opt.Placement = c.Tiers(), gridOf(c, g), c.placement()
			return fabric.NewModel(g, env, opt)
		},
	}
}

// Fabric is the routed graph (built once per configuration; see fabric.Cached).
func (c *Config) Fabric() (*fabric.Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	key := *c // what shapes the graph: not the placement of jobs on it, nor the bill
	key.Common, key.Placement, key.CostPlanes, key.TorusCable, key.Prices = c.Common.GraphKey(), "", 0, "", network.Prices{}
	return fabric.Cached(key, c.build)
}
