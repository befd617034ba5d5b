package dtype

import "testing"

func TestParseAndSize(t *testing.T) {
	for _, c := range []struct {
		name string
		size float64
	}{{"fp32", 4}, {"fp16", 2}, {"bf16", 2}, {"fp8", 1}} {
		d, err := Parse(c.name)
		if err != nil || d.String() != c.name || float64(d.Size()) != c.size {
			t.Errorf("%s: %v %v %v", c.name, d, d.Size(), err)
		}
	}
	if _, err := Parse("int4"); err == nil {
		t.Error("int4 accepted")
	}
}
