package nn

import (
	"fmt"
	"strings"
)

// Kind is a layer type.
type Kind int

const (
	Conv       Kind = iota // 1D/2D/3D convolution, grouped or depthwise
	Linear                 // fully connected, over the last dimension
	BatchNorm              // batch normalisation
	LayerNorm              // layer normalisation over the last dimension
	Activation             // ReLU, ReLU6, leaky ReLU, GeLU, tanh
	MaxPool                // max pooling
	AvgPool                // average pooling (global when the window is the whole map)
	Add                    // residual sum of two equal tensors
	Dropout                // dropout (mask kept for the backward pass)
	Flatten                // a view: no kernel
	Attention              // scaled dot-product attention core over [T, F]: QKᵀ, softmax, ·V
	Embedding              // table lookup (token, position, patch tables count as parameters)
)

var kindNames = []string{"conv", "linear", "batchnorm", "layernorm", "activation", "maxpool", "avgpool", "add",
	"dropout", "flatten", "attention", "embedding"}

func (k Kind) String() string { return kindNames[k] }

// Layer is one layer with per-sample shapes (no batch dimension): [C, H, W] or [C, D, H, W] for
// convolutions, [F] or [T, F] for vectors and sequences.
type Layer struct {
	Name   string
	Kind   Kind
	In     []int
	Out    []int
	Params float64 // weights and biases (running statistics are buffers, not parameters)
	// MACs is the multiply-accumulate count per sample (Conv, Linear, Attention).
	MACs float64
	// Weight is the weight shape of Conv and Linear layers ([Cout, Cin/groups, k…] or [in, out]).
	Weight []int
	Heads  int // Attention

	// Backward op names, made once when the layer is built (plans are built many times).
	bwdName, dgradName, wgradName string
}

// opName is the layer's name with a suffix, from the cache when the builder filled it.
func (l *Layer) opName(cached, suffix string) string {
	if cached != "" {
		return cached
	}
	return l.Name + suffix
}

// Net is a network as a sequence of layers in execution order (residual branches are laid out
// one after the other and joined by Add layers). A unit of identical consecutive layers that
// repeats (a ResNet stage's bottlenecks after the first, a transformer's encoder layers) is
// listed once, with its repetition count in Units.
type Net struct {
	Name   string
	Input  []int
	Layers []Layer
	Units  []Unit // in layer order, not overlapping
}

// Unit says that Layers[Start:End] run Repeat times in a row.
type Unit struct {
	Start, End, Repeat int
}

// Repeat is how many times layer i runs per sample.
func (n *Net) Repeat(i int) int {
	for _, u := range n.Units {
		if i >= u.Start && i < u.End {
			return u.Repeat
		}
	}
	return 1
}

// Params is the number of trainable parameters.
func (n *Net) Params() float64 {
	p := 0.0
	for i, l := range n.Layers {
		p += l.Params * float64(n.Repeat(i))
	}
	return p
}

// MACs is the forward multiply-accumulate count per sample.
func (n *Net) MACs() float64 {
	m := 0.0
	for i, l := range n.Layers {
		m += l.MACs * float64(n.Repeat(i))
	}
	return m
}

func prod(s []int) float64 {
	p := 1.0
	for _, d := range s {
		p *= float64(d)
	}
	return p
}

// Builder appends layers, tracking the current per-sample shape. Errors (shapes that do not fit)
// are programming errors in a model definition and are collected; Net reports them.
type Builder struct {
	net  Net
	cur  []int
	errs []string
}

// New starts a network on the given input shape.
func New(name string, input ...int) *Builder {
	return &Builder{net: Net{Name: name, Input: input}, cur: append([]int(nil), input...)}
}

// Shape is the current per-sample shape.
func (b *Builder) Shape() []int { return append([]int(nil), b.cur...) }

// Repeat lays out a unit of layers that runs n times in a row: unit adds it once (naming it for
// all n), and it must leave the shape as it found it.
func (b *Builder) Repeat(n int, unit func(*Builder)) *Builder {
	if n < 1 {
		return b.fail("repeat %d: want at least 1", n)
	}
	in, start := b.Shape(), len(b.net.Layers)
	unit(b)
	if n == 1 || len(b.net.Layers) == start {
		return b
	}
	if prod(in) != prod(b.cur) || len(in) != len(b.cur) {
		return b.fail("repeated unit from layer %q changes the shape %v to %v", b.net.Layers[start].Name, in, b.cur)
	}
	b.net.Units = append(b.net.Units, Unit{Start: start, End: len(b.net.Layers), Repeat: n})
	return b
}

// From continues from an earlier shape (the start of a residual branch).
func (b *Builder) From(shape []int) *Builder {
	b.cur = append([]int(nil), shape...)
	return b
}

// Net returns the network, or an error naming every bad layer.
func (b *Builder) Net() (*Net, error) {
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("nn %s: %s", b.net.Name, strings.Join(b.errs, "; "))
	}
	n := b.net
	return &n, nil
}

func (b *Builder) add(l Layer) *Builder {
	l.bwdName, l.dgradName, l.wgradName = l.Name+".bwd", l.Name+".dgrad", l.Name+".wgrad"
	b.net.Layers = append(b.net.Layers, l)
	b.cur = append([]int(nil), l.Out...)
	return b
}

func (b *Builder) fail(format string, a ...any) *Builder {
	b.errs = append(b.errs, fmt.Sprintf(format, a...))
	return b
}

// ConvOpt modifies a convolution.
type ConvOpt func(*convSpec)

type convSpec struct {
	groups int
	bias   bool
}

// Groups splits the channels into groups (Groups(C) is depthwise).
func Groups(g int) ConvOpt { return func(s *convSpec) { s.groups = g } }

// Bias adds a bias per output channel.
func Bias() ConvOpt { return func(s *convSpec) { s.bias = true } }

func outSize(in, k, stride, pad int) int { return (in+2*pad-k)/stride + 1 }

// Conv is a convolution over the spatial dimensions of [C, …]: cubic kernel k, stride and
// padding on every spatial dimension. MACs = Cout·(Cin/groups)·k^d·|output map|.
func (b *Builder) Conv(name string, out, k, stride, pad int, opts ...ConvOpt) *Builder {
	s := convSpec{groups: 1}
	for _, o := range opts {
		o(&s)
	}
	in := b.cur
	if len(in) < 2 {
		return b.fail("%s: convolution needs [C, spatial…], have %v", name, in)
	}
	cin := in[0]
	if cin%s.groups != 0 || out%s.groups != 0 {
		return b.fail("%s: %d groups do not divide %d → %d channels", name, s.groups, cin, out)
	}
	shape := []int{out}
	kernel := 1.0
	for _, d := range in[1:] {
		o := outSize(d, k, stride, pad)
		if o < 1 {
			return b.fail("%s: kernel %d does not fit %v", name, k, in)
		}
		shape = append(shape, o)
		kernel *= float64(k)
	}
	weight := []int{out, cin / s.groups}
	for range in[1:] {
		weight = append(weight, k)
	}
	params := prod(weight)
	if s.bias {
		params += float64(out)
	}
	return b.add(Layer{Name: name, Kind: Conv, In: in, Out: shape, Params: params, Weight: weight,
		MACs: float64(out) * float64(cin/s.groups) * kernel * prod(shape[1:])})
}

// Linear is a fully connected layer over the last dimension.
func (b *Builder) Linear(name string, out int, bias bool) *Builder {
	in := b.cur
	f := in[len(in)-1]
	shape := append(append([]int(nil), in[:len(in)-1]...), out)
	params := float64(f) * float64(out)
	if bias {
		params += float64(out)
	}
	return b.add(Layer{Name: name, Kind: Linear, In: in, Out: shape, Params: params, Weight: []int{f, out},
		MACs: prod(in[:len(in)-1]) * float64(f) * float64(out)})
}

// LinearTied is a fully connected layer whose weight belongs to another layer (an output
// projection tied to an embedding table): it computes but adds no parameters.
func (b *Builder) LinearTied(name string, out int) *Builder {
	b.Linear(name, out, false)
	b.net.Layers[len(b.net.Layers)-1].Params = 0
	return b
}

// Prepend adds tokens (a [CLS] token) in front of a [T, F] sequence: → [T+n, F].
func (b *Builder) Prepend(name string, n int) *Builder {
	if len(b.cur) != 2 {
		return b.fail("%s: prepend needs [T, F], have %v", name, b.cur)
	}
	return b.add(Layer{Name: name, Kind: Flatten, In: b.cur, Out: []int{b.cur[0] + n, b.cur[1]}})
}

// MeanTokens averages a [T, F] sequence over its tokens: → [F].
func (b *Builder) MeanTokens(name string) *Builder {
	if len(b.cur) != 2 {
		return b.fail("%s: token mean needs [T, F], have %v", name, b.cur)
	}
	return b.add(Layer{Name: name, Kind: AvgPool, In: b.cur, Out: []int{b.cur[1]}})
}

// BN is batch normalisation over the channel dimension (γ, β per channel).
func (b *Builder) BN(name string) *Builder {
	return b.add(Layer{Name: name, Kind: BatchNorm, In: b.cur, Out: b.cur, Params: 2 * float64(b.cur[0])})
}

// LN is layer normalisation over the last dimension (γ, β).
func (b *Builder) LN(name string) *Builder {
	return b.add(Layer{Name: name, Kind: LayerNorm, In: b.cur, Out: b.cur, Params: 2 * float64(b.cur[len(b.cur)-1])})
}

// Act is an elementwise activation.
func (b *Builder) Act(name string) *Builder {
	return b.add(Layer{Name: name, Kind: Activation, In: b.cur, Out: b.cur})
}

// Dropout keeps a byte mask for the backward pass.
func (b *Builder) Dropout(name string) *Builder {
	return b.add(Layer{Name: name, Kind: Dropout, In: b.cur, Out: b.cur})
}

func (b *Builder) pool(name string, kind Kind, k, stride, pad int) *Builder {
	in := b.cur
	shape := []int{in[0]}
	for _, d := range in[1:] {
		o := outSize(d, k, stride, pad)
		if o < 1 {
			return b.fail("%s: window %d does not fit %v", name, k, in)
		}
		shape = append(shape, o)
	}
	return b.add(Layer{Name: name, Kind: kind, In: in, Out: shape})
}

// MaxPool pools every spatial dimension with window k.
func (b *Builder) MaxPool(name string, k, stride, pad int) *Builder {
	return b.pool(name, MaxPool, k, stride, pad)
}

// AvgPool pools every spatial dimension with window k.
func (b *Builder) AvgPool(name string, k, stride, pad int) *Builder {
	return b.pool(name, AvgPool, k, stride, pad)
}

// GlobalAvgPool averages each channel's map to one value: [C, …] → [C].
func (b *Builder) GlobalAvgPool(name string) *Builder {
	return b.add(Layer{Name: name, Kind: AvgPool, In: b.cur, Out: []int{b.cur[0]}})
}

// Flatten views the tensor as a vector.
func (b *Builder) Flatten(name string) *Builder {
	return b.add(Layer{Name: name, Kind: Flatten, In: b.cur, Out: []int{int(prod(b.cur))}})
}

// Reshape views the tensor with another shape of the same size.
func (b *Builder) Reshape(name string, shape ...int) *Builder {
	if prod(shape) != prod(b.cur) {
		return b.fail("%s: cannot view %v as %v", name, b.cur, shape)
	}
	return b.add(Layer{Name: name, Kind: Flatten, In: b.cur, Out: shape})
}

// Gathered continues with the whole of a tensor that model-parallel ranks hold in parts (after an
// all-gather the partitioner adds): a view with no kernel.
func (b *Builder) Gathered(name string, shape ...int) *Builder {
	return b.add(Layer{Name: name, Kind: Flatten, In: b.cur, Out: shape})
}

// Add sums the current tensor with an earlier one of the same shape (a residual connection).
func (b *Builder) Add(name string, other []int) *Builder {
	if prod(other) != prod(b.cur) {
		return b.fail("%s: cannot add %v to %v", name, other, b.cur)
	}
	return b.add(Layer{Name: name, Kind: Add, In: b.cur, Out: b.cur})
}

// Attention is the attention core of heads heads over [T, 3F] (Q, K, V side by side) → [T, F]:
// QKᵀ and attention over V, 2·T²·F multiply-accumulates per sample.
func (b *Builder) Attention(name string, heads int) *Builder {
	in := b.cur
	if len(in) != 2 || in[1]%3 != 0 || (in[1]/3)%heads != 0 {
		return b.fail("%s: attention needs [T, 3F] with F divisible by %d heads, have %v", name, heads, in)
	}
	t, f := in[0], in[1]/3
	return b.add(Layer{Name: name, Kind: Attention, In: in, Out: []int{t, f}, Heads: heads,
		MACs: 2 * float64(t) * float64(t) * float64(f)})
}

// Embedding looks up count rows of a rows × dim table per sample: → [count, dim].
func (b *Builder) Embedding(name string, rows, dim, count int) *Builder {
	return b.add(Layer{Name: name, Kind: Embedding, In: []int{count}, Out: []int{count, dim}, Params: float64(rows) * float64(dim)})
}

// Params adds trainable parameters that no kernel touches in a way that matters for time
// (position tables, class tokens, layer-scale vectors, relative-position biases).
func (b *Builder) Params(name string, n float64) *Builder {
	l := Layer{Name: name, Kind: Flatten, In: b.cur, Out: b.cur, Params: n}
	b.net.Layers = append(b.net.Layers, l)
	return b
}
