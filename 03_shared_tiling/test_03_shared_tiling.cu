// test_03_shared_tiling - every variant against the double-precision reference on the spec's
// shapes, proof that the check catches the classic tiling bugs, and host-only checks of the
// launch configuration and the variant table.
#include <string>
#include <utility>

#include "kernels.cuh"
#include "testing.cuh"

using namespace ch03;

namespace {

// BEGIN INSTRUCTOR ONLY: planted-bug kernels, near-copies of the solution
// The tiling bugs students write most often, planted into a copy of sgemm_smem_tiled.
// (A missing __syncthreads() is the other classic, but a race fails only sometimes, so it is no
// use as a test; `make sanitize` runs racecheck for that.)
enum class Bug {
    k_rounded_down,  // K / TILE tiles instead of ceil_div(K, TILE): the last partial tile is lost
    clamped_edges,   // the edge loads stay in bounds by clamping the index, instead of loading 0:
                     // the padding of the last tile repeats the last column of A and row of B
};

// Element (row, col), or the nearest one inside the matrix: in bounds, but not zero.
__device__ float load_clamped(const float* m, int row, int col, int rows, int cols, int ld) {
    return m[static_cast<size_t>(min(row, rows - 1)) * ld + min(col, cols - 1)];
}

template <int TILE, Bug BUG>
__global__ void sgemm_tiled_with_bug(int M, int N, int K, float alpha, const float* A, const float* B,
                                     float beta, float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    const int num_k_tiles = (BUG == Bug::k_rounded_down) ? K / TILE : wb::ceil_div(K, TILE);
    for (int t = 0; t < num_k_tiles; ++t) {
        const int k0 = t * TILE;
        if (BUG == Bug::clamped_edges) {
            As[ty][tx] = load_clamped(A, row, k0 + tx, M, K, K);
            Bs[ty][tx] = load_clamped(B, k0 + ty, col, K, N, N);
        } else {
            As[ty][tx] = wb::load_or_zero(A, row, k0 + tx, M, K, K);
            Bs[ty][tx] = wb::load_or_zero(B, k0 + ty, col, K, N, N);
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) wb::store_c(&C[row * N + col], acc, alpha, beta);
}

template <Bug BUG>
void launch_with_bug(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                     cudaStream_t stream) {
    using Cfg = TileConfig<32>;
    sgemm_tiled_with_bug<32, BUG>
        <<<Cfg::grid(M, N), Cfg::block(), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// The grid computed with integer division: the last partial tile of rows and columns is never
// launched, so those elements of C stay unwritten (the harness poisons them with NaN).
void launch_grid_rounded_down(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C, cudaStream_t stream) {
    const dim3 grid(N / 32, M / 32);
    if (grid.x == 0 || grid.y == 0) return;  // a grid of zero blocks is a launch error
    sgemm_smem_tiled<32><<<grid, TileConfig<32>::block(), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}
// END INSTRUCTOR ONLY

}  // namespace

TEST_CASE("03: every variant is right on every shape of the spec", "[gpu][03]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
}

// BEGIN INSTRUCTOR ONLY: the check must catch the planted bugs; tile multiples hide them
TEST_CASE("03: the check catches planted tiling bugs", "[gpu][03]") {
    WB_REQUIRE_GPU();
    // K is not a multiple of 32 in each shape (K = 1: not even one whole tile); M or N is not
    // either, for the grid bug.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 48, 1}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(launch_smem_tiled<32>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_with_bug<Bug::k_rounded_down>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_with_bug<Bug::clamped_edges>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down, wb::Precision::fp32).pass);
    }
}

TEST_CASE("03: shapes that are exact tile multiples hide the edge bugs", "[gpu][03]") {
    WB_REQUIRE_GPU();
    // Why the spec's shape list is full of odd sizes: on a multiple of the tile every planted bug
    // above computes the right answer, so a test with only such sizes proves nothing about edges.
    wb::GemmProblem prob(wb::Shape{128, 96, 64}, 1.0f, 0.0f, 3);
    CHECK(prob.verify(launch_with_bug<Bug::k_rounded_down>, wb::Precision::fp32).pass);
    CHECK(prob.verify(launch_with_bug<Bug::clamped_edges>, wb::Precision::fp32).pass);
    CHECK(prob.verify(launch_grid_rounded_down, wb::Precision::fp32).pass);
}
// END INSTRUCTOR ONLY

TEST_CASE("03: the grid covers every element of C, and no more than one tile extra", "[03]") {
    for (wb::Shape s :
         {wb::Shape{1, 1, 1}, wb::Shape{31, 33, 1}, wb::Shape{4097, 65, 1}, wb::Shape{500000, 7, 1}}) {
        INFO("shape " << wb::to_string(s));
        const dim3 g16 = TileConfig<16>::grid(s.m, s.n);
        const dim3 g32 = TileConfig<32, 4>::grid(s.m, s.n);
        for (const auto& gt : {std::make_pair(g16, 16), std::make_pair(g32, 32)}) {
            const dim3 g = gt.first;
            const long long tile = gt.second;
            CHECK(g.x * tile >= s.n);
            CHECK(g.y * tile >= s.m);
            CHECK((g.x - 1) * tile < s.n);
            CHECK((g.y - 1) * tile < s.m);
            CHECK(g.y <= 65535);
        }
    }
    CHECK(TileConfig<32, 4>::block().x == 32);
    CHECK(TileConfig<32, 4>::block().y == 8);
    CHECK(TileConfig<16>::kThreads == 256);
}

TEST_CASE("03: the variant table is well formed", "[03]") {
    const auto variants = wb::table(kSgemmVariants);
    REQUIRE(variants.size() >= 4);
    for (size_t i = 0; i < variants.size(); ++i) {
        INFO("variant " << variants[i].name);
        CHECK(variants[i].run != nullptr);
        CHECK(std::string(variants[i].what).size() > 0);
        CHECK(variants[i].info.kernel != nullptr);  // the harness prints its registers and occupancy
        CHECK(variants[i].info.threads > 0);
        CHECK(variants[i].info.threads <= 1024);
        CHECK(variants[i].info.threads % 32 == 0);
        CHECK(variants[i].info.dynamic_smem == 0);  // every tile here is a static array
        for (size_t j = i + 1; j < variants.size(); ++j)
            CHECK(std::string(variants[i].name) != variants[j].name);
    }
}

TEST_CASE("03: bad input exits 2, no GPU exits 3, --help exits 0", "[03]") {
    wb::test::check_program_exit_statuses("03_shared_tiling");
}
