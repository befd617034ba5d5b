package dlrm

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/nn"
)

// A2ASize says how the embedding all-to-all is sized (reference/ramp.md §6.4 [AMB]).
type A2ASize int

const (
	// A2AShard: every GPU sends its shard's pooled embeddings for the whole global batch,
	// B_global × D_part elements (conservation-consistent; the default).
	A2AShard A2ASize = iota
	// A2ALocal: every GPU receives its local batch's embeddings of every table, b × T × D
	// elements (RAMP Table 10's "batch size per GPU" read as the data-parallel batch).
	A2ALocal
)

var a2aNames = []string{"shard", "local"}

func (a A2ASize) String() string { return a2aNames[a] }

// Config is a DLRM job.
type Config struct {
	Name          string
	Tables        int     // embedding tables (T)
	RowsPerTable  float64 // rows of each table
	Dim           int     // embedding dimension D ("sparse feature size")
	DimPart       int     // columns per shard (0: table-wise first, column-wise as the GPUs require)
	Pooling       int     // lookups per table per sample (multi-hot); 1 = one-hot
	DenseFeatures int
	Bottom        []int // bottom MLP widths after the dense input; the last must be Dim
	Top           []int // top MLP widths after the interaction; the last is the output (1)
	GPUs          int
	GlobalBatch   int // samples per iteration
	// LocalBatch is the MLP batch per GPU (0: the largest that fits memory, up to
	// GlobalBatch/Tables, RAMP Table 10's rule).
	LocalBatch int
	A2A        A2ASize
	Precision  partition.Precision
	// Buckets of the MLP gradient all-reduce (0: PyTorch DDP's 25 MiB).
	BucketBytes units.Bytes
	NoOverlap   bool
	Capacity    units.Bytes
}

// Layout is how the tables are spread: each GPU holds TablesPerGPU shards of DimPart columns.
type Layout struct {
	ShardsPerTable int // column shards per table (D / DimPart)
	DimPart        int
	TablesPerGPU   int // table shards per GPU (> 1 only when GPUs < Tables)
}

// Shard partitions the tables (RAMP §7.2.2 after Mudigere et al. 2022): table-wise first, each
// GPU taking whole tables while there are at least as many tables as GPUs; with more GPUs than
// tables each table is split column-wise into GPUs/Tables shards of D·Tables/GPUs columns.
// An explicit DimPart fixes the shard width: then GPUs must equal Tables·D/DimPart.
func (c Config) Shard() (Layout, error) {
	var p params.Problems
	p.AtLeast("--tables", c.Tables, 1)
	p.AtLeast("--dim", c.Dim, 1)
	p.AtLeast("--gpus", c.GPUs, 1)
	if err := p.Err("dlrm"); err != nil {
		return Layout{}, err
	}
	if c.DimPart > 0 {
		if c.DimPart > c.Dim || c.Dim%c.DimPart != 0 {
			return Layout{}, errs.Usage("dlrm: --dim-part %d must divide the embedding dimension %d", c.DimPart, c.Dim)
		}
		s := c.Dim / c.DimPart
		if c.GPUs != c.Tables*s {
			return Layout{}, errs.Usage("dlrm: --gpus %d must be tables × column shards = %d × %d = %d", c.GPUs, c.Tables, s, c.Tables*s)
		}
		return Layout{ShardsPerTable: s, DimPart: c.DimPart, TablesPerGPU: 1}, nil
	}
	if c.GPUs <= c.Tables {
		if c.Tables%c.GPUs != 0 {
			return Layout{}, errs.Usage("dlrm: --gpus %d must divide the %d tables (table-wise) or be a multiple of them (column-wise)", c.GPUs, c.Tables)
		}
		return Layout{ShardsPerTable: 1, DimPart: c.Dim, TablesPerGPU: c.Tables / c.GPUs}, nil
	}
	if c.GPUs%c.Tables != 0 {
		return Layout{}, errs.Usage("dlrm: --gpus %d must be a multiple of the %d tables to split them column-wise", c.GPUs, c.Tables)
	}
	s := c.GPUs / c.Tables
	if s > c.Dim {
		return Layout{}, errs.Usage("dlrm: %d GPUs would cut each of the %d tables into %d column shards, more than its %d columns; valid: at most %d GPUs",
			c.GPUs, c.Tables, s, c.Dim, c.Tables*c.Dim)
	}
	if c.Dim%s != 0 {
		return Layout{}, errs.Usage("dlrm: %d column shards per table do not divide the embedding dimension %d; use --gpus = %d × a divisor of %d",
			s, c.Dim, c.Tables, c.Dim)
	}
	return Layout{ShardsPerTable: s, DimPart: c.Dim / s, TablesPerGPU: 1}, nil
}

// Validate reports every problem of the non-layout fields at once.
func (c Config) Validate() error {
	var p params.Problems
	p.Positive("--rows", c.RowsPerTable)
	p.Check(c.Precision.OnlyTransformers("dlrm"))
	p.AtLeast("--pooling", c.Pooling, 1)
	p.AtLeast("--dense", c.DenseFeatures, 1)
	p.AtLeast("--global-batch", c.GlobalBatch, 1)
	if c.LocalBatch < 0 {
		p.Addf("--batch %d must be ≥ 0 (0: fill memory)", c.LocalBatch)
	}
	if len(c.Bottom) == 0 || c.Bottom[len(c.Bottom)-1] != c.Dim {
		p.Addf("the bottom MLP %v must end at the embedding dimension %d", c.Bottom, c.Dim)
	}
	if len(c.Top) == 0 {
		p.Addf("the top MLP needs at least its output layer")
	}
	for _, w := range append(append([]int(nil), c.Bottom...), c.Top...) {
		if w < 1 {
			p.Addf("MLP widths %v must be ≥ 1", append(c.Bottom, c.Top...))
			break
		}
	}
	p.Positive("GPU memory", float64(c.Capacity))
	return p.Err("dlrm")
}

// Interactions is the width of the dot interaction's output: the pairwise dot products of the
// T + 1 vectors (T pooled embeddings and the bottom MLP's output) without self-interactions,
// concatenated with the bottom MLP's output (Naumov et al. 2019): T(T+1)/2 + D.
func (c Config) Interactions() int { return c.Tables*(c.Tables+1)/2 + c.Dim }

// mlps builds the bottom and top MLPs for m samples (ReLU between layers).
func (c Config) mlps() (bottom, top *nn.Net, err error) {
	chain := func(name string, in int, widths []int) (*nn.Net, error) {
		b := nn.New(name, in)
		for i, w := range widths {
			l := fmt.Sprintf("%s.%d", name, i)
			b.Linear(l, w, true)
			if i < len(widths)-1 {
				b.Act(l + ".relu")
			}
		}
		return b.Net()
	}
	if bottom, err = chain("bottom", c.DenseFeatures, c.Bottom); err != nil {
		return nil, nil, err
	}
	top, err = chain("top", c.Interactions(), c.Top)
	return bottom, top, err
}

// MLPParams is the bottom and top MLPs' parameter count (replicated on every GPU).
func (c Config) MLPParams() (bottom, top float64, err error) {
	b, t, err := c.mlps()
	if err != nil {
		return 0, 0, err
	}
	return b.Params(), t.Params(), nil
}

// EmbeddingParams is Tables × RowsPerTable × Dim (RAMP Table 10's #Params).
func (c Config) EmbeddingParams() float64 {
	return float64(c.Tables) * c.RowsPerTable * float64(c.Dim)
}

// A2ABytes is one GPU's all-to-all send buffer (nccl-tests size) for an MLP batch of b.
func (c Config) A2ABytes(l Layout, b int) units.Bytes {
	sz := float64(c.Precision.DType().Size())
	if c.A2A == A2ALocal {
		return units.Bytes(float64(b) * float64(c.Tables) * float64(c.Dim) * sz)
	}
	return units.Bytes(float64(c.GlobalBatch) * float64(l.TablesPerGPU*l.DimPart) * sz)
}

// MarshalText renders the name in JSON and YAML.
func (x A2ASize) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *A2ASize) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, a2aNames) }
