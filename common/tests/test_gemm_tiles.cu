// test_gemm_tiles.cu - CPU tests of the machinery the tiled chapters share (gemm_tiles.cuh): the
// block order, how a tile is cut into copies, and the wave model behind each chapter's `best`.
#include <cmath>
#include <utility>
#include <vector>

#include "gemm_tiles.cuh"
#include "testing.cuh"

namespace {
// Equal up to rounding (Catch2's Approx is spelled differently in v2 and v3).
bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); }

// Every element of a ROWS x COLS tile is moved by exactly one (thread, chunk, element of the chunk).
template <int ROWS, int COLS, int CHUNK, int THREADS>
int elements_not_moved_once() {
    using Ch = wb::TileChunks<ROWS, COLS, CHUNK, THREADS>;
    std::vector<int> hits(ROWS * COLS, 0);
    for (int tid = 0; tid < THREADS; ++tid)
        for (int i = 0; i < Ch::PER_THREAD; ++i)
            for (int j = 0; j < CHUNK; ++j) {
                const int row = Ch::row(tid, i), col = Ch::col(tid) + j;
                if (row < 0 || row >= ROWS || col < 0 || col >= COLS) return -1;
                ++hits[row * COLS + col];
            }
    int wrong = 0;
    for (int h : hits) wrong += h != 1;
    return wrong;
}

}  // namespace

TEST_CASE("gemm_tiles: the block order visits every tile exactly once", "[common]") {
    for (int group : {1, 2, 8, 16})
        for (auto [tm, tn] : {std::pair<int, int>{1, 1}, {32, 32}, {8, 64}, {37, 5}, {5, 37}, {9, 8}}) {
            std::vector<int> hits(tm * tn, 0);
            for (int b = 0; b < tm * tn; ++b) {
                const wb::TileIndex t = wb::tile_of_block(b, tm, tn, group);
                REQUIRE(t.m >= 0);
                REQUIRE(t.m < tm);
                REQUIRE(t.n >= 0);
                REQUIRE(t.n < tn);
                ++hits[t.m * tn + t.n];
            }
            int wrong = 0;
            for (int h : hits) wrong += h != 1;
            INFO("bands of " << group << " rows, " << tm << " x " << tn << " tiles");
            CHECK(wrong == 0);
        }
}

TEST_CASE("gemm_tiles: group_rows 1 is row-major order, larger bands walk down a band first", "[common]") {
    CHECK(wb::tile_of_block(5, 4, 4, 1).m == 1);
    CHECK(wb::tile_of_block(5, 4, 4, 1).n == 1);
    CHECK(wb::tile_of_block(1, 32, 32, 8).m == 1);
    CHECK(wb::tile_of_block(1, 32, 32, 8).n == 0);
    CHECK(wb::tile_of_block(8, 32, 32, 8).m == 0);  // after 8 rows of the band: the next column
    CHECK(wb::tile_of_block(8, 32, 32, 8).n == 1);
    // The last band of 37 tile rows in bands of 8 has 5 rows: it walks down 5, not 8.
    CHECK(wb::tile_of_block(32 * 5 + 5, 37, 5, 8).m == 32);
    CHECK(wb::tile_of_block(32 * 5 + 5, 37, 5, 8).n == 1);
}

TEST_CASE("gemm_tiles: TileChunks moves every element of a tile exactly once", "[common]") {
    // A tiles (BM x BK) and B tiles (BK x BN) of chapter 05's tilings, by float4 and by float.
    CHECK(elements_not_moved_once<128, 8, 4, 256>() == 0);
    CHECK(elements_not_moved_once<128, 8, 1, 256>() == 0);
    CHECK(elements_not_moved_once<8, 128, 4, 256>() == 0);
    CHECK(elements_not_moved_once<8, 128, 1, 256>() == 0);
    CHECK(elements_not_moved_once<128, 16, 4, 256>() == 0);
    CHECK(elements_not_moved_once<16, 128, 1, 256>() == 0);
    CHECK(elements_not_moved_once<8, 256, 4, 256>() == 0);
    CHECK(elements_not_moved_once<8, 256, 1, 256>() == 0);
    CHECK(elements_not_moved_once<8, 64, 4, 128>() == 0);
    CHECK(elements_not_moved_once<64, 8, 1, 128>() == 0);
    // Chunks of 8 halves (tensor-core chapters).
    CHECK(elements_not_moved_once<128, 32, 8, 256>() == 0);
    CHECK(elements_not_moved_once<32, 128, 8, 128>() == 0);
    // A thread keeps one column: its chunks differ only in the row.
    using Ch = wb::TileChunks<128, 8, 4, 256>;
    CHECK(Ch::PER_ROW == 2);
    CHECK(Ch::ROW_STEP == 128);
    CHECK(Ch::PER_THREAD == 1);
    CHECK(Ch::row(3, 0) == 1);
    CHECK(Ch::col(3) == 4);
}

TEST_CASE("gemm_tiles: busiest_sm_time counts the tiles of the busiest SM", "[common]") {
    // 132 SMs: 132 tiles are one round, 133 are two (one SM works twice as long), 264 also two.
    const double one = wb::busiest_sm_time(128 * 12, 128 * 11, 1024, 128, 128, 1, 132, 1.0);
    CHECK(same(one, 128.0 * 128 * 1024));
    CHECK(same(wb::busiest_sm_time(128 * 12 + 1, 128 * 11, 1024, 128, 128, 1, 132, 1.0), 2 * one));
    CHECK(same(wb::busiest_sm_time(128 * 24, 128 * 11, 1024, 128, 128, 1, 132, 1.0), 2 * one));
    // A partial tile costs a whole one: the kernel computes the padding too.
    CHECK(same(wb::busiest_sm_time(1, 1, 1024, 128, 128, 1, 132, 1.0), one));
    // Splitting K in 4 slices: 4x the tiles, a quarter of K each. 33 tiles on 132 SMs: one round of
    // quarter tiles instead of one round of whole ones.
    CHECK(same(wb::busiest_sm_time(128 * 3, 128 * 11, 1024, 128, 128, 4, 132, 1.0), one / 4));
    // The rate divides: twice the rate, half the time.
    CHECK(same(wb::busiest_sm_time(4096, 4096, 4096, 128, 256, 1, 132, 2.0),
               wb::busiest_sm_time(4096, 4096, 4096, 128, 256, 1, 132, 1.0) / 2));
}
