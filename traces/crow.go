package traces

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// crow is an event as the importer holds it between parsing and writing: strings as indices
// into a table shared by the whole import, enumerations as small integers. 80 bytes in memory
// and in the spill file, against ~150 for Event plus its string headers.
type crow struct {
	start, dur, stream, corr, bytes int64
	rank, device, layer, group      int32
	name, shapes, dtype             uint32
	category, phase, collective     uint8
}

const rowSize = 5*8 + 4*4 + 3*4 + 3

// strtab interns the import's strings.
type strtab struct {
	ids  map[string]uint32
	strs []string
	// enumeration values by index (Categories, Phases, "" + Collectives)
	cats, phases, colls map[string]uint8
	collNames           []string
	keys                []sortEntry // sort's scratch space, reused
}

func newStrtab() *strtab {
	t := &strtab{ids: map[string]uint32{"": 0}, strs: []string{""}, cats: map[string]uint8{}, phases: map[string]uint8{}, colls: map[string]uint8{"": 0}}
	for i, c := range Categories {
		t.cats[c] = uint8(i)
	}
	for i, p := range Phases {
		t.phases[p] = uint8(i)
	}
	t.collNames = append([]string{""}, Collectives...)
	for i, c := range Collectives {
		t.colls[c] = uint8(i + 1)
	}
	return t
}

// idBytes interns a string given as bytes (no allocation when it is known).
func (t *strtab) idBytes(b []byte) uint32 {
	if i, ok := t.ids[string(b)]; ok {
		return i
	}
	s := string(b)
	i := uint32(len(t.strs))
	t.ids[s] = i
	t.strs = append(t.strs, s)
	return i
}

// compact turns a parsed event into a crow: its strings are already interned (the parser set
// their ids); category, phase and collective hold schema values (the parser and resolver produce
// nothing else).
func (t *strtab) compact(e *rawEvent) crow {
	return crow{start: e.StartNs, dur: e.DurNs, stream: e.Stream, corr: e.Correlation, bytes: e.Bytes,
		rank: e.Rank, device: e.Device, layer: e.Layer, group: e.GroupSize,
		name: e.nameID, shapes: e.shapesID, dtype: e.dtypeID,
		category: t.cats[e.Category], phase: t.phases[e.Phase], collective: t.colls[e.Collective]}
}

// expand is a crow's event, with the ids of its strings.
func (t *strtab) expand(c *crow) rawEvent {
	return rawEvent{nameID: c.name, shapesID: c.shapes, dtypeID: c.dtype, Event: Event{Rank: c.rank, Device: c.device, Stream: c.stream, Name: t.strs[c.name], Category: Categories[c.category],
		StartNs: c.start, DurNs: c.dur, Phase: Phases[c.phase], Layer: c.layer, Correlation: c.corr, Shapes: t.strs[c.shapes],
		DType: t.strs[c.dtype], Collective: t.collNames[c.collective], Bytes: c.bytes, GroupSize: c.group}}
}

// compare orders compact rows as compareEvents orders events (rows that differ in rank or start,
// nearly all pairs, without building keys).
func (t *strtab) compare(a, b *crow) int {
	switch {
	case a.rank != b.rank:
		return cmp.Compare(a.rank, b.rank)
	case a.start != b.start:
		return cmp.Compare(a.start, b.start)
	}
	return t.key(a).compare(t.key(b))
}

func (t *strtab) key(c *crow) sortKey {
	return sortKey{rank: c.rank, device: c.device, start: c.start, dur: c.dur, stream: c.stream, corr: c.corr,
		category: Categories[c.category], name: t.strs[c.name]}
}

// sortEntry is what sorting a run moves around: the leading sort columns and the row's index
// (24 bytes, not the row's 80).
type sortEntry struct {
	start, dur int64
	rank       int32
	i          uint32
}

// sort orders rows as compare does: it sorts small entries (the rows themselves, full ties
// aside, are not read) and then moves each row once, following the permutation's cycles.
func (t *strtab) sort(rows []crow) {
	keys := slices.Grow(t.keys[:0], len(rows))[:len(rows)]
	for i := range rows {
		keys[i] = sortEntry{start: rows[i].start, dur: rows[i].dur, rank: rows[i].rank, i: uint32(i)}
	}
	slices.SortFunc(keys, func(a, b sortEntry) int {
		switch {
		case a.rank != b.rank:
			return cmp.Compare(a.rank, b.rank)
		case a.start != b.start:
			return cmp.Compare(a.start, b.start)
		case a.dur != b.dur:
			return cmp.Compare(b.dur, a.dur)
		}
		return t.compare(&rows[a.i], &rows[b.i])
	})
	// rows[k] takes rows[keys[k].i]; a placed position is marked with an index past the end.
	const done = ^uint32(0)
	for k := range keys {
		if keys[k].i == done || keys[k].i == uint32(k) {
			continue
		}
		tmp, j := rows[k], k
		for {
			from := keys[j].i
			keys[j].i = done
			if from == uint32(k) {
				rows[j] = tmp
				break
			}
			rows[j] = rows[from]
			j = int(from)
		}
	}
	t.keys = keys[:0]
}

func (c *crow) encode(b []byte) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(c.start))
	le.PutUint64(b[8:], uint64(c.dur))
	le.PutUint64(b[16:], uint64(c.stream))
	le.PutUint64(b[24:], uint64(c.corr))
	le.PutUint64(b[32:], uint64(c.bytes))
	le.PutUint32(b[40:], uint32(c.rank))
	le.PutUint32(b[44:], uint32(c.device))
	le.PutUint32(b[48:], uint32(c.layer))
	le.PutUint32(b[52:], uint32(c.group))
	le.PutUint32(b[56:], c.name)
	le.PutUint32(b[60:], c.shapes)
	le.PutUint32(b[64:], c.dtype)
	b[68], b[69], b[70] = c.category, c.phase, c.collective
}

func (c *crow) decode(b []byte) {
	le := binary.LittleEndian
	c.start = int64(le.Uint64(b[0:]))
	c.dur = int64(le.Uint64(b[8:]))
	c.stream = int64(le.Uint64(b[16:]))
	c.corr = int64(le.Uint64(b[24:]))
	c.bytes = int64(le.Uint64(b[32:]))
	c.rank = int32(le.Uint32(b[40:]))
	c.device = int32(le.Uint32(b[44:]))
	c.layer = int32(le.Uint32(b[48:]))
	c.group = int32(le.Uint32(b[52:]))
	c.name = le.Uint32(b[56:])
	c.shapes = le.Uint32(b[60:])
	c.dtype = le.Uint32(b[64:])
	c.category, c.phase, c.collective = b[68], b[69], b[70]
}
