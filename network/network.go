package network

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
)

// Op is an MPI collective operation.
type Op int

const (
	AllReduce Op = iota
	ReduceScatter
	AllGather
	Reduce
	Broadcast
	Scatter
	Gather
	AllToAll
	Barrier
	SendRecv

	// NumOps is the number of ops.
	NumOps = SendRecv + 1
)

var opNames = []string{"all-reduce", "reduce-scatter", "all-gather", "reduce", "broadcast", "scatter",
	"gather", "all-to-all", "barrier", "send-recv"}

func (o Op) String() string { return opNames[o] }

// MarshalText renders the op name in JSON.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// ParseOp reads an op name ("all-reduce", ...).
func ParseOp(s string) (Op, error) { return enum.Parse[Op]("collective", s, opNames) }

// Ops lists every op.
func Ops() []Op {
	out := make([]Op, len(opNames))
	for i := range out {
		out[i] = Op(i)
	}
	return out
}

// Reduces reports whether the op combines data arithmetically.
func (o Op) Reduces() bool { return o == AllReduce || o == ReduceScatter || o == Reduce }

// BusFactor is the nccl-tests factor between algorithm bandwidth S/t and bus bandwidth for a
// group of n ranks (nccl-tests doc/PERFORMANCE.md): all-reduce 2(n−1)/n; reduce-scatter,
// all-gather and all-to-all (n−1)/n; the rooted ops and send/recv 1.
func (o Op) BusFactor(n int) float64 {
	if n <= 1 {
		return 0
	}
	f := float64(n-1) / float64(n)
	switch o {
	case AllReduce:
		return 2 * f
	case ReduceScatter, AllGather, AllToAll:
		return f
	default:
		return 1
	}
}

// Group is the set of ranks taking part: Size ranks, Stride apart in the job's rank order
// (rank r, r+Stride, …). Stride tells a topology-aware network which tiers the group spans.
//
// Every group of the same shape that tiles the job runs the collective at the same time, in
// lockstep (the replicas of a data-parallel job all reduce their gradients at once): the groups
// are {hi·Size·Stride + m·Stride + lo : m < Size} for lo < Stride and every hi whose last member is
// a rank of the job. Concurrent caps how many of them run (0: all of them); a network that routes
// traffic charges the links they share, a level model sees one group.
type Group struct {
	Size       int `json:"size"`
	Stride     int `json:"stride"`
	Concurrent int `json:"concurrent,omitempty"`
	// Every > 1 runs only the groups whose index i (0, 1, … in the order below) has
	// ⌊i/Block⌋ mod Every = 0 at once: under 1F1B the stages alternate forward and backward, so
	// the tensor-parallel groups of one phase are every other stage's (HammingMesh's SST motifs).
	Every int `json:"every,omitempty"`
	Block int `json:"block,omitempty"`
}

// Runs reports whether the i-th group runs at once with the first (Every, Block).
func (g Group) Runs(i int) bool {
	if g.Every <= 1 {
		return true
	}
	return (i/max(1, g.Block))%g.Every == 0
}

// Groups is the number of groups of shape g that tile a job of n ranks (at least 1 when g fits),
// capped by g.Concurrent.
func (g Group) Groups(n int) int {
	span := g.Size * g.Stride
	if g.Size < 1 || g.Stride < 1 || n < 1 || (g.Size-1)*g.Stride >= n {
		return 0
	}
	full := n / span                            // whole blocks of Size·Stride ranks
	rest := n - full*span - (g.Size-1)*g.Stride // groups of the partial block: lo < rest
	k := full*g.Stride + max(0, min(rest, g.Stride))
	if g.Concurrent > 0 {
		k = min(k, g.Concurrent)
	}
	return k
}

// Base is the first rank of the i-th concurrent group (0 ≤ i < Groups); member m is Base + m·Stride.
func (g Group) Base(i int) int { return (i/g.Stride)*g.Size*g.Stride + i%g.Stride }

// Collective is one collective call. Bytes follows the nccl-tests convention: the size S of the
// whole buffer (for all-gather the output, for reduce-scatter the input, for all-to-all the
// per-rank send buffer, for send/recv the message).
type Collective struct {
	Op    Op
	Bytes units.Bytes
	Group Group
	DType dtype.DType
}

// Cost is a priced collective, split by the RAMP critical-path method (§7.4.1): head-to-head
// latency (propagation, switching, NIC, reconfiguration), head-to-tail transfer, and local
// reduction compute.
//
// Reconfig is circuit set-up time charged before steps (0 where circuits are static or the
// set-up hides behind the node's I/O), and Bottleneck names the resource that limits the step
// with the most transfer time (a tier, a link class of a routed fabric, a subnet): a static name,
// never formatted per call.
//
// SMs is the number of streaming multiprocessors the collective's kernels hold on each GPU while
// it runs, which compute overlapped with it cannot use (NCCL: one per channel, a channel's CTA
// never shares its SM with compute kernels); 0 where the library's channel count is not
// measured, or no kernel moves the bytes.
//
// Steps and SMs are 32-bit so that a Cost stays ten words: memos and caches copy it on every hit.
type Cost struct {
	Algorithm  string        `json:"algorithm"`
	Steps      int32         `json:"steps"`
	SMs        int32         `json:"sms,omitempty"`
	H2H        units.Seconds `json:"h2h_s"`
	H2T        units.Seconds `json:"h2t_s"`
	Compute    units.Seconds `json:"compute_s"`
	Reconfig   units.Seconds `json:"reconfig_s"`
	Total      units.Seconds `json:"total_s"`
	Bottleneck string        `json:"bottleneck,omitempty"`
}

// Model prices collectives on one network with one job placed on it.
type Model interface {
	// Name is the registry name of the network.
	Name() string
	// Price returns the completion time of c; an error means c cannot run (e.g. the group is
	// larger than the network).
	Price(c Collective) (Cost, error)
}

// Shareable is an optional property of a Model: it does not change after construction and its
// Price may be called from several goroutines at once, so that one placed model serves every job
// of the same network, size and reducer (sweeps, searches and repeated estimates).
type Shareable interface {
	Model
	Shareable()
}

// Overlapping is an optional capability of a Model: pricing collectives that run during the same
// window of time on the job (data-parallel buckets during a backward pass's tensor-parallel and
// pipeline traffic) and share links. Each cost is one call's, the collective's alone, slowed where
// the links it uses must also carry the others' bytes: its Calls together take at least the time
// those links need to drain everything the window routes over them.
type Overlapping interface {
	PriceConcurrent(cs []Concurrent) ([]Cost, error)
}

// SetUp is an optional property of a Model: time the network spends once per job before
// training starts (ODDL's WSS configuration, Table 3: 56 ms), added to the time to accuracy.
type SetUp interface {
	SetupTime() units.Seconds
}

// Concurrent is a collective called Calls times (0 counts as 1) within a window shared with
// other collectives (Overlapping).
type Concurrent struct {
	Collective
	Calls int
}

// Reducer prices a local n-to-1 reduction of fanIn buffers of the given bytes each on the node
// (the GPU's roofline, supplied by the estimator; RAMP §7.4.1 "compute node").
type Reducer interface {
	ReduceTime(fanIn int, bytes units.Bytes, dt dtype.DType) units.Seconds
}

// Env is what a network model learns about the job it carries.
type Env struct {
	GPUs    int     // ranks in the job
	Reducer Reducer // nil: reductions cost nothing
}

// Config is a network's typed parameter set (see internal/params for the tag conventions).
type Config interface {
	Validate() error
}

// Spec is a registry entry: how to configure and build one network model.
type Spec struct {
	Name    string
	Summary string
	Source  string
	// NewConfig returns the default configuration (a pointer to a tagged struct).
	NewConfig func() Config
	// New builds the model for a job; cfg is a value NewConfig returned, possibly modified.
	New func(cfg Config, env Env) (Model, error)
}

// CheckGroup validates a collective's group against the job: a usage error for sizes below 1,
// or a group that does not fit the job's ranks.
func CheckGroup(c Collective, env Env) error {
	g := c.Group
	if g.Size < 1 {
		return errs.Usage("collective %s: group size %d must be ≥ 1", c.Op, g.Size)
	}
	if g.Stride < 1 {
		return errs.Usage("collective %s: group stride %d must be ≥ 1", c.Op, g.Stride)
	}
	if env.GPUs > 0 && (g.Size-1)*g.Stride >= env.GPUs {
		return errs.Usage("collective %s: group of %d ranks at stride %d spans more than the job's %d GPUs", c.Op, g.Size, g.Stride, env.GPUs)
	}
	if c.Bytes < 0 {
		return errs.Usage("collective %s: size %v must be ≥ 0", c.Op, c.Bytes)
	}
	if c.Op == SendRecv && g.Size != 2 {
		return errs.Usage("send-recv needs a group of 2 ranks, got %d", g.Size)
	}
	return nil
}
