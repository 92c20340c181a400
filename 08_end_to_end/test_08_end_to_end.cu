// test_08_end_to_end - the panel split (any M), the timeline checks, the link arithmetic, the
// crossover rule and the options on any machine; on a GPU: pipelined == serial == graph bit for
// bit and right for panels that do not divide M, ordered timelines, graph replay == direct
// launches, managed == explicit, every crossover path against the reference, a dropped panel
// caught, failed allocations reported, and the program's exit statuses and files.
#include <algorithm>
#include <string>
#include <vector>

#include "run_parts.cuh"
#include "testing.cuh"

namespace {

// "" when `panels` cover rows 0..M-1 exactly once, in order, none empty, sizes within one row.
std::string split_problem(const std::vector<e2e::Panel>& panels, int M) {
    if (panels.empty()) return "no panels";
    int next = 0, lo = M, hi = 0;
    for (const e2e::Panel& p : panels) {
        if (p.row0 != next) return "panel at row " + std::to_string(p.row0) + ", expected " + std::to_string(next);
        if (p.rows < 1) return "an empty panel at row " + std::to_string(p.row0);
        lo = std::min(lo, p.rows);
        hi = std::max(hi, p.rows);
        next += p.rows;
    }
    if (next != M) return "panels end at row " + std::to_string(next) + ", M is " + std::to_string(M);
    if (hi - lo > 1) return "panel sizes differ by more than one row";
    return "";
}

e2e::CrossoverRow crow(int size, const char* path, bool gpu, double ms, const char* status = "PASS") {
    e2e::CrossoverRow r;
    r.size = size;
    r.path = path;
    r.gpu = gpu;
    r.total_ms = ms;
    r.status = status;
    return r;
}

e2e::TimelineRow tl(int stream, const char* op, double s, double e) {
    return {stream, op, 0, s, e};
}

}  // namespace

// ---- on any machine ----------------------------------------------------------------------------

TEST_CASE("08: the row panels cover any M, panels dividing it or not", "[08]") {
    // 3300 splits: REQUIRE stops at the first wrong one (with its M and panel count) instead of
    // reporting the same mistake thousands of times.
    for (int M = 1; M <= 300; ++M)
        for (int p : {1, 2, 3, 4, 7, 16, 17, 299, 300, 301, 1000}) {
            const std::vector<e2e::Panel> panels = e2e::split_rows(M, p);
            const std::string problem = split_problem(panels, M);
            INFO("M " << M << ", " << p << " panels: " << problem);
            REQUIRE(problem.empty());
            REQUIRE(int(panels.size()) == std::min(p, M));
        }
    CHECK(e2e::split_rows(0, 4).empty());
    CHECK(e2e::split_rows(10, 0).size() == 1);  // no panel count below one
    // The checker itself catches a split that loses the last row.
    std::vector<e2e::Panel> lossy = e2e::split_rows(10, 3);
    REQUIRE(lossy.size() == 3);
    lossy.back().rows -= 1;
    CHECK_FALSE(split_problem(lossy, 10).empty());
}

TEST_CASE("08: timeline checks: ordered within a stream, free across streams", "[08]") {
    const std::vector<e2e::TimelineRow> good = {tl(0, "h2d B", 0, 1), tl(0, "h2d A", 1, 2), tl(1, "h2d A", 2, 3),
                                                tl(0, "gemm", 2, 5), tl(1, "gemm", 5, 8), tl(0, "d2h C", 5, 6)};
    CHECK(e2e::timeline_problem(good).empty());
    CHECK(e2e::busy_ms(good, "gemm") == 6.0);
    CHECK(e2e::busy_ms(good, "h2d") == 3.0);
    CHECK(e2e::span_ms(good) == 8.0);

    std::vector<e2e::TimelineRow> overlap = good;
    overlap[3].start_ms = 1.5;  // stream 0's GEMM starts before its copy of A ended
    CHECK(e2e::timeline_problem(overlap).find("starts before") != std::string::npos);
    std::vector<e2e::TimelineRow> backwards = good;
    backwards[4].end_ms = 4.0;  // ends before it starts
    CHECK(e2e::timeline_problem(backwards).find("ends before") != std::string::npos);
    // Event timestamps are about half a microsecond apart at best: touching is not overlapping.
    CHECK(e2e::timeline_problem({tl(0, "a", 0, 1.0), tl(0, "b", 0.9995, 2)}).empty());
}

TEST_CASE("08: the link's rate from its generation and width", "[08]") {
    CHECK(e2e::parse_link_speed("32.0 GT/s PCIe") == 32.0);
    CHECK(e2e::parse_link_speed("2.5 GT/s") == 2.5);
    CHECK(e2e::parse_link_speed("Unknown") == 0.0);
    CHECK(e2e::parse_link_speed("") == 0.0);
    CHECK(e2e::pcie_generation(16.0) == 4);
    CHECK(e2e::pcie_generation(7.0) == 0);
    CHECK(std::abs(e2e::pcie_gbs(32.0, 16) - 63.0154) < 1e-3);  // PCIe 5 x16
    CHECK(std::abs(e2e::pcie_gbs(8.0, 16) - 15.7538) < 1e-3);   // PCIe 3 x16
    CHECK(std::abs(e2e::pcie_gbs(2.5, 1) - 0.25) < 1e-9);       // PCIe 1 x1, 8b/10b
    CHECK(e2e::pcie_gbs(7.0, 16) == 0.0);
    e2e::LinkFacts none;
    none.how = "nothing";
    CHECK(none.describe().find("unknown") != std::string::npos);
}

TEST_CASE("08: the crossover is where the GPU wins for good", "[08]") {
    const std::vector<int> sizes = {32, 64, 128, 256, 512};
    CHECK(e2e::crossover_size(sizes, {5, 5, 5, 5, 5}, {1, 2, 4, 8, 16}) == 256);
    CHECK(e2e::crossover_size(sizes, {1, 5, 1, 1, 1}, {2, 2, 2, 2, 2}) == 128);  // a lucky small size does not count
    CHECK(e2e::crossover_size(sizes, {9, 9, 9, 9, 9}, {1, 1, 1, 1, 1}) == 0);
    CHECK(e2e::crossover_size(sizes, {1, 1, 1, 1, 1}, {2, 2, 2, 2, 2}) == 32);
    CHECK(e2e::crossover_size(sizes, {5, 5, 1, 1, 1}, {2, 2, 2, -1, 2}) == 128);  // a size the CPU skipped
    CHECK(e2e::reps_within(100, 10, 1500) == 10);
    CHECK(e2e::reps_within(500, 10, 1500) == 3);
    CHECK(e2e::reps_within(5000, 10, 1500) == 1);

    const std::vector<e2e::CrossoverRow> rows = {
        crow(64, "gpu_cublas_pinned", true, 2.0),
        crow(64, "gpu_cublas_pageable", true, 0.5),  // pageable is shown, not counted
        crow(64, "cpu_blocked", false, 1.0),
        crow(64, "cpu_fast_but_wrong", false, 0.1, "FAIL"),
        crow(128, "gpu_best_pinned", true, 1.0),
    };
    const e2e::CrossoverSummary s = e2e::summarize_crossover(rows);
    REQUIRE(s.sizes == std::vector<int>({64, 128}));
    CHECK(s.gpu_ms[0] == 2.0);
    CHECK(s.cpu_ms[0] == 1.0);
    CHECK(s.cpu_path[0] == "cpu_blocked");
    CHECK(s.cpu_ms[1] == -1.0);
}

TEST_CASE("08: the small products checked against the reference include the first and last", "[08]") {
    for (int count : {1, 2, 19, 20, 21, 2000}) {
        const std::vector<int> p = e2e::sampled_products(count);
        CHECK(p.front() == 0);
        CHECK(p.back() == count - 1);
        CHECK(std::is_sorted(p.begin(), p.end()));
        CHECK(p.size() <= 22);
    }
}

TEST_CASE("08: the chapter's options are checked before any device work", "[08]") {
    for (const char* part : {"streams", "all", "transfers,graphs"}) {
        e2e::Settings s;
        s.part = part;
        std::string error;
        CHECK(e2e::check_settings(s, error));
    }
    struct Bad {
        const char* field;
        const char* value;
    };
    for (Bad b : {Bad{"part", "bogus"}, Bad{"panels", "0"}, Bad{"streams", "1"}, Bad{"streams", "9"},
                  Bad{"batch", "-3"}, Bad{"big", "0"}, Bad{"small", "4x"}}) {
        e2e::Settings s;
        std::string* f = std::string(b.field) == "part"     ? &s.part
                         : std::string(b.field) == "panels" ? &s.panels
                         : std::string(b.field) == "streams" ? &s.streams
                         : std::string(b.field) == "batch"   ? &s.batch
                         : std::string(b.field) == "big"     ? &s.big
                                                             : &s.small;
        *f = b.value;
        std::string error;
        INFO("--" << b.field << " " << b.value);
        CHECK_FALSE(e2e::check_settings(s, error));
        CHECK_FALSE(error.empty());
    }
}

TEST_CASE("08: bad input exits 2, no GPU exits 3, --help exits 0", "[08]") {
    wb::test::check_program_exit_statuses("08_end_to_end");
    wb::test::TempDir dir;
    for (const char* args : {"--part bogus", "--streams 1", "--panels 0", "--big 0", "--batch x",
                             "--out /proc/no_such_folder/08"}) {
        const wb::test::RunResult r = wb::test::run_program("08_end_to_end", args, dir);
        INFO(args << " -> status " << r.status << ", stderr: " << r.err);
        CHECK(r.status == wb::kExitBadInput);
        CHECK(r.err.rfind("08_end_to_end: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
    const wb::test::RunResult none = wb::test::run_program("08_end_to_end", "--part streams", dir, "CUDA_VISIBLE_DEVICES=-1");
    CHECK(none.status == wb::kExitNoDevice);
    const wb::test::RunResult help = wb::test::run_program("08_end_to_end", "--help", dir);
    CHECK(help.status == wb::kExitOk);
    CHECK(help.out.find("--part") != std::string::npos);
}

// ---- on the GPU ----------------------------------------------------------------------------------

TEST_CASE("08: pipelined and graph results equal the serial ones bit for bit, any M", "[08][gpu]") {
    WB_REQUIRE_GPU();
    struct Case {
        wb::Shape s;
        int panels, lanes;
    };
    for (Case c : {Case{{1000, 1013, 777}, 7, 2}, Case{{301, 67, 45}, 7, 3}, Case{{5, 3, 2}, 16, 2},
                   Case{{1, 9, 4}, 4, 2}, Case{{256, 128, 64}, 4, 4}}) {
        const e2e::StreamsResult r = e2e::measure_streams(c.s, c.panels, c.lanes, 1, 11);
        INFO(wb::to_string(c.s) << ", " << c.panels << " panels, " << c.lanes << " streams: " << r.check.describe());
        CHECK(r.check.pass);
        CHECK(r.pipelined_equals_serial);
        CHECK(r.graph_equals_serial);
        CHECK(r.panels == std::min(c.panels, c.s.m));
        // The timelines: ordered within each stream; every panel copied in, multiplied, copied out.
        CHECK(r.timeline_problem.empty());
        CHECK(r.serial.size() == size_t(1 + 3 * r.panels));
        CHECK(r.pipelined.size() == size_t(1 + 3 * r.panels));
        int streams_used = 0;
        for (const e2e::TimelineRow& row : r.pipelined) streams_used = std::max(streams_used, row.stream + 1);
        CHECK(streams_used == std::min(c.lanes, r.panels));
        for (const e2e::TimelineRow& row : r.serial) CHECK(row.stream == 0);
    }
}

TEST_CASE("08: a pipeline that drops a panel is caught by the reference check", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const wb::Shape s{129, 65, 97};
    e2e::Matrices host(s, e2e::Memory::pinned, 5, true);
    e2e::Matrices dev(s, e2e::Memory::device, 5, false);
    e2e::PanelPipeline pipe(2);
    std::vector<e2e::Panel> panels = e2e::split_rows(s.m, 5);
    e2e::poison_host(host.C.get(), host.C.size());
    pipe.issue(host, dev, panels, 2, nullptr);
    pipe.sync();
    CHECK(e2e::verify_product(s, host.A.get(), host.B.get(), host.C.get(), 5).pass);
    REQUIRE(panels.size() == 5);
    panels.pop_back();  // the planted bug: the last rows of C are never computed
    e2e::poison_host(host.C.get(), host.C.size());
    e2e::poison_device(dev.C.get(), dev.C.size(), pipe.lane(0).stream());
    pipe.issue(host, dev, panels, 2, nullptr);
    pipe.sync();
    CHECK_FALSE(e2e::verify_product(s, host.A.get(), host.B.get(), host.C.get(), 5).pass);
}

TEST_CASE("08: graph replay equals direct launches bit for bit; batched is right", "[08][gpu]") {
    WB_REQUIRE_GPU();
    for (wb::Shape s : {wb::Shape{64, 64, 64}, wb::Shape{33, 47, 65}, wb::Shape{1, 1, 1}}) {
        const e2e::SmallResult r = e2e::measure_small_gemms(s, 23, 1, 2, 3);
        INFO(wb::to_string(s));
        REQUIRE(r.rows.size() == 3);
        for (const e2e::SmallRow& row : r.rows) {
            INFO(row.path);
            CHECK(row.status == "PASS");
            CHECK(row.us_per_gemm > 0);
        }
        CHECK(r.rows[1].path == "graph");
        CHECK(r.rows[1].same_as_loop);
    }
}

TEST_CASE("08: managed memory gives the explicit copies' result, bit for bit", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const e2e::ManagedResult r = e2e::measure_managed({301, 67, 45}, 9);
    REQUIRE(r.rows.size() == 5);
    CHECK(r.rows[0].status == "PASS");
    for (const e2e::ManagedRow& m : r.rows) {
        INFO(m.scenario << ": " << m.status);
        if (m.status.rfind("skipped", 0) == 0) continue;
        CHECK(m.status == "PASS");
        CHECK(m.same_as_explicit);
        CHECK(m.first_gemm_ms > 0);
    }
}

TEST_CASE("08: every crossover path is right; the transfers are timed", "[08][gpu]") {
    WB_REQUIRE_GPU();
    e2e::CrossoverSettings set;
    set.shapes = {{1, 1, 1}, {33, 33, 33}, {64, 64, 64}};
    set.gpu = wb::table(e2e::kSgemmVariants);
    set.max_reps = 2;
    std::vector<e2e::CrossoverRow> rows = e2e::measure_crossover(set);
    CHECK(rows.size() >= 3 * 5);
    // Any shape, with beta != 0: C0 is copied in as input, and every run starts from it.
    set.shapes = {{67, 45, 33}, {130, 97, 75}};
    set.alpha = -1.5f;
    set.beta = 0.5f;
    const std::vector<e2e::CrossoverRow> more = e2e::measure_crossover(set);
    rows.insert(rows.end(), more.begin(), more.end());
    for (const e2e::CrossoverRow& r : rows) {
        INFO(wb::to_string(r.shape) << " " << r.path << ": " << r.status);
        if (r.status.rfind("skipped", 0) == 0) continue;
        CHECK(r.status == "PASS");
        CHECK(r.total_ms > 0);
        if (r.gpu) CHECK(r.kernel_ms > 0);
    }
    const std::vector<e2e::TransferRow> t = e2e::measure_transfers({4096, size_t(1) << 20}, 1, 2);
    REQUIRE(t.size() == 8);
    for (const e2e::TransferRow& x : t) CHECK(x.gbs() > 0);
}

TEST_CASE("08: failed allocations are reported, and the program says so with exit status 2", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const size_t absurd = size_t(1) << 50;  // 4 PiB of floats
    for (e2e::Memory kind : {e2e::Memory::device, e2e::Memory::pinned}) {
        try {
            e2e::Buffer<float> b(absurd, kind);
            FAIL("an allocation of 4 PiB succeeded");
        } catch (const e2e::AllocError& e) {
            CHECK(std::string(e.what()).find(e2e::to_string(kind)) != std::string::npos);
        }
    }
    CHECK(cudaGetLastError() == cudaSuccess);  // nothing sticky left behind
    wb::test::TempDir dir;
    const wb::test::RunResult r = wb::test::run_program("08_end_to_end", "--part graphs --batch 100000000", dir);
    INFO("stderr: " << r.err);
    CHECK(r.status == wb::kExitBadInput);
    CHECK(r.err.find("device memory") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("08: the program runs every part on small shapes and writes its files", "[08][gpu]") {
    WB_REQUIRE_GPU();
    wb::test::TempDir dir;
    const std::string out = dir / "out";
    const wb::test::RunResult r = wb::test::run_program(
        "08_end_to_end",
        "--part all --sizes 32,67 --big 301x67x45 --panels 7 --small 33x47x65 --batch 9 --warmup 1 --reps 2 --out " + out,
        dir);
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.status == wb::kExitOk);
    for (const char* f : {"run.txt", "transfers.csv", "crossover.csv", "timeline_serial.csv", "timeline_pipelined.csv",
                          "streams.csv", "graphs.csv", "managed.csv"})
        CHECK(!wb::test::read_file(out + "/" + f).empty());
}
