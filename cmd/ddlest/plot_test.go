package main

import (
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/figures"
)

// Every command that draws takes --plot, --plot-size and --dpi: the image decodes at the size
// asked (6 in × 4 in at 100 dpi = 600 × 400 px), SVG and PDF by extension.
func TestPlotOnEveryCommand(t *testing.T) {
	dir := t.TempDir()
	trace := gpuTrace(t)
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte("workload: megatron\nmodel: {preset: gpt3-13b}\nexecution: {tp: 8, dp: 8}\ncluster: {preset: dgx-a100}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{
		{"megatron", "--model", "gpt3-13b", "--tp", "8", "--dp", "8"},
		{"dlrm"},
		{"moe"},
		{"resnet"},
		{"collective", "--op", "all-reduce", "--size", "1MB,1GB", "--gpus", "64", "--net", "superpod"},
		{"collective", "--op", "all-reduce", "--size", "1GB", "--gpus", "16,256", "--net", "superpod"},
		{"collective", "--op", "all", "--size", "1GB", "--gpus", "256", "--net", "ramp"},
		{"compare", "gpt3", "--nets", "superpod,torus"},
		{"sweep", "megatron", "--model", "gpt3-13b", "--gpus", "64", "--grid", "tp=1,2,4,8"},
		{"run", job, job},
		{"trace", "show", trace},
	} {
		path := filepath.Join(dir, strings.Join(args[:1], "")+string(rune('a'+i))+".png")
		_, errOut, code := execute(append(args, "--plot", path, "--plot-size", "6inx4in", "--dpi", "100")...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("%v: %v", args, err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != 600 || img.Bounds().Dy() != 400 {
			t.Errorf("%v: %v, %v; want a 600×400 PNG", args, err, img.Bounds())
		}
	}
	for ext, magic := range map[string]string{".svg": "<?xml", ".pdf": "%PDF"} {
		path := filepath.Join(dir, "m"+ext)
		if _, errOut, code := execute("cosmoflow", "--plot", path); code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, code, errOut)
		}
		if raw, _ := os.ReadFile(path); !strings.HasPrefix(string(raw), magic) {
			t.Errorf("%s does not start with %q", path, magic)
		}
	}
}

// A bad --plot, --plot-size or --dpi is one line, exit 2, before any work, and leaves nothing.
func TestPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"cosmoflow", "--plot", filepath.Join(dir, "a.gif")}, []string{`".gif"`, ".png, .svg, .pdf"}},
		{[]string{"cosmoflow", "--plot", filepath.Join(dir, "a.png"), "--plot-size", "big"}, []string{`"big"`, "is not a size", "7inx4in"}},
		{[]string{"cosmoflow", "--plot", filepath.Join(dir, "a.png"), "--plot-size", "7x4"}, []string{`"7x4"`, "has no unit"}},
		{[]string{"cosmoflow", "--plot", filepath.Join(dir, "a.png"), "--dpi", "0"}, []string{"--dpi 0", "10 to 2400"}},
		{[]string{"cosmoflow", "--plot-size", "7inx4in"}, []string{"--plot-size needs --plot"}},
		{[]string{"collective", "--plot", filepath.Join(dir, "a.bmp")}, []string{`".bmp"`}},
		{[]string{"sweep", "megatron", "--grid", "tp=1,2", "--plot", filepath.Join(dir, "a.jpg")}, []string{`".jpg"`}},
		{[]string{"trace", "show", "missing.parquet", "--plot", filepath.Join(dir, "a.tiff")}, []string{`".tiff"`}},
	} {
		out, errOut, code := execute(c.args...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line, exit 2", c.args, code, out, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: %q does not say %q", c.args, errOut, w)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad input left %d files", len(entries))
	}
}

// figures: --help lists exactly what is produced; --only draws one; bad input is one line,
// exit 2, and leaves nothing.
func TestFiguresCommand(t *testing.T) {
	help, _, _ := execute("figures", "--help")
	for _, f := range figures.All() {
		if !strings.Contains(help, f.Name) {
			t.Errorf("figures --help does not list %s", f.Name)
		}
	}
	dir := t.TempDir()
	out, errOut, code := execute("figures", "--out", dir, "--only", "ramp-fig18")
	if code != 0 || !strings.Contains(out, "ramp-fig18.png") {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files, want ramp-fig18.png and .csv", len(entries))
	}
	file := filepath.Join(dir, "ramp-fig18.csv")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"figures", "--out", dir, "--only", "fig99"}, `--only "fig99" is not a figure; valid: ` + strings.Join(figures.Names(), ", ")},
		{[]string{"figures"}, "needs --out"},
		{[]string{"figures", "--out", file}, "is a file"},
		{[]string{"figures", "--out", filepath.Join(file, "sub")}, "cannot be created"},
	} {
		o, e, code := execute(c.args...)
		if code != 2 || o != "" || !strings.Contains(e, c.want) || strings.Count(strings.TrimSpace(e), "\n") != 0 {
			t.Errorf("%v: exit %d, %q %q; want 2 and %q", c.args, code, o, e, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("bad input left files: %d entries", len(entries))
	}
}
