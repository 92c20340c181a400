// test_support.h - file and process helpers for the tests (host-only declarations; the
// definitions are in test_support.cpp, compiled by the host compiler, so nvcc never has to
// parse <filesystem> or the POSIX process headers).
#pragma once

#include <string>

namespace wb {
namespace test {

std::string read_file(const std::string& path);
// Writes `text` to `path` and sets its permission bits (e.g. 0755).
void write_file(const std::string& path, const std::string& text, unsigned mode = 0644);
void make_dirs(const std::string& path);  // like mkdir -p

// A fresh folder under /tmp, removed with everything in it by the destructor.
struct TempDir {
    std::string path;
    TempDir();
    ~TempDir();
    std::string operator/(const std::string& name) const { return path + "/" + name; }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

// A chapter's program is built next to its test binary (chapter.mk builds it first).
std::string program_path(const std::string& program);

struct RunResult {
    int status = -1;
    std::string out, err;
};
// Runs `program` with `args`, after an environment prefix such as "CUDA_VISIBLE_DEVICES=-1";
// stdout and stderr are captured through files in `dir`.
RunResult run_program(const std::string& program, const std::string& args, const TempDir& dir,
                      const std::string& env_prefix = "");

// The exit statuses of a GEMM chapter's program (docs/CONTRACT.md, "The program's options"): bad
// input gets one line on stderr and status 2 before any device work; no usable GPU gets a clear
// line and status 3 (CUDA_VISIBLE_DEVICES=-1 hides every GPU, so this runs on any machine); --help
// succeeds.
void check_program_exit_statuses(const std::string& program);

}  // namespace test
}  // namespace wb
