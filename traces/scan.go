package traces

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// scanner is the importer's JSON reader: a validating byte scanner over one buffer that hands
// out values as slices of it (raw JSON text, strings with their quotes, as encoding/json/jsontext
// returns them), valid until the next read. Nothing is allocated per value; the buffer grows
// only for a value longer than itself. It accepts what RFC 8259 accepts, with invalid UTF-8 and
// duplicate names allowed (as the jsontext decoder it replaces was configured), and nesting up
// to maxDepth.
type scanner struct {
	r    io.Reader
	buf  []byte
	pos  int   // next unread byte
	end  int   // bytes of buf filled
	keep int   // when ≥ 0, the start of a value being read whole (kept across refills)
	base int64 // input offset of buf[0]
	err  error // the reader's error, once it returned one (io.EOF at the end)
}

// maxDepth bounds nesting, as jsontext does (its maxNestingDepth, 10000).
const maxDepth = 10000

// syntaxError is invalid JSON at an input offset.
type syntaxError struct {
	off int64
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg) }

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 256<<10), keep: -1}
}

// offset is the input offset of the next unread byte.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

// fill reads more input after s.end, first moving the bytes still needed (from s.keep, else
// s.pos) to the front, and growing the buffer when they fill it. It reports whether it read any.
func (s *scanner) fill() bool {
	if s.err != nil {
		return false
	}
	from := s.pos
	if s.keep >= 0 {
		from = s.keep
		s.keep = 0
	}
	if from > 0 {
		copy(s.buf, s.buf[from:s.end])
		s.end -= from
		s.pos -= from
		s.base += int64(from)
	}
	if s.end == len(s.buf) {
		s.buf = append(s.buf, make([]byte, len(s.buf))...)
	}
	for range 100 { // io.Reader may return 0, nil: try again, a bounded number of times
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.err = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
	s.err = io.ErrNoProgress
	return false
}

// eof is the error for input that ends (or fails) inside a value.
func (s *scanner) eof() error {
	if s.err == nil || errors.Is(s.err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return s.err
}

func (s *scanner) syntax(at int, format string, a ...any) error {
	return &syntaxError{off: s.base + int64(at), msg: fmt.Sprintf(format, a...)}
}

// peek skips whitespace and returns the next byte without consuming it, or 0 at the end of the
// input (or on a read error: s.eof, s.err). Its first test is small enough to be inlined: no
// call when the next byte is there and not whitespace.
func (s *scanner) peek() byte {
	if s.pos < s.end && s.buf[s.pos] > ' ' {
		return s.buf[s.pos]
	}
	return s.skipSpace()
}

func (s *scanner) skipSpace() byte {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c
			}
		}
		if !s.fill() {
			return 0
		}
	}
}

// atEnd reports whether only whitespace is left.
func (s *scanner) atEnd() bool {
	return s.peek() == 0 && s.pos >= s.end && (s.err == nil || errors.Is(s.err, io.EOF))
}

// kindName names the value a byte starts, as jsontext's Kind does ("" when none does).
func kindName(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{', '[':
		return string(c)
	case 't':
		return "true"
	case 'f':
		return "false"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "number"
	}
	return ""
}

// unexpected is the error for byte c (0: the end of the input) where a value or token should be.
func (s *scanner) unexpected(c byte, where string) error {
	if c == 0 && s.pos >= s.end {
		return s.eof()
	}
	return s.syntax(s.pos, "invalid character %q %s", c, where)
}

// more steps through an object's members or an array's elements: it consumes the comma before
// every member but the first and the closing bracket after the last, and reports whether a
// member follows.
func (s *scanner) more(closing byte, first *bool) (bool, error) {
	c := s.peek()
	if c == closing {
		s.pos++
		return false, nil
	}
	if !*first {
		if c != ',' {
			return false, s.unexpected(c, "after a value (want ',' or '"+string(closing)+"')")
		}
		s.pos++
	}
	*first = false
	return true, nil
}

// member steps to an object's next member (more, then key): its name, or ok false after the
// last.
func (s *scanner) member(first *bool) (name []byte, ok bool, err error) {
	if ok, err = s.more('}', first); err != nil || !ok {
		return nil, false, err
	}
	name, err = s.key()
	return name, err == nil, err
}

// key reads an object member's name (raw, with its quotes) and the colon after it.
func (s *scanner) key() ([]byte, error) {
	if c := s.peek(); c != '"' {
		return nil, s.unexpected(c, "where an object member's name should be")
	}
	start, err := s.scanString()
	if err != nil {
		return nil, err
	}
	// The name stays in the buffer while the colon is read: keep it (an enclosing value
	// being read whole keeps it already).
	abs, outer := s.base+int64(start), s.keep >= 0
	if !outer {
		s.keep = start
	}
	c := s.peek()
	if !outer {
		s.keep = -1
	}
	start = int(abs - s.base)
	if c != ':' {
		return nil, s.unexpected(c, "after an object member's name (want ':')")
	}
	k := s.buf[start:s.pos]
	s.pos++
	return k, nil
}

// value reads one value whole and returns its raw text.
func (s *scanner) value() ([]byte, error) {
	c := s.peek()
	if c == '"' {
		start, err := s.scanString()
		if err != nil {
			return nil, err
		}
		return s.buf[start:s.pos], nil
	}
	abs, outer := s.offset(), s.keep >= 0
	if !outer {
		s.keep = s.pos
	}
	err := s.skipDepth(0)
	if !outer {
		s.keep = -1
	}
	if err != nil {
		return nil, err
	}
	return s.buf[int(abs-s.base):s.pos], nil
}

// skip reads one value and discards it (still validating it).
func (s *scanner) skip() error { return s.skipDepth(0) }

func (s *scanner) skipDepth(depth int) error {
	c := s.peek()
	switch c {
	case '"':
		_, err := s.scanString()
		return err
	case '{', '[':
		if depth >= maxDepth {
			return s.syntax(s.pos, "nesting deeper than %d", maxDepth)
		}
		s.pos++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		for first := true; ; {
			ok, err := s.more(closing, &first)
			if err != nil || !ok {
				return err
			}
			if closing == '}' {
				if _, err := s.key(); err != nil {
					return err
				}
			}
			if err := s.skipDepth(depth + 1); err != nil {
				return err
			}
		}
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.scanNumber()
	}
	return s.unexpected(c, "at the start of a value")
}

func (s *scanner) literal(lit string) error {
	for s.end-s.pos < len(lit) {
		if !s.fill() {
			return s.eof()
		}
	}
	if string(s.buf[s.pos:s.pos+len(lit)]) != lit {
		return s.syntax(s.pos, "invalid literal (want %s)", lit)
	}
	s.pos += len(lit)
	return nil
}

// strSpecial marks the bytes that end a run of plain string bytes: the quote, the backslash and
// the control characters JSON strings may not hold.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// scanString reads the string at s.pos (its opening quote) and returns the index of that quote;
// the string is s.buf[start:s.pos] afterwards.
func (s *scanner) scanString() (start int, err error) {
	i := s.pos + 1 // relative to s.pos across refills
	for {
		// Eight bytes at a time while none of them is special (names are most of a trace's
		// bytes), then byte by byte.
		for i+8 <= s.end && !hasSpecial(binary.LittleEndian.Uint64(s.buf[i:])) {
			i += 8
		}
		for i < s.end && !strSpecial[s.buf[i]] {
			i++
		}
		if i >= s.end {
			rel := i - s.pos
			if !s.fill() {
				return 0, s.eof()
			}
			i = s.pos + rel
			continue
		}
		switch c := s.buf[i]; {
		case c == '"':
			start, s.pos = s.pos, i+1
			return start, nil
		case c == '\\':
			rel := i - s.pos
			for s.end-(s.pos+rel) < 2 {
				if !s.fill() {
					return 0, s.eof()
				}
			}
			i = s.pos + rel
			switch s.buf[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for s.end-(s.pos+rel) < 6 {
					if !s.fill() {
						return 0, s.eof()
					}
				}
				i = s.pos + rel
				for _, h := range s.buf[i+2 : i+6] {
					if !isHex(h) {
						return 0, s.syntax(i, "invalid escape sequence %q in a string", s.buf[i:i+6])
					}
				}
				i += 6
			default:
				return 0, s.syntax(i, "invalid escape sequence %q in a string", s.buf[i:i+2])
			}
		default:
			return 0, s.syntax(i, "invalid control character %q in a string", c)
		}
	}
}

// hasSpecial reports whether any of the eight bytes in x is special in a string: below 0x20, a
// quote or a backslash. SWAR tests (Anderson, "Bit Twiddling Hacks", graphics.stanford.edu/
// ~seander/bithacks.html: "Determine if a word has a byte less than n", exact as a yes/no for
// n ≤ 128, and "Determine if a word has a zero byte" applied to x XOR the byte repeated).
func hasSpecial(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less := (x - ones*0x20) & ^x & highs
	q, b := x^(ones*'"'), x^(ones*'\\')
	quote := (q - ones) & ^q & highs
	backslash := (b - ones) & ^b & highs
	return less|quote|backslash != 0
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// numByte marks the bytes a number may hold.
var numByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eE") {
		t[c] = true
	}
	return t
}()

// scanNumber reads the number at s.pos.
func (s *scanner) scanNumber() error {
	i := s.pos
	for {
		for i < s.end && numByte[s.buf[i]] {
			i++
		}
		if i < s.end {
			break
		}
		rel := i - s.pos
		more := s.fill()
		i = s.pos + rel
		if !more {
			if !errors.Is(s.err, io.EOF) {
				return s.err
			}
			break
		}
	}
	n, complete := numberPrefix(s.buf[s.pos:i])
	switch {
	case n == i-s.pos && complete:
		s.pos = i
		return nil
	case n == i-s.pos && i >= s.end:
		return s.eof()
	case n == i-s.pos:
		return s.syntax(i, "invalid character %q in a number", s.buf[i])
	}
	return s.syntax(s.pos+n, "invalid character %q in a number", s.buf[s.pos+n])
}

// numberPrefix checks b against JSON's number grammar, -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?:
// it returns how many bytes of b follow it, and whether they make a whole number.
func numberPrefix(b []byte) (n int, complete bool) {
	i := 0
	digits := func() int {
		k := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return i - k
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i == len(b):
		return i, false
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		digits()
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	return i, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
	1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNumber converts a JSON number's text to the float64 nearest to it, as strconv.ParseFloat
// does (and false where that fails: out of range). Profiler timestamps (≤ 16 significant digits,
// a few decimals) take the exact fast path of Clinger (1990), also strconv's first: a mantissa
// below 2⁵³ and a power of ten up to 10²² are both exact floats, so one multiplication or
// division rounds correctly; anything else goes to strconv.
func parseNumber(b []byte) (float64, bool) {
	i, neg := 0, false
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	var m uint64
	nd, exp := 0, 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		m = m*10 + uint64(b[i]-'0')
		nd++
	}
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
			m = m*10 + uint64(b[i]-'0')
			nd++
			exp--
		}
	}
	if i == len(b) && nd > 0 && nd <= 19 && m < 1<<53 && -exp < len(pow10) {
		f := float64(m)
		if exp < 0 {
			f /= pow10[-exp]
		}
		if neg {
			f = -f
		}
		return f, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}
