// step12_epilogue_overlap.cuh - step 12 of chapter 09 (variant epilogue_overlap): step 5's clusters
// and 128 x 256 tiles, with the stores of a tile's C running under the next tile's main loop.
//
// What stops the tensor cores in step 5's epilogue. Both consumers share a tile, so both leave the
// tensor cores at the same moment, and each pushes its 64 KB of C through two 8 KB buffers: before
// writing chunk j it waits (cp.async.bulk.wait_group.read) until the TMA store of chunk j - 2 has
// read its buffer. Six of its eight chunks wait so, and as every SM stores at the same moment, the
// stores drain at the GPU's write bandwidth shared by all of them: the consumers return to their
// wgmmas only when 48 of their 64 KB have left. The copy from registers to shared memory itself is
// short; the wait for the drain is what costs. The producer is not the problem (it fills the ring
// with the next tile's k-tiles during the epilogue), nor the named barriers (per warpgroup already).
//
// The idea: give a whole tile's C (128 KB) a place in shared memory, so the consumers write it
// without waiting and go straight back to the tensor cores, and let another thread issue the stores
// and wait for them. The register file cannot hold a second tile; shared memory can, if the ring
// lends the epilogue some of its room. The budget, 227 KB per block, 48 KB per stage:
//   2 stages + 128 KB of C buffers: the ring is too shallow to hide a TMA load's latency all along
//     the k-loop, a worse loss than the epilogue;
//   3 stages + 80 KB of C buffers: the consumers still wait for 48 KB to drain, and the k-loop has
//     one stage less on every tile;
//   here, step 5's 4 stages + its 32 KB of C buffers, and the epilogue BORROWS 2 of the 4 slots:
//     32 KB + 2 x 48 KB = 128 KB, exactly one tile of C. The ring keeps its 4 stages for the k-loop;
//     only at a tile's start do the k-tiles pass through 2 slots, while the borrowed ones drain.
//
// The ring becomes a sequence of uses: each tile's k-tiles, and for each tile two uses that carry
// C, not A and B. Tile n's two epilogue uses come right after the first LEAD k-tiles of tile n + 1
// (LEAD = STAGES - 2 = 2, or fewer when K is short; after its own last k-tile for a block's last
// tile). So when the consumers finish tile n, the next tile's first two k-tiles are already in the
// two free slots; the epilogue's slots are the two the k-loop has just left. The next tile's first
// four k-tiles run before a k-tile needs a borrowed slot back: that is the time the stores have to
// drain its first 48 KB (RingSchedule says where each use falls, test_09 checks it).
//
// Who does what:
//   producer (thread 0)  loads k-tiles as step 5 does; at an epilogue's uses it waits for the slot
//                        to be free (empty) and LENDS it: one plain arrival on full, no bytes.
//   consumers            k-loop as step 5; then wait for the two lent slots (full) and for the
//                        previous tile's stores to have read the 32 KB buffers (staging_free), write
//                        their 8 chunks of C (3 per borrowed slot, 2 in the buffers), and after each
//                        chunk one arrival on its chunk_ready barrier; then the next tile's wgmmas.
//   store thread         warp 1 of the producer warpgroup (lane 0): per chunk, waits for
//   (thread 32)          chunk_ready and starts its TMA store; per borrowed slot, waits until the
//                        slot's stores have read it, then releases it to every block of the
//                        cluster on behalf of the consumer warps; then staging_free.
#pragma once

#include "step5_cluster_multicast.cuh"
#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 12's configuration: step 5's, plus the barriers of the epilogue (one per chunk of C per
// consumer, and staging_free): 225 KB of shared memory, as step 5.
template <class T>
struct EpilogueOverlap128x256 : Cluster2Persistent128x256<T> {
    using Base = Cluster2Persistent128x256<T>;
    static constexpr int EPI_SLOTS = 2;                             // ring slots a tile's epilogue borrows
    static constexpr int LEAD = Base::STAGES - EPI_SLOTS;           // k-tiles of the next tile before them, at most
    static constexpr int C_CHUNKS = Base::BN / Base::C_CHUNK_COLS;  // chunks of C per consumer: 8
    static constexpr int SLOT_CHUNKS = Base::STAGE_BYTES / (Base::CONSUMERS * Base::C_CHUNK_BYTES);  // 3
    static constexpr int BUFFER_CHUNKS = Base::EPI_BYTES / (Base::CONSUMERS * Base::C_CHUNK_BYTES);  // 2
    static constexpr int EPI_BARRIERS = Base::CONSUMERS * C_CHUNKS + 1;
    static constexpr int SMEM_BYTES = Base::SMEM_BYTES + EPI_BARRIERS * 8;

    static_assert(EPI_SLOTS == 2, "the store thread releases two borrowed slots, one bulk group each");
    static_assert(LEAD >= 1, "a borrowed slot must have been used by this tile or an earlier one");
    static_assert(Base::STAGE_BYTES % (Base::CONSUMERS * Base::C_CHUNK_BYTES) == 0,
                  "a borrowed stage holds whole chunks of C of every consumer");
    static_assert(EPI_SLOTS * SLOT_CHUNKS + BUFFER_CHUNKS == C_CHUNKS,
                  "the borrowed slots and the buffers together hold exactly one tile of C");
    static_assert(SMEM_BYTES <= 227 * 1024, "an H100/H200 block may use at most 227 KB of shared memory");
};

// The ring's sequence of uses, the same for the producer, the consumers and the store thread of
// every block of a cluster. A block's first tile is its k-tiles; every later tile is its first
// `lead` k-tiles, then the previous tile's EPI_SLOTS epilogue uses, then its other k-tiles; the last
// tile's epilogue uses follow its last k-tile. A use u sits in slot u % STAGES at phase u / STAGES.
// Every role walks the sequence with these steps, from use 0 (test_09 checks the walk).
template <class Cfg>
struct RingSchedule {
    int k_tiles, lead;
    __host__ __device__ explicit RingSchedule(int k_tiles_)
        : k_tiles(k_tiles_), lead(k_tiles_ < Cfg::LEAD ? k_tiles_ : Cfg::LEAD) {}
    // The use after k-tile kt's, which sits at `use`: the next one, or, after the first `lead`
    // k-tiles of a tile that is not the block's first, the one past the previous tile's epilogue.
    __host__ __device__ int after_k_tile(int use, int kt, bool first_tile) const {
        return use + 1 + (!first_tile && kt == lead - 1 ? Cfg::EPI_SLOTS : 0);
    }
    // The same over a whole tile that starts at `use`.
    __host__ __device__ int after_tile(int use, bool first_tile) const {
        return use + k_tiles + (first_tile ? 0 : Cfg::EPI_SLOTS);
    }
    // The first of a tile's epilogue uses, from `end`, the use after the tile's (after_tile).
    __host__ __device__ int epilogue_use(int end, bool last_tile) const { return last_tile ? end : end + lead; }
};

// Where chunk j (columns 32 j ..) of consumer c's C goes when the epilogue's first use is `e`, as a
// byte offset from the ring's base: chunks 0-2 in slot e % STAGES, 3-5 in slot (e + 1) % STAGES (in
// each, consumer c's three 8 KB pieces), 6-7 in the consumer's two buffers after the stages
// (StageRing::c_chunk). Every piece starts on a 1024-byte swizzle atom.
template <class Cfg>
__host__ __device__ constexpr int epilogue_chunk_offset(int e, int c, int j) {
    if (j < Cfg::EPI_SLOTS * Cfg::SLOT_CHUNKS) {
        const int slot = (e + j / Cfg::SLOT_CHUNKS) % Cfg::STAGES;
        return slot * Cfg::STAGE_BYTES + (c * Cfg::SLOT_CHUNKS + j % Cfg::SLOT_CHUNKS) * Cfg::C_CHUNK_BYTES;
    }
    const int i = j - Cfg::EPI_SLOTS * Cfg::SLOT_CHUNKS;
    return Cfg::STAGES * Cfg::STAGE_BYTES + (Cfg::BUFFER_CHUNKS * c + i) * Cfg::C_CHUNK_BYTES;
}

// The epilogue's barriers, after the ring's: chunk_ready(c, j) completes a phase when consumer c has
// written chunk j of its C (one arrival, by its thread 0 after a named barrier of the warpgroup);
// staging_free completes a phase when every store of a tile has read its source (one arrival, by the
// store thread). Each completes one phase per tile.
template <class Cfg>
struct EpilogueBarriers {
    uint64_t* base;
    __device__ explicit EpilogueBarriers(const StageRing<Cfg>& ring) : base(ring.empty(Cfg::STAGES)) {}
    __device__ uint64_t* chunk_ready(int c, int j) const { return base + c * Cfg::C_CHUNKS + j; }
    __device__ uint64_t* staging_free() const { return base + Cfg::CONSUMERS * Cfg::C_CHUNKS; }
    __device__ void init() const {
        for (int i = 0; i < Cfg::EPI_BARRIERS; ++i) mbar_init(base + i, 1);
    }
};

// The producer lends the epilogue uses starting at e: for each, once the slot's previous use is
// released by every block of the cluster, one arrival on its full barrier completes the phase with
// no bytes. The consumers wait for it as for a k-tile, so every slot's full and empty barriers
// still complete exactly one phase per use.
template <class Cfg>
__device__ __forceinline__ void lend_slots(const StageRing<Cfg>& ring, int e) {
    for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) {
        const int s = u % Cfg::STAGES;
        mbar_wait(ring.empty(s), ((u / Cfg::STAGES) & 1) ^ 1);
        mbar_arrive(ring.full(s));
    }
}

// A borrowed slot given back by the store thread: in every block of the cluster, the arrivals that
// the consumer warps of this block would make (release_to_cluster). Their wgmmas stopped reading
// the slot before they wrote C into it, and its stores have read C back out.
template <class Cfg>
__device__ __forceinline__ void release_borrowed(const StageRing<Cfg>& ring, int u) {
    for (int cta = 0; cta < Cfg::CLUSTER; ++cta)
        for (int w = 0; w < Cfg::CONSUMERS * 4; ++w) mbar_arrive_cluster(ring.empty(u % Cfg::STAGES), cta);
}

// A consumer's epilogue: its 8 chunks into the places epilogue_chunk_offset gives, each announced to
// the store thread as soon as it is written. No wait for a store here: the caller has waited for
// the lent slots and staging_free, so every place is free.
template <class Cfg>
__device__ __forceinline__ void stage_tile(const float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const WgmmaParams& p,
                                           const StageRing<Cfg>& ring, const EpilogueBarriers<Cfg>& bars, int consumer,
                                           int e, int row0, int col0) {
    const int barrier_id = 1 + consumer;  // named barrier of this warpgroup (0 is __syncthreads)
#pragma unroll
    for (int j = 0; j < Cfg::C_CHUNKS; ++j) {
        float* buf = reinterpret_cast<float*>(ring.base + epilogue_chunk_offset<Cfg>(e, consumer, j));
        write_c_chunk<Cfg>(acc, p, buf, j, row0, col0);
        fence_proxy_async_smem();  // these writes must be visible to the TMA unit's reads
        named_barrier_sync(barrier_id, 128);
        if (threadIdx.x % 128 == 0) mbar_arrive(bars.chunk_ready(consumer, j));
    }
}

// The store thread's work for the block's tile n at (row0, col0), whose epilogue uses start at e:
// each chunk's TMA store as soon as it is written, in the order the consumers write them, committed
// as three bulk groups (first borrowed slot, second, buffers), so that each borrowed slot goes back
// to the ring as soon as its own stores have read it: the next tile's k-tiles are waiting for it.
template <class Cfg>
__device__ __forceinline__ void store_tile_behind(const WgmmaParams& p, const StageRing<Cfg>& ring,
                                                  const EpilogueBarriers<Cfg>& bars, int n, int e, int row0, int col0) {
    for (int j = 0; j < Cfg::C_CHUNKS; ++j) {
        for (int c = 0; c < Cfg::CONSUMERS; ++c) {
            mbar_wait(bars.chunk_ready(c, j), n & 1);
            tma_store_2d(&p.map_c, ring.base + epilogue_chunk_offset<Cfg>(e, c, j), col0 + j * Cfg::C_CHUNK_COLS,
                         row0 + c * Cfg::WG_ROWS);
        }
        if ((j + 1) % Cfg::SLOT_CHUNKS == 0 || j + 1 == Cfg::C_CHUNKS) bulk_commit_group();
    }
    bulk_wait_group_read<2>();  // the first borrowed slot's stores have read it
    release_borrowed(ring, e);
    bulk_wait_group_read<1>();  // the second's
    release_borrowed(ring, e + 1);
    bulk_wait_group_read<0>();  // the buffers'
    mbar_arrive(bars.staging_free());
}

// Step 5's kernel with the ring schedule above. The tile walk (ClusterTiles), the multicast copies
// and the releases of k-tiles to the cluster are step 5's. Where C cannot be written by TMA
// (p.c_tma false) the consumers store from registers (step 4's store_tile) and release the lent
// slots themselves, and the store thread has nothing to do.
//
// The parity waits stay exact: a consumer writes tile n's chunks only after staging_free's phase
// n - 1, that is after the store thread has waited for every chunk of tile n - 1, so no
// chunk_ready barrier runs two phases ahead of the store thread; and staging_free's phase n needs
// tile n's chunks, which the consumers write only after waiting for phase n - 1.
template <class Cfg>
__global__ void __cluster_dims__(Cfg::CLUSTER, 1, 1) __launch_bounds__(Cfg::THREADS, 1)
    epilogue_overlap_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PRODUCER && Cfg::PERSISTENT && Cfg::TMA_STORE && Cfg::WG_MMAS == 1 && Cfg::CONSUMERS == 2,
                  "step 12: a producer warpgroup, persistent clusters, two consumers of one 64-row slice each");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const EpilogueBarriers<Cfg> bars(ring);
    const int wg = threadIdx.x / 128;
    const ClusterTiles<Cfg> work(p, int(cluster_ctarank()));
    const RingSchedule<Cfg> ring_uses(wb::ceil_div(p.K, Cfg::BK));

    if (threadIdx.x == 0) {
        bars.init();
        ring.init();  // its fence makes bars' initialisation visible as well
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    cluster_sync();  // every barrier of every block of the cluster exists before anyone uses it

    if (wg == 0) {
        // 40 registers are plenty to compute addresses; the freed ones go to the consumers.
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;
            for (int g = work.first; g < work.groups; g += work.step) {
                const wb::TileIndex t = work.tile(g);
                for (int kt = 0; kt < ring_uses.k_tiles; ++kt) {
                    const int s = use % Cfg::STAGES;
                    // until its previous use is released (first pass: parity 1, complete on a fresh barrier)
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage_multicast(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt, work.rank);
                    const int next = ring_uses.after_k_tile(use, kt, g == work.first);
                    if (next != use + 1) lend_slots(ring, use + 1);  // the previous tile's epilogue uses
                    use = next;
                }
            }
            if (use > 0) lend_slots(ring, ring_uses.epilogue_use(use, true));  // the last tile's
        } else if (threadIdx.x == 32 && p.c_tma) {
            int use = 0, n = 0;
            for (int g = work.first; g < work.groups; g += work.step, ++n) {
                const wb::TileIndex t = work.tile(g);
                use = ring_uses.after_tile(use, g == work.first);
                const int e = ring_uses.epilogue_use(use, g + work.step >= work.groups);
                store_tile_behind(p, ring, bars, n, e, t.m * Cfg::BM, t.n * Cfg::BN);
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        int use = 0, n = 0;  // the ring's use, this block's tiles so far
        for (int g = work.first; g < work.groups; g += work.step, ++n) {
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < ring_uses.k_tiles; ++kt) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, wg_row0);  // returns when the previous group is done
                if (previous >= 0) release_to_cluster(ring, previous);
                previous = s;
                use = ring_uses.after_k_tile(use, kt, g == work.first);
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release_to_cluster(ring, previous);
            const wb::TileIndex t = work.tile(g);
            // The two slots the producer lends this epilogue (usually lent long before: the slots
            // of this tile's last k-tiles but two).
            const int e = ring_uses.epilogue_use(use, g + work.step >= work.groups);
            for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) mbar_wait(ring.full(u % Cfg::STAGES), (u / Cfg::STAGES) & 1);
            if (p.c_tma) {
                mbar_wait(bars.staging_free(), (n & 1) ^ 1);  // tile n - 1's stores have read everything
                stage_tile<Cfg>(acc, p, ring, bars, consumer, e, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
            } else {
                for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) release_to_cluster(ring, u % Cfg::STAGES);
                store_tile<Cfg>(acc, p, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
            }
        }
    }
    // A block must not exit while its neighbour may still multicast into it or arrive on its barriers;
    // the store thread has waited for its last stores to read shared memory.
    __syncwarp();  // barrier.cluster is .aligned: each warp converged
    cluster_sync();
}

}  // namespace ch09
