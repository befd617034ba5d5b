package params

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

type testConfig struct {
	BandwidthGbit float64 `json:"bandwidth_gbit_per_s" help:"per-GPU bandwidth" source:"[X] test"`
	Ranks         int     `json:"ranks"`
	Bidir         bool    `json:"bidirectional"`
	Name          string  `json:"name"`
	hidden        int
}

func TestSetAndList(t *testing.T) {
	c := &testConfig{BandwidthGbit: 200}
	if err := SetPairs(c, []string{"bandwidth_gbit_per_s=400", "ranks=8", "bidirectional=true", "name=x"}); err != nil {
		t.Fatal(err)
	}
	if c.BandwidthGbit != 400 || c.Ranks != 8 || !c.Bidir || c.Name != "x" {
		t.Fatalf("got %+v", c)
	}
	l := List(c)
	if len(l) != 4 || l[0].Key != "bandwidth_gbit_per_s" || l[0].Value != "400" || l[0].Source != "[X] test" {
		t.Errorf("List = %+v", l)
	}
}

func TestSetErrors(t *testing.T) {
	c := &testConfig{}
	for _, pair := range []string{"bandwidth_gbit_per_s=fast", "ranks=1.5", "bidirectional=maybe", "colour=red", "noequals"} {
		err := SetPairs(c, []string{pair})
		if err == nil || errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("%q: err = %v, want usage error", pair, err)
		}
	}
	err := Set(c, "colour", "red")
	if !strings.Contains(err.Error(), "bandwidth_gbit_per_s, ranks, bidirectional, name") {
		t.Errorf("unknown key message %q should list the valid keys", err)
	}
}

func TestDecodeJSON(t *testing.T) {
	c := &testConfig{}
	if err := DecodeJSON(c, strings.NewReader(`{"ranks": 4, "bandwidth_gbit_per_s": 100}`), "c.json"); err != nil {
		t.Fatal(err)
	}
	if c.Ranks != 4 || c.BandwidthGbit != 100 {
		t.Fatalf("got %+v", c)
	}
	bad := map[string]string{
		"unknown field": `{"rank": 4}`,
		"syntax":        `{"ranks": }`,
		"type":          `{"ranks": "four"}`,
		"empty":         ``,
		"trailing":      `{"ranks": 4} {}`,
	}
	for name, in := range bad {
		err := DecodeJSON(&testConfig{}, strings.NewReader(in), "c.json")
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.HasPrefix(err.Error(), "c.json: ") {
			t.Errorf("%s: err = %v", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: multi-line error %q", name, err)
		}
	}
}

func TestProblems(t *testing.T) {
	var p Problems
	if p.Err("x") != nil {
		t.Fatal("no problems should be nil")
	}
	p.Addf("a < %d", 1)
	p.Addf("b")
	if got := p.Err("cfg").Error(); got != "cfg: a < 1; b" {
		t.Errorf("got %q", got)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	f.Add(`{"ranks": 4}`)
	f.Add(`{"bandwidth_gbit_per_s": 1e400}`)
	f.Add(`[1,2]`)
	f.Fuzz(func(t *testing.T, in string) {
		_ = DecodeJSON(&testConfig{}, strings.NewReader(in), "fuzz.json")
	})
}

func TestProblemHelpers(t *testing.T) {
	var p Problems
	p.Positive("a", 0)
	p.Positive("b", 1)
	p.NonNegative("c", -1)
	p.NonNegative("d", 0)
	p.AtLeast("e", 0, 1)
	p.AtLeast("f", 2, 1)
	p.OneOf("g", "x", []string{"y", "z"})
	p.OneOf("h", "y", []string{"y", "z"})
	p.Check(nil)
	p.Check(errs.Usage("boom"))
	want := `cfg: a 0 must be > 0; c -1 must be ≥ 0; e 0 must be ≥ 1; g "x" is not valid; valid: y, z; boom`
	if got := p.Err("cfg").Error(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Parameters several networks share live in an embedded struct; they list and set as the
// struct's own, and decode from JSON the same way.
func TestEmbedded(t *testing.T) {
	type shared struct {
		LinkNs float64 `json:"link_ns" help:"cable latency" source:"[P] x"`
	}
	type cfg struct {
		Radix int `json:"radix" help:"ports" source:"[P] y"`
		shared
	}
	c := &cfg{Radix: 64, shared: shared{LinkNs: 20}}
	ps := List(c)
	if len(ps) != 2 || ps[1].Key != "link_ns" || ps[1].Value != "20" {
		t.Fatalf("list %+v", ps)
	}
	if err := Set(c, "link_ns", "30"); err != nil || c.LinkNs != 30 {
		t.Errorf("set: %v %v", err, c.LinkNs)
	}
	if err := Set(c, "radix", "32"); err != nil || c.Radix != 32 {
		t.Errorf("set radix: %v", err)
	}
	if err := Set(c, "nope", "1"); err == nil || !strings.Contains(err.Error(), "radix, link_ns") {
		t.Errorf("unknown key: %v", err)
	}
}

// TestSetPathResolve: a path is a leaf's full path or a unique suffix of whole keys (hand-made
// tree: a.tp, a.pp, b.tp).
func TestSetPathResolve(t *testing.T) {
	type sub struct {
		TP int `json:"tp"`
		PP int `json:"pp"`
	}
	type other struct {
		TP int `json:"tp"`
	}
	type tree struct {
		A sub   `json:"a"`
		B other `json:"b"`
	}
	c := &tree{}
	if err := SetPath(c, "a.tp", "2"); err != nil || c.A.TP != 2 {
		t.Errorf("full path: %v, a.tp = %d", err, c.A.TP)
	}
	if err := SetPath(c, "pp", "4"); err != nil || c.A.PP != 4 {
		t.Errorf("unique suffix: %v, a.pp = %d", err, c.A.PP)
	}
	if err := SetPath(c, "tp", "8"); err == nil || !strings.Contains(err.Error(), "ambiguous; give one of a.tp, b.tp") {
		t.Errorf("ambiguous suffix: %v", err)
	}
	// "p" ends "a.tp" and "a.pp" but is no whole key of either.
	if err := SetPath(c, "p", "1"); err == nil || !strings.Contains(err.Error(), `unknown key "p"; valid: a.tp, a.pp, b.tp`) {
		t.Errorf("partial key: %v", err)
	}
}
