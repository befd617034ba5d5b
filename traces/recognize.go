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
//   - NCCL and RCCL: ncclKernel_<Coll>_<Algo>_<Proto>…, ncclDevKernel_… (nccl src/device,
//     RCCL the same names); the collective from the name (ncclKernelCollective) or the args.
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
