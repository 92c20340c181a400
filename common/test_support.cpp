// test_support.cpp - the file and process helpers of testing.cuh, compiled by the host compiler.
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catch_compat.hpp"
#include "options.h"
#include "test_support.h"

namespace wb {
namespace test {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void write_file(const std::string& path, const std::string& text, unsigned mode) {
    std::ofstream(path) << text;
    ::chmod(path.c_str(), static_cast<mode_t>(mode));
}

void make_dirs(const std::string& path) { fs::create_directories(path); }

TempDir::TempDir() {
    std::string pattern = (fs::temp_directory_path() / "wbtest-XXXXXX").string();
    REQUIRE(::mkdtemp(&pattern[0]) != nullptr);
    path = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
}

std::string program_path(const std::string& program) {
    return (fs::read_symlink("/proc/self/exe").parent_path() / program).string();
}

RunResult run_program(const std::string& program, const std::string& args, const TempDir& dir,
                      const std::string& env_prefix) {
    const std::string out = dir.path + "/stdout.txt", err = dir.path + "/stderr.txt";
    const std::string cmd = env_prefix + " '" + program_path(program) + "' " + args + " >'" + out + "' 2>'" + err + "'";
    const int raw = std::system(cmd.c_str());
    RunResult r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

void check_program_exit_statuses(const std::string& program) {
    REQUIRE(fs::exists(program_path(program)));
    TempDir dir;
    for (const char* args : {"--bogus", "--size 0", "--size abc", "--sizes 64,,8", "--m 5 --n 5",
                             "--alpha x", "--reps 0", "--variant no_such_variant", "--csv"}) {
        const RunResult r = run_program(program, args, dir);
        INFO(program << " " << args << " -> status " << r.status << ", stderr: " << r.err);
        CHECK(r.status == kExitBadInput);
        CHECK(r.err.rfind(program + ": error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());
    }
    const RunResult none = run_program(program, "--size 64", dir, "CUDA_VISIBLE_DEVICES=-1");
    INFO("no GPU: status " << none.status << ", stderr: " << none.err);
    CHECK(none.status == kExitNoDevice);
    CHECK(none.err.find("no usable CUDA device") != std::string::npos);
    const RunResult help = run_program(program, "--help", dir);
    CHECK(help.status == kExitOk);
    CHECK(help.out.find("--variant") != std::string::npos);
}

}  // namespace test
}  // namespace wb
