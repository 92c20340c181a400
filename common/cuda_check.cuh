// cuda_check.cuh - every CUDA and cuBLAS call is checked, and so is every kernel launch.
//
//   WB_CUDA_CHECK(cudaMalloc(&p, bytes));
//   my_kernel<<<grid, block, 0, stream>>>(...);
//   WB_LAUNCH_CHECK();   // catches a bad launch configuration right here, with file and line
//
// A failure throws wb::CudaError, whose message names the call, the file and the line. The
// chapter harness catches it and turns it into a clear message and an exit status; a Catch2 test
// reports it as a failed test instead of crashing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace wb {

class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
    cudaError_t code() const { return code_; }

private:
    cudaError_t code_;
};

inline void cuda_check(cudaError_t err, const char* what, const char* file, int line) {
    if (err == cudaSuccess) return;
    throw CudaError(err, std::string(file) + ":" + std::to_string(line) + ": " + what +
                             " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                             ")");
}

inline void cublas_check(cublasStatus_t st, const char* what, const char* file, int line) {
    if (st == CUBLAS_STATUS_SUCCESS) return;
    throw CudaError(cudaErrorUnknown, std::string(file) + ":" + std::to_string(line) + ": " +
                                          what + " failed: " + cublasGetStatusName(st) + " (" +
                                          cublasGetStatusString(st) + ")");
}

}  // namespace wb

#define WB_CUDA_CHECK(call) ::wb::cuda_check((call), #call, __FILE__, __LINE__)
#define WB_CUBLAS_CHECK(call) ::wb::cublas_check((call), #call, __FILE__, __LINE__)
// Launch errors (bad grid, too much shared memory, no kernel image) show up in cudaGetLastError;
// errors inside the kernel show up at the next synchronizing call.
#define WB_LAUNCH_CHECK() ::wb::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
