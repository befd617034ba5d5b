package megatron

import (
	"sync"

	"github.com/ddlest/ddlest/partition"
)

// A plan's blocks depend only on the per-GPU geometry (micro-batch, sequence, hidden, heads, TP
// and its collectives' groups, recomputation, dtype, MoE): a sweep or a search builds the same
// layer many times with different pipeline or data-parallel degrees. blockCache keeps the
// blocks of recent geometries; blocks are never modified after they are built, so plans share
// them. The cache is bounded (cleared when full) and safe for concurrent builds.
type blockKey struct {
	g       geom // without its graph and MoE scratch
	ownHead bool
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
	k := blockKey{g: g, ownHead: ownHead}
	k.g.gr, k.g.moeAct = nil, nil
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
