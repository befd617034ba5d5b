package traces

import (
	"sort"
	"strings"
)

// Category maps a profiler event category to the schema's (doc.go lists the mapping); "" drops
// the event. NCCL kernels become collectives. The legacy profiler has no categories: its events
// are CPU ops when named like operators ("aten::mm", "autograd::engine::…") and user ranges
// (record_function: "forward", "ProfilerStep#0", "Optimizer.step#SGD.step") otherwise.
func Category(cat, name, format string) string {
	if format == FormatLegacy && cat == "" {
		if strings.Contains(name, "::") {
			return "cpu_op"
		}
		return "annotation"
	}
	switch cat {
	case "kernel", "Kernel", "mtia_ccp_events":
		// MTIA's on-device CCP events are its kernels (pytorch/kineto libkineto/include/
		// ActivityType.h: "MTIA ondevice CCP events", aliased to CONCURRENT_KERNEL).
		if recogniseComm(name) != nil { // communication libraries' kernels (recognize.go)
			return "collective"
		}
		return "kernel"
	case "cpu_op", "operator", "Operator", "python_function":
		return "cpu_op"
	case "cuda_runtime", "cuda_driver", "Runtime", "runtime", "mtia_runtime", "xpu_runtime", "glow_runtime":
		// The other accelerators' host runtimes (ActivityType.h: MTIA_RUNTIME, XPU_RUNTIME and
		// GLOW_RUNTIME are aliases of RUNTIME); AMD's HIP calls come as cuda_runtime.
		if isHostSync(name) { // the host waits for the device (recognize.go)
			return "sync"
		}
		return "runtime"
	case "cuda_sync":
		// CUPTI's synchronisation records (Kineto's CUDA_SYNC: Stream Sync, Event Sync, Context
		// Sync, Stream Wait Event), drawn on the GPU's track: waiting, not kernels (HTA leaves
		// them out of its kernel and idle breakdowns: HolisticTraceAnalysis pull 149).
		return "sync"
	case "gpu_memcpy", "Memcpy", "memcpy":
		return "memcpy"
	case "gpu_memset", "Memset", "memset":
		return "memset"
	case "user_annotation", "gpu_user_annotation":
		return "annotation"
	}
	return ""
}

// isDeviceCategory: the event runs on a GPU (its pid is the device).
func isDeviceCategory(c string) bool {
	return c == "kernel" || c == "collective" || c == "memcpy" || c == "memset"
}

// ncclKernelCollective names the collective of an NCCL kernel without args from its name
// (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv…).
func ncclKernelCollective(name string) string {
	n := strings.ToLower(name)
	for _, c := range []struct{ key, coll string }{
		{"allreduce", "all_reduce"}, {"reducescatter", "reduce_scatter"}, {"allgather", "all_gather"},
		{"alltoall", "all_to_all"}, {"broadcast", "broadcast"}, {"sendrecv", "send_recv"}, {"send", "send_recv"},
		{"recv", "send_recv"}, {"reduce", "reduce"},
	} {
		if strings.Contains(n, c.key) {
			return c.coll
		}
	}
	return "other"
}

// CollectiveName maps a profiler's collective name (NCCL args "Collective name", c10d op names)
// to the schema's.
func CollectiveName(s string) string {
	n := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "c10d::"), "nccl:"), "_"))
	n = strings.TrimPrefix(n, "_")
	n = strings.TrimSuffix(n, "_base")
	switch n {
	case "allreduce", "all_reduce", "allreduce_coalesced":
		return "all_reduce"
	case "allgather", "all_gather", "allgather_into_tensor_coalesced", "allgather_coalesced":
		return "all_gather"
	case "reducescatter", "reduce_scatter", "reduce_scatter_tensor_coalesced":
		return "reduce_scatter"
	case "alltoall", "all_to_all", "alltoallv", "all_to_allv":
		return "all_to_all"
	case "broadcast":
		return "broadcast"
	case "send", "recv", "sendrecv", "send_recv":
		return "send_recv"
	case "reduce":
		return "reduce"
	case "gather":
		return "gather"
	case "scatter":
		return "scatter"
	case "barrier":
		return "barrier"
	}
	return "other"
}

// dtypeSizes are element sizes of the type names profilers print (PyTorch ScalarType names in
// NCCL args, c10d "Input type" strings).
var dtypeSizes = map[string]int64{
	"float": 4, "float32": 4, "double": 8, "float64": 8, "half": 2, "float16": 2, "bfloat16": 2,
	"int": 4, "int32": 4, "long": 8, "int64": 8, "short": 2, "int16": 2, "char": 1, "int8": 1, "signed char": 1,
	"byte": 1, "uint8": 1, "unsigned char": 1, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
	"complexfloat": 8, "complexdouble": 16, "uint16": 2, "uint32": 4, "uint64": 8,
}

// DTypeSize is the byte size of a profiler dtype name.
func DTypeSize(name string) (int64, bool) {
	n, ok := dtypeSizes[strings.ToLower(name)]
	return n, ok
}

func dtypeNames() []string {
	ns := make([]string, 0, len(dtypeSizes))
	for k := range dtypeSizes {
		ns = append(ns, k)
	}
	sort.Strings(ns)
	return ns
}

// PhaseOf classifies a range that marks a training phase (doc.go): "" when the name marks none.
//   - backward: "backward" in the name (## backward ##, backward-compute, autograd's
//     evaluate_function: XBackward0, Lightning's backward), but not "forward-backward";
//   - optimizer: "optimizer" or "optim." (Optimizer.step#SGD.step, ## optimizer ##,
//     optimizer_step);
//   - forward: "forward" (## forward ##, DistributedDataParallel.forward, forward-compute) or
//     Lightning's training_step.
func PhaseOf(name string) string {
	// DualPipe-style chunk ranges (DeepSeek's profile-data: attn(F), mlp(B), mlp(W)): forward,
	// backward for inputs and for weights.
	switch {
	case strings.HasSuffix(name, "(F)"):
		return "fwd"
	case strings.HasSuffix(name, "(B)"), strings.HasSuffix(name, "(W)"):
		return "bwd"
	}
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "forward-backward"), strings.Contains(n, "forward_backward"):
		return ""
	case strings.Contains(n, "backward"):
		return "bwd"
	case strings.Contains(n, "optimizer"), strings.HasPrefix(n, "optim."):
		return "optimizer"
	case strings.Contains(n, "forward"), strings.Contains(n, "training_step"):
		return "fwd"
	}
	return ""
}

// marksPhase: which events may open a phase range. Annotations (record_function) always; CPU
// ops only when they are autograd's backward nodes or optimizer steps.
func marksPhase(e *Event) bool {
	switch e.Category {
	case "annotation":
		return true
	case "cpu_op":
		return strings.HasPrefix(e.Name, "autograd::engine::evaluate_function") || strings.HasPrefix(e.Name, "Optimizer.") ||
			(strings.Contains(e.Name, "Backward") && autogradNode().MatchString(e.Name))
	}
	return false
}

// autogradNode is a backward node's own name, as the 2021 Kineto format records them on the
// autograd thread (CudnnConvolutionBackward, AddmmBackward, AddBackward0): torch/csrc/autograd
// generated functions are named <Op>Backward<N>.
var autogradNode = lazyRegexp(`^[A-Z][A-Za-z0-9]*Backward\d*$`)

// IsStep reports whether an annotation is the profiler's step marker (ProfilerStep#N).
func IsStep(name string) bool { return strings.HasPrefix(name, "ProfilerStep#") }

var layerRE = lazyRegexp(`(?i)(?:^|[^a-z])(?:layers?|blocks?)[._#\[ ]?(\d+)`)

// LayerOf extracts a layer index from a range name (layer_3, layers.11, block 2), or -1.
func LayerOf(name string) int32 {
	m := layerRE().FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	var n int32
	for _, c := range m[1] {
		n = n*10 + int32(c-'0')
		if n > 1<<20 {
			return -1
		}
	}
	return n
}

// commOf returns the collective a CPU op launches (c10d::allreduce_, nccl:all_reduce
// annotations, record_param_comms carries no name), or "".
func commOf(e *Event) string {
	switch {
	case strings.HasPrefix(e.Name, "c10d::"), strings.HasPrefix(e.Name, "nccl:"):
		return CollectiveName(e.Name)
	}
	return ""
}
