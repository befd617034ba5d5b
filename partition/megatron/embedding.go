package megatron

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// tokenIDBytes is the size of one token id (int64, PyTorch's default index type).
const tokenIDBytes = 8

// embeddingBlock is the vocabulary-parallel input embedding (each TP rank holds V/t rows and the
// partial lookups are summed: an all-reduce, or a reduce-scatter with sequence parallelism;
// Megatron-LM VocabParallelEmbedding) plus learned absolute position embeddings and dropout.
func embeddingBlock(g geom) partition.Block {
	m, s, h, t := g.m, g.s, g.h, g.t
	dt, sz, gr := g.dt, g.sz(), g.gr
	table := gr.Shape(g.vocab/t, h)
	ids := gr.Shape(m, s)
	out := gr.Shape(m, s, h)
	x := gr.Shape(m, g.sl(), h)
	full := float64(m*s) * float64(h)
	resid := float64(m*g.sl()) * float64(h)
	idBytes := units.Bytes(float64(m*s) * tokenIDBytes)

	lookup := partition.Op{
		Name: "embed.lookup", Kind: partition.Embedding, Phase: partition.Forward, DType: dt,
		Inputs: gr.Inputs(ids, table), Output: out,
		Read: units.Bytes(full*sz) + idBytes, Written: units.Bytes(full * sz),
	}
	pos := gr.Pointwise("embed.position", partition.Elementwise, partition.Forward, x, dt, partition.FlopResidual, 2, 1, 0, units.Bytes(resid*partition.MaskBytes))
	pos.Saved = embeddingActivations(g)
	posBwd := gr.Pointwise("embed.position.bwd", partition.Elementwise, partition.Backward, x, dt, partition.FlopDropout, 1, 1,
		units.Bytes(resid*partition.MaskBytes), units.Bytes(float64(s*h)*sz))
	lookupBwd := partition.Op{
		Name: "embed.lookup.bwd", Kind: partition.Embedding, Phase: partition.Backward, DType: dt,
		Inputs: gr.Inputs(out, ids), Output: table,
		Read: units.Bytes(full*sz) + idBytes, Written: units.Bytes(full * sz),
	}
	var cs []partition.Collective
	if t > 1 {
		if g.sp {
			cs = append(cs, g.tpCollective("sp.embed.fwd", network.ReduceScatter, partition.Forward, 1),
				g.tpCollective("sp.embed.bwd", network.AllGather, partition.Backward, 1))
		} else {
			cs = append(cs, g.tpCollective("tp.embed.fwd", network.AllReduce, partition.Forward, 1))
		}
	}
	return partition.Block{
		Name: "embedding", Repeat: 1,
		Ops:         []partition.Op{lookup, pos, posBwd, lookupBwd},
		Collectives: cs,
		Params:      embeddingParams(g),
	}
}

// embeddingActivations is what the embedding keeps per micro-batch: its dropout mask, sbh bytes
// (the sequence shard with SP).
func embeddingActivations(g geom) units.Bytes {
	return units.Bytes(float64(g.m*g.sl()) * float64(g.h) * partition.MaskBytes)
}

// headActivations is what the head keeps per micro-batch: the final LayerNorm's input, the LM
// head's input (gathered without SP, the shard with it) and the fp32 logits of the cross-entropy,
// 4sbv/t (Korthikanti et al. 2022 §4.1).
func headActivations(g geom) (ln, logits, loss units.Bytes) {
	resid := float64(g.m*g.sl()) * float64(g.h) * g.sz()
	logits = units.Bytes(resid)
	if !g.sp {
		logits = units.Bytes(float64(g.m*g.s) * float64(g.h) * g.sz())
	}
	loss = units.Bytes(float64(g.m*g.s) * float64(g.vocab/g.t) * crossEntropyLogitBytes)
	return units.Bytes(resid), logits, loss
}

// crossEntropyLogitBytes: Megatron-LM computes the vocabulary-parallel cross-entropy on fp32
// logits (Korthikanti et al. 2022 §4.1: "cross entropy … 4sbv/t").
const crossEntropyLogitBytes = 4

// crossEntropyTraffic is the device-memory traffic per logit element of Megatron's
// vocabulary-parallel cross-entropy as it runs by default: unfused, one PyTorch kernel per line
// (cross_entropy_loss_fusion defaults to False in Megatron-Core's ModelParallelConfig; the same
// passes in Megatron-LM since 2020), counted from NVIDIA/Megatron-LM
// megatron/core/tensor_parallel/cross_entropy.py @00611e6e, with z the logits' dtype size and
// f = 4 (fp32):
//
//	forward   logits.float()                 read z, write f (no copy when z = f)
//	          torch.max(dim=-1)              read f
//	          logits -= max                  read f, write f
//	          torch.exp(out=)                read f, write f
//	          exp_logits.sum(dim=-1)         read f
//	          exp_logits.div_(sum)           read f, write f (the softmax kept for backward)
//	backward  grad_input.mul_(grad_output)   read f, write f
//	          the .float() cast's gradient   read f, write z (none when z = f)
//
// bf16 logits: 22 B read and 16 written forward, 8 and 6 backward (52 B per element; the
// per-token gather, mask and reductions' outputs are 1/V of it and left out). Liger-Kernel's
// H100 measurement of this function (megatron-unfused, bf16 [2048, 4, 131072]) checks it
// (TestCrossEntropyTraffic).
func crossEntropyTraffic(z float64) (fwdRead, fwdWritten, bwdRead, bwdWritten float64) {
	const f = crossEntropyLogitBytes
	fwdRead, fwdWritten = 5*f, 3*f
	bwdRead, bwdWritten = f, f
	if z != f { // the fp32 copy and its gradient's cast back
		fwdRead, fwdWritten = fwdRead+z, fwdWritten+f
		bwdRead, bwdWritten = bwdRead+f, bwdWritten+z
	}
	return fwdRead, fwdWritten, bwdRead, bwdWritten
}

// headBlock is the final LayerNorm, the vocabulary-parallel LM head (column-parallel GEMM) and the
// vocabulary-parallel cross-entropy, whose max, target-logit and sum-of-exponentials reductions
// are three fp32 all-reduces of one value per token (Megatron-LM _VocabParallelCrossEntropy).
// ownWeights says whether this GPU holds its own copy of the output weights (untied, or tied with
// the first pipeline stage's embedding).
func headBlock(g geom, ownWeights bool) partition.Block {
	m, s, h, t := g.m, g.s, g.h, g.t
	dt, sz, gr := g.dt, g.sz(), g.gr
	x := gr.Shape(m, g.sl(), h)
	xs := gr.Shape(m*s, h)
	w := gr.Shape(h, g.vocab/t)
	logits := gr.Shape(m*s, g.vocab/t)
	lnExtra := units.Bytes(g.sh.normParams() * sz)
	nl := partition.Elems(logits)

	ln := gr.Pointwise("head.ln_f", partition.Norm, partition.Forward, x, dt, partition.FlopNorm, 1, 1, lnExtra, 0)
	lm := gr.MatMul("head.logits", partition.Forward, xs, w, dt)
	var lossSaved units.Bytes
	ln.Saved, lm.Saved, lossSaved = headActivations(g)
	fr, fw, br, bw := crossEntropyTraffic(sz)
	loss := partition.Op{
		Name: "head.loss", Kind: partition.CrossEntropy, Phase: partition.Forward, DType: dt,
		Inputs: gr.Inputs(logits), Output: gr.Shape(m, s),
		FLOP: units.FLOP(partition.FlopSoftmax * nl),
		Read: units.Bytes(nl * fr), Written: units.Bytes(nl * fw),
		Saved: lossSaved,
	}
	lossBwd := partition.Op{
		Name: "head.loss.bwd", Kind: partition.CrossEntropy, Phase: partition.Backward, DType: dt,
		Inputs: gr.Inputs(logits), Output: logits,
		FLOP: units.FLOP(2 * nl),
		Read: units.Bytes(nl * br), Written: units.Bytes(nl * bw),
	}
	d, wg := gr.LinearBackward("head.logits.dgrad", "head.logits.wgrad", xs, w, dt)
	lnBwd := gr.Pointwise("head.ln_f.bwd", partition.Norm, partition.Backward, x, dt, 2*partition.FlopNorm, 2, 1, lnExtra, lnExtra)

	var cs []partition.Collective
	if t > 1 {
		if g.sp {
			cs = append(cs, g.tpCollective("sp.head.fwd", network.AllGather, partition.Forward, 1),
				g.tpCollective("sp.head.bwd", network.ReduceScatter, partition.Backward, 1))
		} else {
			cs = append(cs, g.tpCollective("tp.head.bwd", network.AllReduce, partition.Backward, 1))
		}
		cs = append(cs, partition.Collective{
			Name: "tp.loss.fwd",
			Collective: network.Collective{Op: network.AllReduce, Bytes: units.Bytes(float64(m*s) * crossEntropyLogitBytes),
				Group: g.tpGroup(), DType: dtype.FP32},
			Dim: partition.DimTP, Phase: partition.Forward, Count: 3,
		})
	}
	return partition.Block{
		Name: "head", Repeat: 1,
		Ops:         []partition.Op{ln, lm, loss, lossBwd, d, wg, lnBwd},
		Collectives: cs,
		Params:      headParams(g, ownWeights),
	}
}
