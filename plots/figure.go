package plots

import (
	"bufio"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
)

// Figure is a plot and its legend, drawn to the right of the plot area (so that no legend ever
// covers data), or a column of panels sharing one legend.
type Figure struct {
	Panels []*plot.Plot
	Legend plot.Legend
	// Legended is false for a figure without a legend (one series).
	Legended bool
	// Bars is the number of bars of a bar chart (0 for lines): a figure of many bars needs room.
	Bars int
}

// Size is an image size with the resolution its raster (PNG) form is drawn at.
type Size struct {
	W, H vg.Length
	DPI  int
}

// DefaultDPI is the PNG resolution when none is asked for: 150 dots per inch, sharp on screen
// and in print at column width.
const DefaultDPI = 150

// Pixels is the PNG's width and height at s.DPI.
func (s Size) Pixels() (w, h int) {
	return int(math.Ceil(float64(s.W/vg.Inch) * float64(s.DPI))), int(math.Ceil(float64(s.H/vg.Inch) * float64(s.DPI)))
}

// lengthUnits are the units ParseSize accepts, in points (px at the chosen DPI).
var lengthUnits = map[string]vg.Length{"in": vg.Inch, "cm": vg.Centimeter, "mm": vg.Millimeter, "pt": vg.Points(1)}

// SizeHelp says what ParseSize accepts.
const SizeHelp = "WIDTHxHEIGHT with a unit in, cm, mm, pt or px (e.g. 7inx4in, 18cmx10cm, 1200x800px)"

// ParseSize reads "7in×4in", "7inx4in", "7x4in", "18cmx10cm" or "1200x800px" (px at dpi). Both
// sides must be positive and at most 100 in (a larger PNG would not fit in memory).
func ParseSize(s string, dpi int) (Size, error) {
	bad := func(why string) (Size, error) {
		return Size{}, errs.Usage("--plot-size %q %s; valid: %s", s, why, SizeHelp)
	}
	if dpi < 10 || dpi > 2400 {
		return Size{}, errs.Usage("--dpi %d is not valid; valid: 10 to 2400 dots per inch", dpi)
	}
	// The separator is × or an x that is not the end of "px".
	low := strings.ReplaceAll(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "×", "x"), "px", "p#")
	parts := strings.Split(low, "x")
	if len(parts) != 2 {
		return bad("is not a size")
	}
	for i := range parts {
		parts[i] = strings.ReplaceAll(parts[i], "p#", "px")
	}
	var out [2]vg.Length
	unitOf := func(p string) (string, string) {
		for _, u := range []string{"in", "cm", "mm", "pt", "px"} {
			if strings.HasSuffix(p, u) {
				return strings.TrimSpace(strings.TrimSuffix(p, u)), u
			}
		}
		return p, ""
	}
	n0, u0 := unitOf(parts[0])
	n1, u1 := unitOf(parts[1])
	if u1 == "" {
		return bad("has no unit")
	}
	if u0 == "" {
		u0 = u1
	}
	for i, nu := range [2][2]string{{n0, u0}, {n1, u1}} {
		v, err := strconv.ParseFloat(nu[0], 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return bad("is not a size")
		}
		if nu[1] == "px" {
			out[i] = vg.Length(v / float64(dpi) * float64(vg.Inch))
		} else {
			out[i] = vg.Length(v) * lengthUnits[nu[1]]
		}
		if out[i] > 100*vg.Inch || out[i] < 0.5*vg.Inch {
			return bad("is out of range (0.5 to 100 in a side)")
		}
	}
	return Size{W: out[0], H: out[1], DPI: dpi}, nil
}

// Formats are the image formats Save writes, by file extension.
var Formats = []string{".png", ".svg", ".pdf"}

// CheckPath refuses a path whose extension names no format Save writes (before any work).
func CheckPath(path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range Formats {
		if f == ext {
			return nil
		}
	}
	return errs.Usage("--plot %q: unknown image format %q; valid: %s", path, ext, strings.Join(Formats, ", "))
}

// Save writes f to path in the format its extension names, atomically (temporary file, then
// rename): a failure leaves no partial file.
func Save(f Figure, path string, s Size) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	if s.DPI == 0 {
		s.DPI = DefaultDPI
	}
	return atomicfile.Write(path, func(out io.Writer) error {
		return Render(f, strings.ToLower(filepath.Ext(path)), s, out)
	})
}

// Render draws f in the format ext (".png", ".svg" or ".pdf") to out.
func Render(f Figure, ext string, s Size, out io.Writer) error {
	var write func(io.Writer) error
	var c vg.CanvasSizer
	writeTo := func(wt io.WriterTo) func(io.Writer) error {
		return func(w io.Writer) error { _, err := wt.WriteTo(w); return err }
	}
	switch ext {
	case ".png":
		// zlib's best speed: a third less time than the default level for files about 4%
		// larger (a mostly white figure compresses well either way).
		img := vgimg.NewWith(vgimg.UseWH(s.W, s.H), vgimg.UseDPI(s.DPI))
		c = img
		write = func(w io.Writer) error {
			b := bufio.NewWriter(w)
			if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(b, img.Image()); err != nil {
				return err
			}
			return b.Flush()
		}
	case ".svg":
		sv := vgsvg.New(s.W, s.H)
		c, write = sv, writeTo(sv)
	case ".pdf":
		pd := vgpdf.New(s.W, s.H)
		c, write = pd, writeTo(pd)
	default:
		return fmt.Errorf("plots: unknown format %q", ext)
	}
	f.draw(draw.New(c))
	return write(out)
}

// draw lays the panels out in a column, the legend to their right.
func (f Figure) draw(dc draw.Canvas) {
	area := dc
	if f.Legended {
		l := f.Legend
		l.Top, l.Left = true, false
		w := l.Rectangle(dc).Size().X + 6
		area = draw.Crop(dc, 0, -w, 0, 0)
		l.YOffs = -20 // below the figure's title line
		l.Draw(draw.Crop(dc, dc.Size().X-w, 0, 0, 0))
	}
	if len(f.Panels) == 1 {
		f.Panels[0].Draw(area)
		return
	}
	tiles := draw.Tiles{Rows: len(f.Panels), Cols: 1, PadY: 6, PadTop: 4, PadBottom: 4}
	rows := make([][]*plot.Plot, len(f.Panels))
	for i, p := range f.Panels {
		rows[i] = []*plot.Plot{p}
	}
	for i, row := range plot.Align(rows, tiles, area) {
		f.Panels[i].Draw(row[0])
	}
}

// TimeUnit picks the unit a time axis reads best in for values up to max seconds: µs, ms, s,
// min, h or days. Divide seconds by scale.
func TimeUnit(max float64) (scale float64, name string) {
	switch {
	case max < 1e-3:
		return 1e-6, "µs"
	case max < 1:
		return 1e-3, "ms"
	case max < 120:
		return 1, "s"
	case max < 2*3600:
		return 60, "min"
	case max < 2*86400:
		return 3600, "h"
	default:
		return 86400, "days"
	}
}

// Palette is the Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008, "Color Universal
// Design", https://jfly.uni-koeln.de/color/), its eight colours in its order, then three of Paul
// Tol's muted scheme (https://personal.sron.nl/~pault/, Fig. 4) for figures with more series.
var Palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0x88, 0x22, 0x55, 0xff}, // Tol wine
	color.RGBA{0x99, 0x99, 0x33, 0xff}, // Tol olive
	color.RGBA{0x33, 0x22, 0x88, 0xff}, // Tol indigo
}

// grey is Tol's pale grey, for what is neither work nor traffic (pipeline bubble, idle time).
var grey = color.RGBA{0xBB, 0xBB, 0xBB, 0xff}

// seriesColours are the fixed colours of names that recur across figures: every network (and
// the collective strategies the RAMP paper compares) keeps its colour in every figure; the
// breakdown's parts keep theirs. Names not listed take the first colour no other series of the
// figure uses.
var seriesColours = map[string]int{
	// networks
	"ramp": 0, "superpod": 1, "topoopt": 2, "torus": 3, "fattree": 4, "alphabeta": 4, "hxmesh": 5, "hyperx": 6,
	"dragonfly": 8, "ideal": 7, "wrht": 9, "oddl": 10, "sipac": 0, "bcube": 8,
	// strategies
	"ring": 1, "hierarchical": 2, "2d-torus": 3, "rhd": 4, "tree": 5,
	// breakdown parts
	"forward": 0, "recompute": 4, "backward": 10, "optimizer": 9, "tensor parallel": 1, "expert parallel": 5,
	"embedding model parallel": 3, "spatial parallel": 6, "context parallel": 8, "pipeline": 2, "data parallel": 7,
	// a collective's time (RAMP Fig. 20): data transfer, latency, reduction
	"h2t": 8, "h2h": 7, "reduction": 10,
	// trace breakdown parts
	"compute": 0, "compute ∩ communication": 4, "exposed communication": 1, "memory": 2,
}

// colours assigns each name its colour: its own where it has one and no earlier name took it,
// otherwise the first unused. Names starting "bubble" or "idle" are grey.
func colours(names []string) []color.Color {
	used := make([]bool, len(Palette))
	out := make([]color.Color, len(names))
	var later []int
	for i, n := range names {
		if strings.HasPrefix(n, "pipeline bubble") || strings.HasPrefix(n, "idle") {
			out[i] = grey
			continue
		}
		if k, ok := seriesColours[colourKey(n)]; ok && !used[k] {
			used[k], out[i] = true, Palette[k]
			continue
		}
		later = append(later, i)
	}
	for _, i := range later {
		k := 0
		for k < len(used) && used[k] {
			k++
		}
		if k == len(used) { // more series than colours: cycle
			k = i % len(Palette)
		} else {
			used[k] = true
		}
		out[i] = Palette[k]
	}
	return out
}

// colourKey is the part of a series name that picks its colour: "ramp (12.8 Tb/s)" → "ramp",
// "tensor parallel comm" → "tensor parallel".
func colourKey(n string) string {
	n = strings.TrimSuffix(strings.ToLower(n), " comm")
	if i := strings.IndexAny(n, " (,:"); i > 0 {
		if _, ok := seriesColours[n]; !ok {
			n = n[:i]
		}
	}
	return n
}
