package rows

import "testing"

func TestCellString(t *testing.T) {
	for _, c := range []struct {
		cell Cell
		want string
	}{
		{Cell{Kind: Int, Num: 1536}, "1536"},
		{Cell{Kind: Float, Num: 25271582720}, "25271582720"}, // bytes: no exponent
		{Cell{Kind: Float, Num: 2.5e-3}, "0.0025"},
		{Cell{Kind: Float, Num: 2.5524561472929674e+06}, "2.5524561472929674e+06"},
		{Cell{Kind: Bool, Num: 1}, "true"},
		{Cell{Kind: Text, Text: "superpod"}, "superpod"},
		{Cell{Kind: Float, Num: 3, Null: true}, ""},
	} {
		if got := c.cell.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cell, got, c.want)
		}
	}
}
