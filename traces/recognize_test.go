package traces

import "testing"

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
