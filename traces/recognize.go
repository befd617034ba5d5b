package traces

import (
	"regexp"
	"strings"
	"sync"
)

// commKernel recognises a device kernel that is communication, not computation: its library and
// the collective it runs. Rules are tried in order; the first that matches wins.
type commKernel struct {
	library string
	screen  string                // a substring every name the rule matches holds (a cheap test first)
	match   func() *regexp.Regexp // compiled on first use (start-up of commands that read no trace)
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
	{"nccl", "nccl", lazyRegexp(`(^|[ :])nccl`), ""},
	{"rccl_msccl", "msccl", lazyRegexp(`(^|[ :])mscclKernel_`), "other"},
	{"deepep", "deep_ep::", lazyRegexp(`deep_ep::(intranode|internode|internode_ll)::`), "all_to_all"},
	{"nvshmem", "nvshmem", lazyRegexp(`(^|[ :])nvshmem[ix]?_`), "other"},
	{"symmetric_memory", "_all_reduce_kernel", lazyRegexp(`(multimem|one_shot|two_shot|multimem_one_shot)_all_reduce_kernel`), "all_reduce"},
	{"vllm_custom_all_reduce", "cross_device_reduce_", lazyRegexp(`cross_device_reduce_`), "all_reduce"},
}

// lazyRegexp compiles expr once, when first used: a process that reads no trace (most of them)
// compiles none of the recognition rules at start-up.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
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
		if r := &commKernels[i]; strings.Contains(name, r.screen) && r.match().MatchString(name) {
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

// Kernel classes: what a computation kernel's name says it computes (KernelClass).
const (
	ClassConvolution = "convolution"
	ClassGEMM        = "gemm"
	ClassAttention   = "attention"
)

// kernelClasses is the table KernelClass reads, tried in order: fused attention first (its
// kernels are GEMMs too), then convolutions (implicit-GEMM convolutions name a GEMM), then GEMMs.
// Substrings of the lower-cased name, from the libraries' own kernel names:
//   - attention: FlashAttention's flash_fwd_kernel, flash_fwd_splitkv_kernel,
//     flash_bwd_dq_dk_dv_loop_kernel (Dao-AILab/flash-attention csrc/flash_attn/src; PyTorch
//     vendors them as pytorch_flash::flash_fwd_kernel); PyTorch's memory-efficient attention,
//     fmha_cutlassF_…/fmha_cutlassB_… (aten/src/ATen/native/transformers/cuda/mem_eff_attention),
//     and composable_kernel's fmha_fwd/fmha_bwd; Triton's fused attention, _attn_fwd/_attn_bwd
//     (triton-lang/triton python/tutorials/06-fused-attention.py; AMD's FlashAttention on ROCm:
//     attn_fwd in TraceLens's MI300 traces); cuDNN's SDPA (cudnn_generated_fort_native_sdpa_…).
//   - convolution: cuDNN's (closed source; the names as its kernels appear in the HTA and Kineto
//     traces of ../shared/traces) scudnn/hcudnn engines (volta_scudnn_128x64_relu_…,
//     cudnn_ampere_scudnn_…), implicit_convolve_sgemm, cudnn::detail::dgrad_engine,
//     cudnn::cnn::wgrad_alg0_engine, sm80_xmma_fprop/dgrad/wgrad_implicit_gemm_…, winograd and
//     FFT (fft2d_r2c_…) convolutions; CUTLASS's ImplicitGemmConvolution (NVIDIA/cutlass
//     include/cutlass/conv/kernel/implicit_gemm_convolution.h); MIOpen's implicit-GEMM
//     convolutions igemm_fwd_gtc…, igemm_bwd_gtc…, igemm_wrw_gtc… (ROCm/iGEMMgen), its
//     naive_conv_… and gridwise_convolution_… kernels and MIOpenConv… / …Sp3AsmConv….
//   - GEMM: cuBLAS / cuBLASLt (ampere_sgemm_…, sm90_xmma_gemm_…, gemv2T_kernel…), CUTLASS
//     (cutlass_80_tensorop_s1688gemm_…), Tensile / hipBLASLt on ROCm (Cijk_Ailk_Bljk_…:
//     ROCm/Tensile's kernel names index C, A, B). FBGEMM's name (fbgemm_gpu::…, embedding
//     kernels) is not a GEMM.
var kernelClasses = []struct {
	class string
	subs  []string
}{
	{ClassAttention, []string{"flash_fwd", "flash_bwd", "fmha", "attn_fwd", "attn_bwd", "_sdpa"}},
	{ClassConvolution, []string{"scudnn", "hcudnn", "convolve", "dgrad_engine", "wgrad_alg", "implicit_gemm", "implicitgemmconvolution",
		"winograd", "fft2d_", "igemm_fwd", "igemm_bwd", "igemm_wrw", "naive_conv", "gridwise_convolution", "miopenconv", "sp3asmconv"}},
	{ClassGEMM, []string{"gemm", "gemv", "cijk_"}},
}

// KernelClass is the class of computation a kernel's name names (ClassConvolution, ClassGEMM,
// ClassAttention), or "" for the rest (elementwise, normalisation, reductions, copies,
// communication).
func KernelClass(name string) string {
	if CommLibrary(name) != "" {
		return ""
	}
	n := strings.ReplaceAll(strings.ToLower(name), "fbgemm", "")
	for _, c := range kernelClasses {
		for _, s := range c.subs {
			if strings.Contains(n, s) {
				return c.class
			}
		}
	}
	return ""
}
