// tune_configs_09.cuh - chapter 09's lab: step 5's kernel (cluster_multicast) in the configurations
// lab/tune_09 sweeps, and the tests beside it (lab/test_09_lab) check. Nothing here is part of the
// ladder: every row runs step 5's kernel unchanged; only its configuration, or the band of the tile
// order the launcher hands it, differs from the ladder's.
//
// The three knobs:
//   cluster  blocks per cluster sharing B's tile by multicast (c2: B is read from L2 once per two
//            tiles of C; c4: once per four, at the price of clusters that must fit a GPC together)
//   stages   slots of the ring (s4: the ladder's four 48 KB stages; s3 leaves 48 KB of shared memory
//            unused, one k-tile less of run-ahead)
//   band     rows of tile groups per band of the tile order (TileGroups, wb::tile_of_block): a group is
//            `cluster` tiles stacked down a column, so a band spans band x cluster rows of tiles. A
//            narrow band revisits the same B columns sooner, a wide one the same A rows.
// Row names: c, the cluster; s, the stages; b, the band. The ladder's own configuration is the row
// named step5_c2_s4_b8, so that a sweep's CSV shows which row is step 5 as shipped.
#pragma once

#include <vector>

#include "../kernels.cuh"

namespace ch09 {

// WgmmaTiling<T, BM, BN, STAGES, CONSUMERS, PRODUCER, PERSISTENT, CLUSTER, TMA_STORE>: step 5's
// Cluster2Persistent128x256 with one knob turned.
template <class T>
using Cluster2Stages3 = WgmmaTiling<T, 128, 256, 3, 2, true, true, 2, true>;
template <class T>
using Cluster4Persistent128x256 = WgmmaTiling<T, 128, 256, 4, 2, true, true, 4, true>;

static_assert(kBand == 8, "the row step5_c2_s4_b8 is named after the ladder's band");
static_assert(Cluster2Stages3<__half>::SMEM_BYTES <= 227 * 1024 &&
                  Cluster4Persistent128x256<__half>::SMEM_BYTES <= 227 * 1024,
              "every configuration must fit one block's 227 KB of opt-in shared memory");
static_assert(Cluster2Persistent128x256<__half>::SMEM_BYTES + Cluster2Persistent128x256<__half>::STAGE_BYTES >
                  227 * 1024,
              "a fifth stage would not fit: the sweep tries fewer stages, not more");

// One row: step 5's kernel in configuration Cfg, its tile order in bands of BAND group rows.
template <class Cfg, int BAND = kBand>
wb::Gemm16Variant<typename Cfg::T> step5_row(const char* name, const char* what) {
    return {name, run_step<Cfg, BAND>, what, info<Cfg>(), 90};
}

// Nine rows per type: the ladder's, four other bands, three stages, and clusters of four with the
// bands that span 8, 16 and 32 tile rows (c2_s4_b4, step5_c2_s4_b8 and c2_s4_b16 span the same).
template <class T>
std::vector<wb::Gemm16Variant<T>> tune_configs() {
    using C2 = Cluster2Persistent128x256<T>;
    using C4 = Cluster4Persistent128x256<T>;
    return {
        step5_row<C2>("step5_c2_s4_b8", "step 5 as shipped: clusters of 2, 4 stages, bands of 8 groups (16 tile rows)"),
        step5_row<C2, 2>("c2_s4_b2", "step 5 in bands of 2 groups (4 tile rows)"),
        step5_row<C2, 4>("c2_s4_b4", "step 5 in bands of 4 groups (8 tile rows)"),
        step5_row<C2, 16>("c2_s4_b16", "step 5 in bands of 16 groups (32 tile rows)"),
        step5_row<C2, 32>("c2_s4_b32", "step 5 in bands of 32 groups (64 tile rows: all of 8192)"),
        step5_row<Cluster2Stages3<T>>("c2_s3_b8", "step 5 with a ring of 3 stages (48 KB of shared memory left over)"),
        step5_row<C4, 2>("c4_s4_b2", "clusters of 4 share each B tile, bands of 2 groups (8 tile rows)"),
        step5_row<C4, 4>("c4_s4_b4", "clusters of 4 share each B tile, bands of 4 groups (16 tile rows)"),
        step5_row<C4>("c4_s4_b8", "clusters of 4 share each B tile, bands of 8 groups (32 tile rows)"),
    };
}

}  // namespace ch09
