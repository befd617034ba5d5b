package traces

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

// scanAll reads one value and the end of the input, through a reader that returns one byte at a
// time when slow (every refill path of the scanner), and returns the value's raw text.
func scanAll(data []byte, slow bool) ([]byte, bool) {
	r := bytes.NewReader(data)
	sc := newScanner(r)
	if slow {
		sc = newScanner(iotest.OneByteReader(r))
		sc.buf = make([]byte, 4) // grows as values need
	}
	v, err := sc.value()
	v = bytes.Clone(v) // the next read may reuse the buffer
	if err != nil || !sc.atEnd() {
		return nil, false
	}
	return v, true
}

// checkScan: the scanner accepts exactly what encoding/json accepts (RFC 8259; on valid UTF-8,
// as the scanner, like the importer before it, lets invalid UTF-8 through), and a value's raw
// text is the input's, whitespace around it trimmed.
func checkScan(t *testing.T, data []byte) {
	if !utf8.Valid(data) || bytes.Count(data, []byte("[")) > 1000 {
		return
	}
	want := json.Valid(data)
	for _, slow := range []bool{false, true} {
		v, ok := scanAll(data, slow)
		if ok != want {
			t.Fatalf("%q (one byte at a time: %v): scanner accepts %v, encoding/json %v", data, slow, ok, want)
		}
		if ok && !bytes.Equal(v, bytes.TrimSpace(data)) {
			t.Fatalf("%q: raw value %q", data, v)
		}
	}
}

func TestScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, ` {"a" : [1, -2.5e+3, 0.0, true, false, null, "x\"y\\u00e9\n"]} `, `"\ud800"`, `0`, `-0`, `1E5`,
		`01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `tru`, `nulls`, `"a`,
		`"\x"`, `"\u12"`, "\"a\tb\"", `[`, `{"a":`, `}`, `[1]]`, `""`, `"\/\b\f\r\t"`, `[[[[]]]]`, `{"a":{"b":{"c":[]}}}`,
	} {
		checkScan(t, []byte(s))
	}
}

// FuzzScanner: the scanner against encoding/json on arbitrary input. The seeds run in CI.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u00e9"],"b":null}`, `[1,]`, `"\x"`, `-01`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkScan)
}

// parseNumber is strconv.ParseFloat for JSON numbers: its fast path is exact (Clinger's), so the
// two agree bit for bit, on profiler timestamps (µs with three decimals, up to 16 significant
// digits) and on the rest.
func TestParseNumberIsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	nums := []string{"0", "-0", "1", "4458676838976.478", "9007199254740993", "9007199254740992.5", "123456789012345678901",
		"1e22", "1e23", "1e-5", "0.1", "0.30000000000000004", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
		"0.000000000000000000000000001", "12345.678901234567890123"}
	for range 100000 {
		us := rng.Int64N(1 << 53)
		nums = append(nums, strconv.FormatFloat(float64(us)/1e3, 'f', 3, 64), strconv.FormatInt(us, 10)+"."+strconv.Itoa(rng.IntN(1000)),
			strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64))
	}
	for _, n := range nums {
		want, err := strconv.ParseFloat(n, 64)
		got, ok := parseNumber([]byte(n))
		if ok != (err == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: parseNumber %v (%v), strconv %v (%v)", n, got, ok, want, err)
		}
	}
}

// hasSpecial agrees with the byte table on every byte value in every position of a word, and
// on random words.
func TestHasSpecial(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			x := uint64(0)
			for k := 7; k >= 0; k-- {
				x = x<<8 | uint64(w[k])
			}
			if got := hasSpecial(x); got != strSpecial[c] {
				t.Fatalf("byte %#x at %d: hasSpecial %v, want %v", c, pos, got, strSpecial[c])
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1_000_000 {
		x, want := rng.Uint64(), false
		for k := range 8 {
			want = want || strSpecial[byte(x>>(8*k))]
		}
		if hasSpecial(x) != want {
			t.Fatalf("%#x: hasSpecial %v, want %v", x, !want, want)
		}
	}
}
