// 02_first_program.cu - a whole CUDA program, read top to bottom, before the harness takes over.
//
// C = A * B for row-major float matrices: A is M x K, B is K x N, C is M x N. Plain C-style host
// code and one kernel, nothing from common/: the chores that the other programs leave to
// common/gemm_harness.cu are written out here, numbered in the order they happen in main.
//
// Run: make 02 && ./02_first_program [M N K] [--plant-error]      (default: 512 512 512)
// Exit status, as for every program of the workbook: 0 PASS, 1 FAIL or a CUDA error,
// 2 bad input, 3 no usable CUDA device (or no code for it in this binary).
#include <cuda_runtime.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "02_first_program"
#define BLOCK_X 32      // threads per block along x: a warp takes 32 consecutive columns of C
#define BLOCK_Y 8       // threads per block along y: the block covers 8 rows of C
#define WARMUP 2        // untimed launches before the timed ones, so the clocks have ramped up
#define REPS 10         // timed launches, each on its own; the median resists a stray slow one
#define MAX_DIM 500000  // M / BLOCK_Y blocks must stay within the grid's y limit of 65535
#define CHECK_MACS 1e9  // multiply-adds the CPU check spends at most (a second or two)

enum { STATUS_OK = 0, STATUS_FAIL = 1, STATUS_BAD_INPUT = 2, STATUS_NO_DEVICE = 3 };

// One thread per element of C. Consecutive threads (threadIdx.x) take consecutive columns, so at
// each k a warp reads 32 neighbouring floats of B in one go and all share the same A[row][k].
__global__ void matmul_naive(int M, int N, int K, const float* A, const float* B, float* C) {
    // BEGIN SOLUTION: col from x, row from y; return outside C; K-term dot product into C[row * N + col]
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;  // the grid rounds up: the last blocks overhang C
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
    C[row * N + col] = sum;
    // END SOLUTION
}

// Every runtime call returns an error code; CHECK stops at the first that is not cudaSuccess and
// says where. A launch returns nothing: a bad configuration (or no code for this GPU) shows up in
// cudaGetLastError(), a fault while the kernel runs at the next call that waits for it.
#define CHECK(call) check((call), #call, __FILE__, __LINE__)

static void check(cudaError_t err, const char* call, const char* file, int line) {
    if (err == cudaSuccess) return;
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidKernelImage ||
        err == cudaErrorUnsupportedPtxVersion) {  // built for other GPUs (ARCH=...)
        int major = 0, minor = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
        fprintf(stderr,
                "%s: error: this binary holds no code for this GPU (sm_%d%d); rebuild it: "
                "make clean && make ARCH=sm_%d%d\n",
                PROGRAM, major, minor, major, minor);
        exit(STATUS_NO_DEVICE);
    }
    fprintf(stderr, PROGRAM ": error: %s:%d: %s failed: %s\n", file, line, call, cudaGetErrorString(err));
    exit(STATUS_FAIL);  // the process ends: the driver frees its device memory
}

// Bad input: one line on stderr, exit status 2.
static void bad_input(const char* format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, PROGRAM ": error: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    exit(STATUS_BAD_INPUT);
}

// A size is a whole number from 1 to MAX_DIM, digits only: "12", not "12x", "-3", "0" or "1e3".
static int parse_size(const char* text, const char* name) {
    char* end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno == ERANGE || v < 1 || v > MAX_DIM)
        bad_input("%s must be a whole number from 1 to %d, not '%s'", name, MAX_DIM, text);
    return (int)v;
}

// Seeded pseudo-random numbers, uniform in [-1, 1): the same data on every run, and not constant,
// so a wrong index gives a wrong answer. A 64-bit linear congruential generator; its top 24 bits
// make each value, so every value is exact in a float and the CPU starts from the same numbers.
static void fill_random(float* x, size_t count, unsigned long long seed) {
    unsigned long long state = seed;
    for (size_t i = 0; i < count; ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        x[i] = (float)(state >> 40) / 8388608.0f - 1.0f;  // 0 .. 2^24 - 1, over 2^23, minus 1
    }
}

static int compare_floats(const void* a, const void* b) {
    float x = *(const float*)a, y = *(const float*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    // ---- 1. the sizes: none (512 512 512) or three; bad input exits before any GPU work ---------
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf(
            "usage: %s [M N K] [--plant-error]   (A is M x K, B is K x N; default 512 512 512)\n"
            "  --plant-error  adds 1 to one entry of C after the copy back: the check must FAIL\n",
            PROGRAM);
        return STATUS_OK;
    }
    int plant_error = argc > 1 && strcmp(argv[argc - 1], "--plant-error") == 0;
    int count = argc - 1 - plant_error;  // the arguments before it are the sizes
    for (int i = 1; i <= count; ++i)
        if (strncmp(argv[i], "--", 2) == 0) bad_input("'%s' is not a size (try --help)", argv[i]);
    if (count != 0 && count != 3) bad_input("give three sizes M N K, or none (then 512 512 512)");
    int M = count ? parse_size(argv[1], "M") : 512;
    int N = count ? parse_size(argv[2], "N") : 512;
    int K = count ? parse_size(argv[3], "K") : 512;
    // The kernel indexes with int, so no matrix may hold more than INT_MAX elements.
    if ((long long)M * K > INT_MAX || (long long)K * N > INT_MAX || (long long)M * N > INT_MAX)
        bad_input("%d x %d x %d: A, B and C may hold at most %d elements each", M, N, K, INT_MAX);

    // ---- 2. a GPU -------------------------------------------------------------------------------
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        // No driver at all reads "driver version is insufficient" to the runtime: a driver version
        // of 0 tells the two apart, and the student needs to know which one to fix.
        int driver = 0;
        cudaDriverGetVersion(&driver);
        const char* why = err == cudaErrorInsufficientDriver && driver == 0
                              ? "no NVIDIA driver was found: install the NVIDIA driver for your GPU, then check "
                                "that 'nvidia-smi' lists it"
                              : err != cudaSuccess ? cudaGetErrorString(err) : "none found";
        fprintf(stderr, "%s: error: no usable CUDA device (%s); run 'make check-env' for details.\n", PROGRAM, why);
        return STATUS_NO_DEVICE;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t bytes_A = (size_t)M * K * sizeof(float), bytes_B = (size_t)K * N * sizeof(float);
    size_t bytes_C = (size_t)M * N * sizeof(float), free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (bytes_A + bytes_B + bytes_C > free_bytes)
        bad_input("%d x %d x %d needs %.2f GiB of device memory; %.2f GiB are free", M, N, K,
                  (bytes_A + bytes_B + bytes_C) / 1073741824.0, free_bytes / 1073741824.0);
    printf("%s: C = A * B with M = %d, N = %d, K = %d on %s (sm_%d%d)\n", PROGRAM, M, N, K, prop.name,
           prop.major, prop.minor);

    // ---- 3. host memory: A and B random, C for the result, two rows for the check ---------------
    float* A = (float*)malloc(bytes_A);
    float* B = (float*)malloc(bytes_B);
    float* C = (float*)malloc(bytes_C);
    double* ref = (double*)malloc(N * sizeof(double));  // step 7: exact dot products of one row
    double* mag = (double*)malloc(N * sizeof(double));  // step 7: their sums of |a b|
    if (!A || !B || !C || !ref || !mag) bad_input("not enough host memory for %d x %d x %d", M, N, K);
    fill_random(A, (size_t)M * K, 1);
    fill_random(B, (size_t)K * N, 2);

    // ---- 4. device memory, inputs copied in -----------------------------------------------------
    float *dA = NULL, *dB = NULL, *dC = NULL;
    CHECK(cudaMalloc((void**)&dA, bytes_A));
    CHECK(cudaMalloc((void**)&dB, bytes_B));
    CHECK(cudaMalloc((void**)&dC, bytes_C));
    CHECK(cudaMemcpy(dA, A, bytes_A, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, bytes_B, cudaMemcpyHostToDevice));
    // Every byte 0xFF makes every float a NaN: an element the kernel forgets to write fails.
    CHECK(cudaMemset(dC, 0xFF, bytes_C));

    // ---- 5. launch: the grid rounds UP (67 rows need 9 blocks of 8, not 67 / 8 = 8) -------------
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((N + BLOCK_X - 1) / BLOCK_X, (M + BLOCK_Y - 1) / BLOCK_Y);
    printf("launch: a grid of %u x %u blocks of %d x %d threads\n", grid.x, grid.y, BLOCK_X, BLOCK_Y);
    matmul_naive<<<grid, block>>>(M, N, K, dA, dB, dC);
    CHECK(cudaGetLastError());       // could it start? (configuration, code for this GPU)
    CHECK(cudaDeviceSynchronize());  // did it finish? (e.g. an illegal address while running)

    // ---- 6. time: a launch returns at once, so events recorded around it on the GPU time it -----
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < WARMUP; ++i) matmul_naive<<<grid, block>>>(M, N, K, dA, dB, dC);
    CHECK(cudaGetLastError());
    float ms[REPS];
    for (int r = 0; r < REPS; ++r) {
        CHECK(cudaEventRecord(start));
        matmul_naive<<<grid, block>>>(M, N, K, dA, dB, dC);
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));  // wait until the GPU has passed `stop`
        CHECK(cudaEventElapsedTime(&ms[r], start, stop));
    }
    qsort(ms, REPS, sizeof(float), compare_floats);
    double median = REPS % 2 ? ms[REPS / 2] : 0.5 * (ms[REPS / 2 - 1] + ms[REPS / 2]);
    double gflops = 2.0 * M * N * K / (median * 1e6);  // 2 flops (multiply, add) per term
    printf("kernel: median %.4f ms, min %.4f ms of %d launches (after %d warm-up): %.1f GFLOP/s\n", median,
           ms[0], REPS, WARMUP, gflops);

    // ---- 7. copy back (this waits for the GPU) and verify against the CPU -----------------------
    CHECK(cudaMemcpy(C, dC, bytes_C, cudaMemcpyDeviceToHost));
    if (plant_error) C[(size_t)(M - 1) * N + N / 2] += 1.0f;  // the last row is always checked
    // How close is close enough? A float dot product of K terms, summed in any order, with or
    // without fused multiply-adds, is off from the exact value by at most gamma_K * sum |a b|,
    // gamma_K = K u / (1 - K u), u = 2^-24 (the unit roundoff of float). So the bound grows with
    // K and with the size of the terms; a correct kernel never exceeds it, while a wrong index
    // or a missing term is off by whole products in many entries. common/numerics.h uses the
    // same bound, with alpha and beta added. The product of two floats is exact in double.
    const double u = ldexp(1.0, -24), gamma = K * u / (1.0 - K * u);
    // All rows when that costs at most CHECK_MACS multiply-adds, else rows spread evenly over C,
    // the first and the last included.
    long long rows = M, wanted = (long long)(CHECK_MACS / ((double)N * K));
    if (wanted < 2) wanted = 2;
    if (wanted < rows) rows = wanted;
    long long checked = 0, wrong = 0;
    double worst = 0.0;  // the largest error / bound of the entries that pass
    for (long long r = 0; r < rows; ++r) {
        int i = rows == 1 ? 0 : (int)(r * (M - 1) / (rows - 1));
        for (int j = 0; j < N; ++j) ref[j] = mag[j] = 0.0;
        for (int k = 0; k < K; ++k) {  // i-k-j order: B is read along its rows, as it is stored
            double a = A[(size_t)i * K + k];
            for (int j = 0; j < N; ++j) {
                double ab = a * B[(size_t)k * N + j];
                ref[j] += ab;
                mag[j] += fabs(ab);
            }
        }
        for (int j = 0; j < N; ++j, ++checked) {
            double got = C[(size_t)i * N + j], error = fabs(got - ref[j]), bound = gamma * mag[j];
            if (!(error <= bound)) {  // written so that NaN fails: any comparison with NaN is false
                if (wrong++ == 0)
                    printf("first wrong entry: C[%d][%d] = %.9g, expected %.9g (error %.3g, bound %.3g)\n", i,
                           j, got, ref[j], error, bound);
            } else if (error > worst * bound) {
                worst = error / bound;
            }
        }
    }
    printf("check: %lld entries (%lld of %d rows) against the CPU in double precision\n", checked, rows, M);
    if (wrong == 0) printf("PASS: the largest error is %.3g of its bound\n", worst);
    if (wrong > 0) printf("FAIL: %lld of %lld entries wrong\n", wrong, checked);

    // ---- 8. free everything, host and device ----------------------------------------------------
    free(ref);
    free(mag);
    free(A);
    free(B);
    free(C);
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    return wrong ? STATUS_FAIL : STATUS_OK;
}
