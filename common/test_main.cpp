// test_main.cpp - the main of every test binary, for Catch2 v2 and v3.
//
// Besides running Catch2 it counts test cases as passed, failed or skipped (GPU tests on a
// machine without a GPU; a few others, e.g. on a GPU too old for them) and prints one line per
// binary; `make test` adds these up into its closing line "N passed, N failed, N skipped". With
// WB_TEST_SUMMARY=FILE the counts are also appended to FILE as "NAME P F S G", G being the skipped
// test cases that lacked a GPU.
#if defined(__has_include)
#if __has_include(<catch2/catch_test_macros.hpp>) && !defined(WB_CATCH2_V2)
#define WB_CATCH2_V3 1
#endif
#endif

#if defined(WB_CATCH2_V3)
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_case_info.hpp>
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
using WbListenerBase = Catch::EventListenerBase;
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
using WbListenerBase = Catch::TestEventListenerBase;
#endif

#include <cstdio>
#include <cstdlib>
#include <string>

namespace wb {
namespace test {

namespace {
struct Counts {
    int passed = 0, failed = 0, skipped = 0, skipped_no_gpu = 0;
    bool current_skipped = false, current_no_gpu = false;
} g_counts;
std::string g_binary = "tests";
}  // namespace

void mark_skipped() { g_counts.current_skipped = true; }
void mark_skipped_no_gpu() { g_counts.current_skipped = g_counts.current_no_gpu = true; }

bool gpu_required() {
    const char* v = std::getenv("REQUIRE_GPU");
    return v && *v && std::string(v) != "0";
}

}  // namespace test
}  // namespace wb

class WbCountingListener : public WbListenerBase {
public:
    using WbListenerBase::WbListenerBase;
    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        WbListenerBase::testCaseStarting(info);
        wb::test::g_counts.current_skipped = wb::test::g_counts.current_no_gpu = false;
    }
    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        auto& c = wb::test::g_counts;
        if (stats.totals.assertions.failed > 0)
            ++c.failed;
        else if (c.current_skipped)
            ++c.skipped, c.skipped_no_gpu += c.current_no_gpu;
        else
            ++c.passed;
        WbListenerBase::testCaseEnded(stats);
    }
};
CATCH_REGISTER_LISTENER(WbCountingListener)

int main(int argc, char** argv) {
    std::string name = argc > 0 ? argv[0] : "tests";
    wb::test::g_binary = name.substr(name.find_last_of('/') + 1);
    int rc = Catch::Session().run(argc, argv);
    const auto& c = wb::test::g_counts;
    std::printf("[%s] test cases: %d passed, %d failed, %d skipped\n", wb::test::g_binary.c_str(),
                c.passed, c.failed, c.skipped);
    if (const char* path = std::getenv("WB_TEST_SUMMARY")) {
        if (FILE* f = std::fopen(path, "a")) {
            std::fprintf(f, "%s %d %d %d %d\n", wb::test::g_binary.c_str(), c.passed, c.failed, c.skipped,
                         c.skipped_no_gpu);
            std::fclose(f);
        }
    }
    // Catch2 v3 fails a run in which every test was skipped; here that is the expected outcome
    // on a machine without a GPU, so the counts decide.
    if (rc != 0 && c.failed == 0 && c.passed + c.skipped > 0 && c.skipped > 0) rc = 0;
    return rc;
}
