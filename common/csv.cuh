// csv.cuh - one CSV row per measurement (the schema every chapter, make report and the grader read).
#pragma once

#include <cstring>
#include <ctime>
#include <fstream>
#include <iomanip>

#include "gpu.cuh"

namespace wb {

constexpr const char* kCsvHeader =
    "chapter,variant,dtype,M,N,K,alpha,beta,ms_median,ms_min,gflops,cublas_gflops,"
    "pct_cublas,pct_peak,rel_err,status,gpu,cc,driver,runtime,git,timestamp,student,gflops_per_j";

// The commit the program was built from, read when it runs: $WB_GIT_COMMIT, else git's answer.
inline std::string git_commit() {
    if (const char* c = std::getenv("WB_GIT_COMMIT")) return c;
    char line[64] = "";
    if (std::FILE* p = popen("git describe --always --dirty --abbrev=12 2>/dev/null", "r"))
        (void)!std::fgets(line, sizeof line, p), pclose(p);
    return line[0] ? std::string(line, std::strcspn(line, "\n")) : "unknown";
}

// Appends `fields` (chapter ... status, in the header's order) and the run's facts; a new file gets the header.
inline void append_csv(const std::string& path, const std::string& fields, const Gpu& g) {
    const bool empty = std::ifstream(path).peek() == std::ifstream::traits_type::eof();
    std::ofstream f(path, std::ios::app);
    const std::time_t now = std::time(nullptr);
    f << (empty ? std::string(kCsvHeader) + "\n" : "") << fields << "," << g.name << "," << g.major << "." << g.minor
      << "," << cuda_version(g.driver) << "," << cuda_version(g.runtime) << "," << git_commit() << ","
      << std::put_time(std::gmtime(&now), "%Y-%m-%dT%H:%M:%SZ") << ","
      << (std::getenv("STUDENT_ID") ? std::getenv("STUDENT_ID") : "") << ",\n";
}

}  // namespace wb
