package params

import (
	"slices"
	"testing"
)

// lengthConfig has two alternative ways to give one quantity, as a run's training length.
type lengthConfig struct {
	Run struct {
		Steps  float64 `json:"steps" excludes:"tokens"`
		Tokens float64 `json:"tokens" excludes:"steps"`
		Batch  int     `json:"batch"`
	} `json:"run"`
}

// A layer that gives one alternative replaces the other from the layers below; within one
// layer both stay (the config's validation names the conflict); a zero value replaces nothing.
func TestExcludes(t *testing.T) {
	preset := func() *lengthConfig { c := &lengthConfig{}; c.Run.Tokens, c.Run.Batch = 300e9, 512; return c }

	c := preset()
	if err := SetPath(c, "steps", "10"); err != nil {
		t.Fatal(err)
	}
	if c.Run.Steps != 10 || c.Run.Tokens != 0 || c.Run.Batch != 512 {
		t.Errorf("SetPath steps=10 over tokens: %+v, want steps 10, tokens 0, batch kept", c.Run)
	}
	c = preset()
	if err := SetPath(c, "run.steps", "0"); err != nil {
		t.Fatal(err)
	}
	if c.Run.Tokens != 300e9 {
		t.Errorf("SetPath steps=0 cleared tokens: %+v", c.Run)
	}

	for _, tc := range []struct {
		doc           string
		steps, tokens float64
	}{
		{`{"run": {"steps": 10}}`, 10, 0},              // replaces the preset's tokens
		{`{"run": {"steps": 10, "tokens": 5}}`, 10, 5}, // one layer: both stay
		{`{"run": {"steps": 0}}`, 0, 300e9},            // zero replaces nothing
		{"run:\n  batch: 8\n", 0, 300e9},               // other keys leave it alone
		{`{"run": {"tokens": 7}}`, 0, 7},               // the same key: plain assignment
	} {
		c := preset()
		if err := Decode([]byte(tc.doc), "layer.json", c); err != nil {
			t.Fatal(err)
		}
		if c.Run.Steps != tc.steps || c.Run.Tokens != tc.tokens {
			t.Errorf("%s over the preset: steps %g tokens %g, want %g and %g", tc.doc, c.Run.Steps, c.Run.Tokens, tc.steps, tc.tokens)
		}
	}

	s, err := NewSetter(preset(), "steps")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"4", "0"} {
		c := preset()
		v, err := s.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		s.Apply(c, v)
		if wantTokens := map[string]float64{"4": 0, "0": 300e9}[text]; c.Run.Tokens != wantTokens {
			t.Errorf("Setter steps=%s: tokens %g, want %g", text, c.Run.Tokens, wantTokens)
		}
	}

	ex, err := Excludes(preset(), "steps")
	if err != nil || !slices.Equal(ex, []string{"run.tokens"}) {
		t.Errorf("Excludes(steps) = %v, %v; want [run.tokens]", ex, err)
	}
	if ex, _ := Excludes(preset(), "batch"); len(ex) != 0 {
		t.Errorf("Excludes(batch) = %v, want none", ex)
	}
}
