// step5_parts_09 - step 5 adds two things at once to step 4: clusters of two blocks that share B by
// TMA multicast, and an epilogue through shared memory with TMA stores. This program times each
// alone, beside step 4 and step 5, so the cost or gain of each can be read separately (README,
// "Step 5: what the numbers say"). Every row is verified like a ladder row.
// Run: make -C 09_hopper_wgmma step5   (or lab/step5_parts_09 [the chapter's options])
#include <cstdio>

#include "../kernels.cuh"

namespace ch09 {

// WgmmaTiling<T, BM, BN, STAGES, CONSUMERS, PRODUCER, PERSISTENT, CLUSTER, TMA_STORE>
template <class T> using MulticastOnly = WgmmaTiling<T, 128, 256, 4, 2, true, true, 2, false>;
template <class T> using TmaStoreOnly = WgmmaTiling<T, 128, 256, 4, 2, true, true, 1, true>;

template <class T>
std::vector<wb::Gemm16Variant<T>> parts() {
    return {
        {"persistent", run_step<Persistent128x256<T>>, "step 4", info<Persistent128x256<T>>(), 90},
        {"multicast_only", run_step<MulticastOnly<T>>, "step 4 in clusters of 2 sharing B by multicast",
         info<MulticastOnly<T>>(), 90},
        {"tma_store_only", run_step<TmaStoreOnly<T>>, "step 4 with step 5's epilogue (shared memory + TMA stores)",
         info<TmaStoreOnly<T>>(), 90},
        {"cluster_multicast", run_step<Cluster2Persistent128x256<T>>, "step 5: both", info<Cluster2Persistent128x256<T>>(),
         90},
    };
}

}  // namespace ch09

int main(int argc, char** argv) {
    wb::Chapter ch{"step5_parts_09", {}, ch09::parts<__half>(), ch09::parts<__nv_bfloat16>()};
    ch.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    const wb::DeviceFacts dev = wb::require_device(ch.name);
    if (dev.cc_major != 9 || dev.cc_minor != 0) {
        std::fprintf(stderr, "%s: error: needs compute capability 9.0; %s is %d.%d\n", ch.name.c_str(), dev.name.c_str(),
                     dev.cc_major, dev.cc_minor);
        return wb::kExitNoDevice;
    }
    return wb::run_chapter(ch, opt);
}
