package traces

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Kernel names as the libraries define them (recognize.go's sources), and look-alikes that are
// computation.
func TestRecogniseCommKernels(t *testing.T) {
	for _, c := range []struct {
		name, library, collective string
	}{
		{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "nccl", "all_reduce"},
		{"void ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "nccl", "send_recv"},
		{"ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "nccl", "all_gather"}, // RCCL's too
		{"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*, long*)", "deepep", "all_to_all"},
		{"void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int, int)", "deepep", "all_to_all"},
		{"void deep_ep::internode_ll::combine<false, 7168>(void*, int*)", "deepep", "all_to_all"},
		{"void deep_ep::internode::notify_dispatch<true, 8>(int const*)", "deepep", "all_to_all"},
		{"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long)", "symmetric_memory", "all_reduce"},
		{"void c10d::symmetric_memory::two_shot_all_reduce_kernel<float, 8>(float**)", "symmetric_memory", "all_reduce"},
		{"void vllm::cross_device_reduce_1stage<c10::Half, 8>(vllm::RankData*)", "vllm_custom_all_reduce", "all_reduce"},
		{"nvshmemi_transfer_rma_kernel<int>(void*)", "nvshmem", "other"},
		// Computation.
		{"void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*)", "", ""},
		{"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(float*)", "", ""},
		{"ampere_sgemm_32x32_sliced1x4_tn", "", ""},
		{"triton_poi_fused_add_all_reduce_0", "", ""},
	} {
		lib := CommLibrary(c.name)
		if lib != c.library {
			t.Errorf("%s: library %q, want %q", c.name, lib, c.library)
		}
		cat := Category("kernel", c.name, FormatKineto)
		if want := map[bool]string{true: "collective", false: "kernel"}[c.library != ""]; cat != want {
			t.Errorf("%s: category %s, want %s", c.name, cat, want)
		}
		if c.library != "" && kernelCollective(c.name) != c.collective {
			t.Errorf("%s: collective %s, want %s", c.name, kernelCollective(c.name), c.collective)
		}
	}
}

// A ROCm trace as Kineto writes it for AMD GPUs (roctracer): HIP's calls in cuda_runtime, its
// copies and fills in gpu_memcpy / gpu_memset, RCCL's kernels under NCCL's names, and the calls
// that block the host until the device is done (HIP's and CUDA's *Synchronize) as sync, like
// CUPTI's cuda_sync records, which stay on the GPU's track. Counted by hand from the snippet:
// runtime 3 (hipLaunchKernel ×2, hipMemcpyAsync), sync 4 (hipStreamSynchronize,
// hipDeviceSynchronize, hipEventSynchronize, the Stream Sync record), kernel 1 (the Tensile GEMM),
// collective 2 (RCCL's all-reduce kernel, an MSCCL kernel), memcpy 1, memset 1. On the GPU: compute
// 10 µs, communication 20 + 5 µs, memory 4 + 2 µs, and the 30 µs Stream Sync is neither busy nor
// compute: busy 10 + 20 + 5 + 4 + 2 = 41 µs.
func TestImportROCmAndSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rocm.json")
	if err := os.WriteFile(path, []byte(`{"traceEvents":[
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":9,"tid":9,"ts":100,"dur":3,"args":{"correlation":1}},
  {"ph":"X","cat":"kernel","name":"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1","pid":2,"tid":"0x1","ts":110,"dur":10,"args":{"device":2,"stream":"0x1","correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"hipLaunchKernel","pid":9,"tid":9,"ts":104,"dur":3,"args":{"correlation":2}},
  {"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_bf16(ncclDevComm*, unsigned long, ncclWork*)","pid":2,"tid":"0x2","ts":120,"dur":20,"args":{"device":2,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"mscclKernel_Sum_bf16_LL(ncclDevComm*, mscclAlgo*, mscclWork*)","pid":2,"tid":"0x2","ts":140,"dur":5,"args":{"device":2}},
  {"ph":"X","cat":"cuda_runtime","name":"hipMemcpyAsync","pid":9,"tid":9,"ts":108,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD (Device -> Device)","pid":2,"tid":"0x1","ts":150,"dur":4,"args":{"device":2,"correlation":3}},
  {"ph":"X","cat":"gpu_memset","name":"Memset (Device)","pid":2,"tid":"0x1","ts":154,"dur":2,"args":{"device":2}},
  {"ph":"X","cat":"cuda_runtime","name":"hipStreamSynchronize","pid":9,"tid":9,"ts":111,"dur":45},
  {"ph":"X","cat":"cuda_runtime","name":"hipDeviceSynchronize","pid":9,"tid":9,"ts":157,"dur":1},
  {"ph":"X","cat":"cuda_runtime","name":"hipEventSynchronize","pid":9,"tid":9,"ts":158,"dur":1},
  {"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":2,"tid":7,"ts":160,"dur":30,"args":{"device":2,"stream":7,"cuda_sync_kind":"Stream Sync"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _, ev := importOne(t, ImportOptions{}, path)
	want := map[string]int64{"runtime": 3, "sync": 4, "kernel": 1, "collective": 2, "memcpy": 1, "memset": 1}
	if !reflect.DeepEqual(sum.ByCategory, want) {
		t.Errorf("categories %v, want %v", sum.ByCategory, want)
	}
	for _, e := range ev {
		switch {
		case e.Category == "sync" && strings.HasPrefix(e.Name, "hip") && e.Device != -1:
			t.Errorf("%s on device %d, want the host", e.Name, e.Device)
		case e.Name == "Stream Sync" && (e.Category != "sync" || e.Device != 2 || e.Stream != 7):
			t.Errorf("Stream Sync: %s on device %d stream %d, want sync on device 2 stream 7", e.Category, e.Device, e.Stream)
		case strings.HasPrefix(e.Name, "ncclKernel") && e.Collective != "all_reduce":
			t.Errorf("RCCL kernel: collective %q", e.Collective)
		case strings.HasPrefix(e.Name, "msccl") && (CommLibrary(e.Name) != "rccl_msccl" || e.Collective != "other"):
			t.Errorf("MSCCL kernel: library %q, collective %q", CommLibrary(e.Name), e.Collective)
		}
	}
	rs := importSummaries(t, path)
	r := rs[0]
	if r.ComputeNs != 10e3 || r.CommNs != 25e3 || r.MemoryNs != 6e3 || r.BusyNs != 41e3 {
		t.Errorf("compute %d, communication %d, memory %d, busy %d ns; want 10,000, 25,000, 6,000, 41,000", r.ComputeNs, r.CommNs, r.MemoryNs, r.BusyNs)
	}
	for _, k := range r.Kernels {
		if k.Name == "Stream Sync" {
			t.Error("a sync record counted as a kernel")
		}
	}
}

// The host-blocking calls by their API names (recognize.go's sources), per-thread-stream variants
// included; calls that only enqueue a wait on the device (cuda/hipStreamWaitEvent) or query are
// not sync.
func TestHostSyncCalls(t *testing.T) {
	for name, want := range map[string]bool{
		"cudaDeviceSynchronize": true, "cudaStreamSynchronize_ptsz": true, "cuCtxSynchronize": true, "cuEventSynchronize": true,
		"hipStreamSynchronize_spt": true, "hipEventSynchronize": true, "hipDeviceSynchronize": true,
		"hipStreamWaitEvent": false, "cudaStreamWaitEvent": false, "cudaEventQuery": false, "hipLaunchKernel": false,
		"cudaDeviceSynchronizeX": false,
	} {
		if got := Category("cuda_runtime", name, FormatKineto) == "sync"; got != want {
			t.Errorf("%s: sync %v, want %v", name, got, want)
		}
	}
}

// Kernel names from the libraries (recognize.go's sources; the cuDNN, cuBLAS, CUTLASS, MIOpen
// and Tensile ones as they appear in ../shared/traces) and their class.
func TestKernelClass(t *testing.T) {
	for name, want := range map[string]string{
		"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4>>(pytorch_flash::Flash_fwd_params)": ClassAttention,
		"void flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits<128>>(Flash_bwd_params)":                                            ClassAttention,
		"fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t>::Params)":                      ClassAttention,
		"attn_fwd": ClassAttention,
		"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x128x128":                                                          ClassAttention,
		"cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1":                                                                                      ClassConvolution,
		"sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw":                                                                ClassConvolution,
		"void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int)":                                   ClassConvolution,
		"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*)":                                        ClassConvolution,
		"void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int)":                                               ClassConvolution,
		"volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1":                                                                            ClassConvolution,
		"void fft2d_r2c_32x32<float, false, 5u, true>(float2*, float const*, int, int)":                                                          ClassConvolution,
		"_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock":                                             ClassConvolution,
		"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1":                                                                    ClassConvolution,
		"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8":                                                                               ClassConvolution,
		"ampere_sgemm_32x32_sliced1x4_tn":                                                                                                        ClassGEMM,
		"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)": ClassGEMM,
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1":                                                           ClassGEMM,
		"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x192x64_MI16x16x1_SN_LDSB1":                                                           ClassGEMM,
		// Neither.
		"void split_embedding_codegen_forward_unweighted_kernel<float>(fbgemm_gpu::TensorAccessor<long>)": "",
		"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float)":             "",
		"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)":      "",
		"batched_transpose_16x64_pack_1x4_ediv_1x2_half":                                                  "",
		"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)":                  "",
	} {
		if got := KernelClass(name); got != want {
			t.Errorf("%s: class %q, want %q", name, got, want)
		}
	}
}
