package traces

import (
	"regexp"
	"strings"
)

// commKernel recognises a device kernel that is communication, not computation: its library and
// the collective it runs. Rules are tried in order; the first that matches wins.
type commKernel struct {
	library string
	screen  string // a substring every name the rule matches holds (a cheap test first)
	match   *regexp.Regexp
	// collective is "" when the kernel's args or its name's own words name it, as NCCL's.
	collective string
}

// commKernels is the recognition table, from each library's own kernel names:
//   - NCCL and RCCL: ncclKernel_<Coll>_<Algo>_<Proto>…, ncclDevKernel_… (nccl src/device;
//     RCCL keeps NCCL's names: ROCm/rccl src/include/collectives.h and src/device/generate.py at
//     857cc6a9 name its kernels and device functions ncclKernel_…, ncclDevKernel_…,
//     ncclDevFunc_<Coll>_<Algo>_<Proto>…); the collective from the name (ncclKernelCollective)
//     or the args. RCCL's MSCCL kernels, mscclKernel_<RedOp>_<Type>_<Proto>
//     (ROCm/rccl src/include/msccl/msccl_kernel.h at 7245ad8c), run whichever collective the
//     launching c10d op names.
//   - DeepEP (deepseek-ai/DeepEP csrc/kernels intranode.cu, internode.cu, internode_ll.cu): the
//     expert-parallel dispatch and combine, their notify and cached-notify steps, in the
//     deep_ep::intranode, internode and internode_ll namespaces: an all-to-all over NVLink and
//     NVSHMEM. deep_ep::layout::get_dispatch_layout only counts tokens: computation.
//   - NVSHMEM's own kernels (nvshmemi_…, nvshmemx_…collective…): communication.
//   - PyTorch SymmetricMemory (torch/csrc/distributed/c10d/CUDASymmetricMemoryOps.cu):
//     multimem_all_reduce_kernel, one_shot_all_reduce_kernel, two_shot_all_reduce_kernel,
//     multimem_one_shot_all_reduce_kernel; and vLLM's custom all-reduce, cross_device_reduce_…
//     (vllm csrc/custom_all_reduce.cuh).
var commKernels = []commKernel{
	{"nccl", "nccl", regexp.MustCompile(`(^|[ :])nccl`), ""},
	{"rccl_msccl", "msccl", regexp.MustCompile(`(^|[ :])mscclKernel_`), "other"},
	{"deepep", "deep_ep::", regexp.MustCompile(`deep_ep::(intranode|internode|internode_ll)::`), "all_to_all"},
	{"nvshmem", "nvshmem", regexp.MustCompile(`(^|[ :])nvshmem[ix]?_`), "other"},
	{"symmetric_memory", "_all_reduce_kernel", regexp.MustCompile(`(multimem|one_shot|two_shot|multimem_one_shot)_all_reduce_kernel`), "all_reduce"},
	{"vllm_custom_all_reduce", "cross_device_reduce_", regexp.MustCompile(`cross_device_reduce_`), "all_reduce"},
}

// CommLibrary is the library of a communication kernel, or "" for a computation kernel.
func CommLibrary(name string) string {
	if r := recogniseComm(name); r != nil {
		return r.library
	}
	return ""
}

func recogniseComm(name string) *commKernel {
	for i := range commKernels {
		if r := &commKernels[i]; strings.Contains(name, r.screen) && r.match.MatchString(name) {
			return r
		}
	}
	return nil
}

// kernelCollective is the collective a communication kernel runs when its args do not say.
func kernelCollective(name string) string {
	if r := recogniseComm(name); r != nil && r.collective != "" {
		return r.collective
	}
	return ncclKernelCollective(name)
}

// hostSyncCalls are the runtime calls that block the host thread until the device (a stream, an
// event) has finished: sync, neither host work nor a launch. CUDA runtime and driver
// (docs.nvidia.com/cuda/cuda-runtime-api, group__CUDART__DEVICE / __STREAM / __EVENT;
// cuda-driver-api group__CUDA__CTX / __STREAM / __EVENT) and HIP (rocm.docs.amd.com HIP runtime
// API, Device / Stream / Event management: hipDeviceSynchronize "the host thread gets blocked",
// hipStreamSynchronize "host-synchronous"). Kineto records AMD's HIP calls in the cuda_runtime
// category under their HIP names (pytorch/kineto libkineto/src/RoctracerActivity.h at c22a8255:
// RuntimeActivity is CUDA_RUNTIME, named by roctracer_op_string). Per-thread-stream variants
// carry a suffix (_spt, _ptsz, _v2).
var hostSyncCalls = []string{
	"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
	"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
	"hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize",
}

// isHostSync reports whether a runtime call is one of hostSyncCalls.
func isHostSync(name string) bool {
	if !strings.Contains(name, "Synchronize") {
		return false
	}
	for _, c := range hostSyncCalls {
		if rest, ok := strings.CutPrefix(name, c); ok && (rest == "" || rest[0] == '_') {
			return true
		}
	}
	return false
}
