package traces

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ddlest/ddlest/internal/errs"
)

// Source formats an importer recognises (MetaSourceFormat).
const (
	FormatKineto = "kineto"          // JSON object with traceEvents (PyTorch profiler with Kineto)
	FormatLegacy = "pytorch-legacy"  // bare JSON array (autograd profiler without Kineto)
	importerVer  = "ddlest-import/1" // MetaImporterVersion
)

// rawEvent is one complete ("ph":"X") event as parsed, before phases and collective sizes are
// resolved (resolve.go). The extra fields carry what the resolver needs.
type rawEvent struct {
	Event
	index int64 // event index in its file, for error messages
	// Name, Shapes and DType as ids of the import's string table (strtab), set with them.
	nameID, shapesID, dtypeID uint32
}

// fileInfo is what a trace file says about itself besides its events.
type fileInfo struct {
	format     string
	rank       int32 // -1 when the file does not say
	worldSize  int32
	deviceName string
	deviceJSON string
	// skipped counts the complete events of categories ddlest does not model, by their
	// category (reported by the import, never dropped without a word).
	skipped map[string]int64
}

// parser streams one trace file. It holds no events: each complete event goes to emit.
type parser struct {
	name string // for errors
	sc   *scanner
	tab  *strtab // interns strings: one table for the whole import
	// categories caches category by cat and name ids.
	categories map[uint64]string
	buf        []byte
	index      int64 // events seen (all phases), for positions
	info       fileInfo
	emit       func(*rawEvent) error
	ev         rawEvent
}

// magicGzip is the gzip header's first two bytes.
var magicGzip = []byte{0x1f, 0x8b}

// utf8BOM is the byte-order mark some editors and Windows tools put before UTF-8 text; JSON
// readers may ignore it (RFC 8259 §8.1), and so does the import.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

func skipBOM(r *bufio.Reader) {
	if b, _ := r.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		_, _ = r.Discard(len(utf8BOM))
	}
}

// parseTrace reads a Kineto or legacy PyTorch-profiler Chrome trace (plain or gzip) from r and
// calls emit for every complete event, in file order, its strings interned in tab (a new table
// when nil). Errors name the file and the position.
func parseTrace(name string, r io.Reader, tab *strtab, emit func(*rawEvent) error) (fileInfo, error) {
	if tab == nil {
		tab = newStrtab()
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(2)
	if len(head) == 0 {
		if err != nil && !errors.Is(err, io.EOF) {
			return fileInfo{}, errs.Usage("%s: %v", name, err)
		}
		return fileInfo{}, errs.Usage("%s: empty file; want a PyTorch profiler trace (Kineto JSON or the legacy JSON array, optionally gzip)", name)
	}
	var in io.Reader = br
	var zr *gzip.Reader
	if bytes.Equal(head, magicGzip) {
		var err error
		if zr, err = gzip.NewReader(br); err != nil {
			return fileInfo{}, errs.Usage("%s: corrupt gzip stream: %v", name, err)
		}
		defer zr.Close()
		zbr := bufio.NewReaderSize(zr, 1<<16)
		skipBOM(zbr)
		in = zbr
	} else {
		skipBOM(br)
	}
	p := &parser{name: name, sc: newScanner(in), tab: tab, categories: map[uint64]string{}, emit: emit, info: fileInfo{rank: -1}}
	err = p.run()
	if err != nil && zr != nil && errs.ExitCode(err) != errs.ExitUsage {
		// Corrupt deflate data can decompress into garbage before the stream's checksum fails:
		// read the rest to tell a corrupt gzip from bad JSON inside a good one.
		if _, derr := io.Copy(io.Discard, zr); derr != nil {
			err = derr
		}
	}
	if err != nil {
		var se *syntaxError
		var fe flate.CorruptInputError
		switch {
		case errs.ExitCode(err) == errs.ExitUsage:
		case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.As(err, &fe):
			err = errs.Usage("%s: corrupt gzip stream after %d bytes of JSON (event %d): %v", name, p.sc.offset(), p.index, err)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			err = errs.Usage("%s: truncated at byte %d (event %d): unexpected end of the JSON", name, p.sc.offset(), p.index)
		case errors.As(err, &se):
			err = errs.Usage("%s: not valid JSON at byte %d (event %d): %s", name, se.off, p.index, se.msg)
		default:
			err = errs.Usage("%s: byte %d (event %d): %v", name, p.sc.offset(), p.index, err)
		}
		return p.info, err
	}
	return p.info, nil
}

func (p *parser) fail(format string, a ...any) error {
	return errs.Usage("%s: event %d (byte %d): %s", p.name, p.index, p.sc.offset(), fmt.Sprintf(format, a...))
}

func (p *parser) run() error {
	sc := p.sc
	switch c := sc.peek(); c {
	case '[':
		p.info.format = FormatLegacy
		sc.pos++
		if err := p.events(); err != nil {
			return err
		}
	case '{':
		p.info.format = FormatKineto
		if err := p.object(); err != nil {
			return err
		}
	default:
		if kindName(c) == "" {
			return sc.unexpected(c, "at the start of a value")
		}
		return errs.Usage("%s: byte 0: a %s, not a PyTorch profiler trace (want a JSON object with traceEvents or a JSON array of events)",
			p.name, kindName(c))
	}
	// Nothing may follow the top-level value.
	if !sc.atEnd() {
		if sc.pos >= sc.end {
			return sc.eof()
		}
		at := sc.offset()
		if err := sc.skip(); err != nil {
			return err // not even JSON
		}
		return errs.Usage("%s: byte %d: data after the end of the trace", p.name, at)
	}
	return nil
}

// object reads a Kineto top-level object: traceEvents is streamed, the small metadata sections
// are kept, anything else is skipped.
func (p *parser) object() error {
	sc := p.sc
	sc.pos++ // '{'
	sawEvents := false
	for first := true; ; {
		k, more, err := sc.member(&first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		switch string(k) {
		case `"traceEvents"`:
			if sc.peek() != '[' {
				return errs.Usage("%s: byte %d: traceEvents is not an array", p.name, sc.offset())
			}
			sc.pos++
			if err := p.events(); err != nil {
				return err
			}
			sawEvents = true
		case `"deviceProperties"`:
			v, err := sc.value()
			if err != nil {
				return err
			}
			p.info.deviceJSON = string(v)
			p.info.deviceName = firstDeviceName(p.info.deviceJSON)
		case `"distributedInfo"`:
			if err := p.distributed(); err != nil {
				return err
			}
		default:
			if err := sc.skip(); err != nil {
				return err
			}
		}
	}
	if !sawEvents {
		return errs.Usage("%s: a JSON object without traceEvents: not a Kineto trace", p.name)
	}
	return nil
}

func (p *parser) distributed() error {
	sc := p.sc
	if sc.peek() != '{' {
		return sc.skip()
	}
	sc.pos++
	for first := true; ; {
		kv, more, err := sc.member(&first)
		if err != nil || !more {
			return err
		}
		k := string(kv) // the scanner reuses its buffer on the next read
		switch k {
		case `"rank"`, `"world_size"`:
			v, err := sc.value()
			if err != nil {
				return err
			}
			n, err := strconv.ParseInt(string(v), 10, 32)
			if err != nil || n < 0 {
				return errs.Usage("%s: distributedInfo %s %s: want an integer ≥ 0", p.name, k, v)
			}
			if k == `"rank"` {
				p.info.rank = int32(n)
			} else {
				p.info.worldSize = int32(n)
			}
		default:
			if err := sc.skip(); err != nil {
				return err
			}
		}
	}
}

// firstDeviceName extracts deviceProperties[0].name (small: decode it plainly).
func firstDeviceName(v string) string {
	d := jsontext.NewDecoder(strings.NewReader(v))
	depth := 0
	for {
		t, err := d.ReadToken()
		if err != nil {
			return ""
		}
		switch t.Kind() {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '"':
			if depth == 2 && t.String() == "name" {
				if n, err := d.ReadToken(); err == nil {
					return n.String()
				}
				return ""
			}
		}
	}
}

// events reads array elements until ']'.
func (p *parser) events() error {
	sc := p.sc
	for first := true; ; {
		more, err := sc.more(']', &first)
		if err != nil || !more {
			return err
		}
		if c := sc.peek(); c != '{' {
			if kindName(c) == "" {
				return sc.unexpected(c, "where an event object should be")
			}
			return p.fail("a %s where an event object should be", kindName(c))
		}
		if err := p.event(); err != nil {
			return err
		}
		p.index++
	}
}

// event parses one event object and emits it when it is a complete event of a kept category.
func (p *parser) event() error {
	sc := p.sc
	sc.pos++ // '{'
	e := &p.ev
	*e = rawEvent{Event: Event{Device: -1, Layer: -1, Phase: "unknown"}, index: p.index}
	var cat string
	var complete bool // ph is "X"
	var catID uint32
	var ts, dur float64
	var hasTS, hasDur, pidNumeric bool
	var pid, tid int64
	for first := true; ; {
		k, more, err := sc.member(&first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		switch string(k) {
		case `"ph"`:
			var v []byte
			if v, err = sc.value(); err != nil {
				return err
			}
			ph := "X"
			if string(v) != `"X"` { // the common case needs no interning
				if ph, _, err = p.strOf(v); err != nil {
					return err
				}
			}
			complete = ph == "X"
		case `"cat"`:
			if cat, catID, err = p.str(); err != nil {
				return err
			}
		case `"name"`:
			if e.Name, e.nameID, err = p.str(); err != nil {
				return err
			}
		case `"ts"`:
			if ts, err = p.num("ts"); err != nil {
				return err
			}
			hasTS = true
		case `"dur"`:
			if dur, err = p.num("dur"); err != nil {
				return err
			}
			hasDur = true
		case `"pid"`:
			if pid, pidNumeric, err = p.id(); err != nil {
				return err
			}
		case `"tid"`:
			if tid, _, err = p.id(); err != nil {
				return err
			}
		case `"args"`:
			if err := p.args(); err != nil {
				return err
			}
		default:
			if err := sc.skip(); err != nil {
				return err
			}
		}
	}
	if !complete {
		return nil // flow, metadata, instant and counter events carry no duration
	}
	e.Category = p.category(cat, catID, e)
	if e.Category == "" {
		if cat == "Trace" {
			return nil // Kineto's span of the whole profiling session, not an event
		}
		if p.info.skipped == nil {
			p.info.skipped = map[string]int64{}
		}
		p.info.skipped[cat]++ // interned: the key allocates nothing
		return nil
	}
	if !hasTS || !hasDur {
		return p.fail("complete event %q without ts or dur", e.Name)
	}
	if dur < 0 {
		return p.fail("dur %g of %q is negative", dur, e.Name)
	}
	// Microseconds (fractional in newer traces) → nanoseconds, which an int64 holds up to 2⁶³ ns
	// (292 years): beyond, the conversion would wrap to negative times and a window of
	// centuries.
	const maxUs = float64(math.MaxInt64/2) / 1e3 // start and end both representable
	if math.Abs(ts) > maxUs || dur > maxUs {
		return p.fail("ts %g µs or dur %g µs of %q is beyond what nanoseconds in an int64 hold (|ts|, dur ≤ %.4g µs)", ts, dur, e.Name, maxUs)
	}
	e.StartNs, e.DurNs = int64(math.Round(ts*1e3)), int64(math.Round(dur*1e3))
	e.Stream = tid
	switch {
	case isDeviceCategory(e.Category):
		if e.Device < 0 && pidNumeric {
			e.Device = int32(pid) // Kineto puts GPU events in the device's "process"
		}
	case (cat == "gpu_user_annotation" || cat == "cuda_sync") && pidNumeric:
		e.Device = int32(pid) // GPU-side ranges and CUPTI's sync records sit on the device's track
	default:
		e.Device = -1
	}
	if e.Category == "collective" && e.Collective == "" {
		e.Collective = kernelCollective(e.Name)
	}
	return p.emit(e)
}

// category is Category(cat, e.Name, format), worked out once per category and name (it reads
// kernel and runtime names: communication libraries' kernels, synchronising calls).
func (p *parser) category(cat string, catID uint32, e *rawEvent) string {
	key := uint64(catID)<<32 | uint64(e.nameID)
	c, ok := p.categories[key]
	if !ok {
		c = Category(cat, e.Name, p.info.format)
		p.categories[key] = c
	}
	return c
}

// args picks the fields ddlest keeps from an event's args.
func (p *parser) args() error {
	sc := p.sc
	if sc.peek() != '{' {
		return sc.skip()
	}
	sc.pos++
	e := &p.ev
	var nelems, outNelems int64
	var dtype string
	var dtypeID uint32
	for first := true; ; {
		k, more, err := sc.member(&first)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		// The integer args ddlest reads ("stream" is validated and dropped: the event's tid is
		// its stream).
		var n int64
		switch string(k) {
		case `"correlation"`:
			n, err = p.integer("correlation")
			e.Correlation = n
		case `"stream"`:
			_, err = p.integer("stream")
		case `"device"`:
			n, err = p.integer("device")
			e.Device = int32(n)
		case `"In msg nelems"`:
			nelems, err = p.integer("In msg nelems")
		case `"Out msg nelems"`:
			outNelems, err = p.integer("Out msg nelems")
		case `"Group size"`:
			n, err = p.integer("Group size")
			e.GroupSize = int32(n)
		case `"Collective name"`:
			var s string
			if s, _, err = p.str(); err == nil {
				e.Collective = CollectiveName(s)
			}
		case `"dtype"`:
			dtype, dtypeID, err = p.str()
		case `"Input Dims"`:
			var v []byte
			if v, err = sc.value(); err == nil {
				e.shapesID = p.internBytes(v)
				e.Shapes = p.tab.strs[e.shapesID]
			}
		case `"Input type"`:
			var v []byte
			if v, err = sc.value(); err == nil && e.DType == "" {
				e.dtypeID = p.firstString(v)
				e.DType = p.tab.strs[e.dtypeID]
			}
		default:
			err = sc.skip()
		}
		if err != nil {
			return err
		}
	}
	if dtype != "" {
		e.DType, e.dtypeID = dtype, dtypeID
		// Bytes is the nccl-tests size S: the input for all ops but all-gather, whose S is the
		// gathered output.
		if e.Collective == "all_gather" && outNelems > 0 {
			nelems = outNelems
		}
		if nelems > 0 {
			size, ok := DTypeSize(dtype)
			if !ok {
				return p.fail("collective dtype %q is not one ddlest knows (valid: %s)", dtype, strings.Join(dtypeNames(), ", "))
			}
			e.Bytes = nelems * size
		}
	}
	return nil
}

// str reads a string value, interned.
func (p *parser) str() (string, uint32, error) {
	v, err := p.sc.value()
	if err != nil {
		return "", 0, err
	}
	return p.strOf(v)
}

// strOf interns a string value's text.
func (p *parser) strOf(v []byte) (string, uint32, error) {
	if v[0] != '"' {
		return "", 0, p.fail("%s where a string should be", v)
	}
	id := p.internBytes(v)
	return p.tab.strs[id], id, nil
}

// internBytes unquotes a JSON string value (or keeps any other value's text) and interns it.
func (p *parser) internBytes(raw []byte) uint32 {
	if raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 {
			raw = raw[1 : len(raw)-1]
		} else if u, err := jsontext.AppendUnquote(p.buf[:0], raw); err == nil {
			p.buf = u
			raw = u
		}
	}
	return p.tab.idBytes(raw)
}

// num reads a number (or a numeric string, as some exporters write) as float64.
func (p *parser) num(field string) (float64, error) {
	v, err := p.sc.value()
	if err != nil {
		return 0, err
	}
	return p.numValue(field, v)
}

func (p *parser) numValue(field string, v []byte) (float64, error) {
	raw := v
	switch kindName(v[0]) {
	case "string":
		raw = raw[1 : len(raw)-1]
	case "number":
	default:
		return 0, p.fail("%s %s is not a number", field, v)
	}
	f, ok := parseNumber(raw)
	if !ok {
		return 0, p.fail("%s %s is not a number", field, v)
	}
	return f, nil
}

func (p *parser) integer(field string) (int64, error) {
	v, err := p.sc.value()
	if err != nil {
		return 0, err
	}
	f, err := p.numValue(field, v)
	if err != nil && v[0] == '"' {
		// Hexadecimal ids as strings: ROCm traces write streams as "0x0" (HTA reads them too).
		if n, ok := parseHex(string(v[1 : len(v)-1])); ok {
			return n, nil
		}
	}
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, p.fail("%s %g is not an integer", field, f)
	}
	return int64(f), nil
}

// parseHex reads a 0x-prefixed hexadecimal integer.
func parseHex(s string) (int64, bool) {
	if len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return 0, false
	}
	n, err := strconv.ParseInt(s[2:], 16, 64)
	return n, err == nil
}

// id reads a pid or tid: a number, or a string (the legacy profiler's "CPU functions").
func (p *parser) id() (n int64, numeric bool, err error) {
	v, err := p.sc.value()
	if err != nil {
		return 0, false, err
	}
	switch v[0] {
	case '"':
		s := p.tab.strs[p.internBytes(v)]
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true, nil
		}
		if n, ok := parseHex(s); ok { // ROCm's 0x… ids
			return n, true, nil
		}
		return 0, false, nil
	case '{', '[', 't', 'f', 'n':
		return 0, false, nil
	}
	f, ok := parseNumber(v)
	if !ok {
		return 0, false, p.fail("id %s is not a number", v)
	}
	return int64(f), true, nil
}

// firstDimsProduct is the element count of the first shape in an "Input Dims" list, e.g.
// [[382132224], [419430400], []] → 382132224 (0 when there is none).
func firstDimsProduct(v string) int64 {
	d := jsontext.NewDecoder(strings.NewReader(v))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '[' {
		return 0
	}
	if t, err := d.ReadToken(); err != nil || t.Kind() != '[' {
		return 0
	}
	n, seen := int64(1), false
	for {
		t, err := d.ReadToken()
		if err != nil || t.Kind() != '0' {
			break
		}
		x, err := t.Int()
		if err != nil {
			return 0
		}
		n *= x
		seen = true
	}
	if !seen {
		return 0
	}
	return n
}

// firstString is the first string of a JSON array ("Input type": ["float", …]), interned (0,
// the empty string, when there is none).
func (p *parser) firstString(v []byte) uint32 {
	sc := scanner{buf: v, end: len(v), keep: -1, err: io.EOF}
	if sc.peek() != '[' {
		return 0
	}
	sc.pos++
	if sc.peek() != '"' {
		return 0
	}
	s, err := sc.value()
	if err != nil {
		return 0
	}
	return p.internBytes(s)
}
