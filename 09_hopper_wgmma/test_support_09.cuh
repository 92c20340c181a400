// test_support_09.cuh - what the chapter's tests (test_09_hopper_wgmma.cu) and the lab's tests
// (lab/test_09_lab.cu) share: the rule that skips a GPU case on anything but a Hopper.
#pragma once

#include "kernels.cuh"
#include "testing.cuh"

namespace t09 {

inline bool hopper_present() {
    return wb::query_device(0).cc_number() == 90;
}

}  // namespace t09

// GPU test cases of this chapter also need the GPU to be a Hopper; on another GPU they are skipped
// and counted as skipped (even with REQUIRE_GPU=1: no other GPU can run sm_90a code).
#define REQUIRE_HOPPER()                                                       \
    do {                                                                       \
        WB_REQUIRE_GPU();                                                      \
        if (!t09::hopper_present()) {                                          \
            WB_SKIP_CASE("not a Hopper GPU (sm_90): chapter 09 test skipped"); \
        }                                                                      \
    } while (0)
