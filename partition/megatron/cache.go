package megatron

import (
	"math"
	"sync"

	"github.com/ddlest/ddlest/partition"
)

// A plan's blocks depend only on the per-GPU geometry (micro-batch, sequence, hidden, heads, TP
// and its collectives' groups, recomputation, dtype, MoE): a sweep or a search builds the same
// layer many times with different pipeline or data-parallel degrees. blockCache keeps the
// blocks of recent geometries; blocks are never modified after they are built, so plans share
// them. The cache is bounded (cleared when full) and safe for concurrent builds.
//
// The key packs every input field of the geometry into one array of words: Go hashes an array
// of integers with one memhash, where the geometry itself (floats, bools between ints) takes a
// call per field, and the lookup runs once per estimate (TestBlockKeyCoversGeometry checks
// that every field but the graph, the MoE scratch and the counts derived from the widths is in
// the key).
type blockKey [blockKeyWords]uint64

const blockKeyWords = 42

// key is g's block-cache key.
func (g *geom) key(ownHead bool) blockKey {
	b := func(v ...bool) uint64 {
		var x uint64
		for i, on := range v {
			if on {
				x |= 1 << i
			}
		}
		return x
	}
	u := func(v int) uint64 { return uint64(v) }
	m, sh, dg := &g.moe, &g.sh, &g.dpGroup
	return blockKey{
		u(g.m), u(g.s), u(g.h), u(g.a), u(g.t), u(g.tpStride), u(g.dpStride),
		u(g.phases), u(g.tpBlock), u(g.epBlock), u(g.cp), u(g.cpStride), u(g.vocab),
		b(g.sp, g.asyncTP, g.tpOverlap, g.flash, ownHead, sh.rms, sh.bias, sh.qkvBias, sh.rope, sh.mla, m.Gated, m.NoBias),
		u(int(g.tpc)), u(int(g.rc)), u(int(sh.act)), u(int(g.dt)), u(int(g.gemmDT)), u(int(g.gradDT)), u(g.zero),
		u(sh.h), u(sh.a), u(sh.kv), u(sh.dh), u(sh.f), u(sh.dv), u(sh.qr), u(sh.kvr), u(sh.dr),
		u(dg.Size), u(dg.Stride), u(dg.Concurrent), u(dg.Every), u(dg.Block),
		u(m.Experts), u(m.TopK), math.Float64bits(m.CapacityFactor), u(m.ExpertHidden), u(m.EP), u(m.SharedHidden), u(m.DenseLayers),
	}
}

type cachedBlocks struct {
	layers      []partition.Block // Repeat 0: the caller sets it
	embed, head partition.Block
}

const blockCacheSize = 4096

var blockCache = struct {
	sync.RWMutex
	m map[blockKey]*cachedBlocks
}{m: map[blockKey]*cachedBlocks{}}

// blocks returns the layer, embedding and head blocks of geometry g, built once.
func blocks(g geom, ownHead bool) *cachedBlocks {
	k := g.key(ownHead)
	blockCache.RLock()
	b, ok := blockCache.m[k]
	blockCache.RUnlock()
	if ok {
		return b
	}
	g.gr = partition.NewGraph(192, 80)
	b = &cachedBlocks{layers: layerBlocks(g, 0)}
	if g.vocab > 0 {
		b.embed, b.head = embeddingBlock(g), headBlock(g, ownHead)
	}
	blockCache.Lock()
	if len(blockCache.m) >= blockCacheSize {
		clear(blockCache.m)
	}
	blockCache.m[k] = b
	blockCache.Unlock()
	return b
}
