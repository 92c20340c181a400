// test_08_end_to_end - the panel split (any M), the timeline checks, the link arithmetic, the
// crossover rule, the options, the one table writer and the CUDA handles' ownership on any machine;
// on a GPU: the handles and capture_graph (a failed capture leaves the stream usable), pipelined
// == serial == graph bit for bit and right for panels that do not divide M, ordered timelines,
// graph replay == direct launches, batched right, managed == explicit, every crossover path against the reference, a dropped panel
// caught, failed allocations reported, and the program's exit statuses and files.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "program.cuh"
#include "testing.cuh"

namespace {

// "" when `panels` cover rows 0..M-1 exactly once, in order, none empty, sizes within one row.
std::string split_problem(const std::vector<ch08::Panel>& panels, int M) {
    if (panels.empty()) return "no panels";
    int next = 0, lo = M, hi = 0;
    for (const ch08::Panel& p : panels) {
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

ch08::CrossoverRow crow(int size, const char* path, bool gpu, double ms, const char* status = "PASS") {
    ch08::CrossoverRow r;
    r.size = size;
    r.path = path;
    r.gpu = gpu;
    r.total_ms = ms;
    r.status = status;
    return r;
}

ch08::TimelineRow tl(int stream, const char* op, double s, double e) {
    return {stream, op, 0, s, e};
}

}  // namespace

// ---- on any machine ----------------------------------------------------------------------------

TEST_CASE("08: the row panels cover any M, panels dividing it or not", "[08]") {
    // 3300 splits: REQUIRE stops at the first wrong one (with its M and panel count) instead of
    // reporting the same mistake thousands of times.
    for (int M = 1; M <= 300; ++M)
        for (int p : {1, 2, 3, 4, 7, 16, 17, 299, 300, 301, 1000}) {
            const std::vector<ch08::Panel> panels = ch08::split_rows(M, p);
            const std::string problem = split_problem(panels, M);
            INFO("M " << M << ", " << p << " panels: " << problem);
            REQUIRE(problem.empty());
            REQUIRE(int(panels.size()) == std::min(p, M));
        }
    CHECK(ch08::split_rows(0, 4).empty());
    CHECK(ch08::split_rows(10, 0).size() == 1);  // no panel count below one
    // The checker itself catches a split that loses the last row.
    std::vector<ch08::Panel> lossy = ch08::split_rows(10, 3);
    REQUIRE(lossy.size() == 3);
    lossy.back().rows -= 1;
    CHECK_FALSE(split_problem(lossy, 10).empty());
}

TEST_CASE("08: timeline checks: ordered within a stream, free across streams", "[08]") {
    const std::vector<ch08::TimelineRow> good = {tl(0, "h2d B", 0, 1), tl(0, "h2d A", 1, 2), tl(1, "h2d A", 2, 3),
                                                tl(0, "gemm", 2, 5), tl(1, "gemm", 5, 8), tl(0, "d2h C", 5, 6)};
    CHECK(ch08::timeline_problem(good).empty());
    CHECK(ch08::busy_ms(good, "gemm") == 6.0);
    CHECK(ch08::busy_ms(good, "h2d") == 3.0);
    CHECK(ch08::span_ms(good) == 8.0);

    std::vector<ch08::TimelineRow> overlap = good;
    overlap[3].start_ms = 1.5;  // stream 0's GEMM starts before its copy of A ended
    CHECK(ch08::timeline_problem(overlap).find("starts before") != std::string::npos);
    std::vector<ch08::TimelineRow> backwards = good;
    backwards[4].end_ms = 4.0;  // ends before it starts
    CHECK(ch08::timeline_problem(backwards).find("ends before") != std::string::npos);
    // Event timestamps are about half a microsecond apart at best: touching is not overlapping.
    CHECK(ch08::timeline_problem({tl(0, "a", 0, 1.0), tl(0, "b", 0.9995, 2)}).empty());
}

TEST_CASE("08: the link's rate from its generation and width", "[08]") {
    CHECK(ch08::parse_link_speed("32.0 GT/s PCIe") == 32.0);
    CHECK(ch08::parse_link_speed("2.5 GT/s") == 2.5);
    CHECK(ch08::parse_link_speed("Unknown") == 0.0);
    CHECK(ch08::parse_link_speed("") == 0.0);
    CHECK(ch08::pcie_generation(16.0) == 4);
    CHECK(ch08::pcie_generation(7.0) == 0);
    CHECK(std::abs(ch08::pcie_gbs(32.0, 16) - 63.0154) < 1e-3);  // PCIe 5 x16
    CHECK(std::abs(ch08::pcie_gbs(8.0, 16) - 15.7538) < 1e-3);   // PCIe 3 x16
    CHECK(std::abs(ch08::pcie_gbs(2.5, 1) - 0.25) < 1e-9);       // PCIe 1 x1, 8b/10b
    CHECK(ch08::pcie_gbs(7.0, 16) == 0.0);
    ch08::LinkFacts none;
    none.how = "nothing";
    CHECK(none.describe().find("unknown") != std::string::npos);
}

TEST_CASE("08: the crossover is where the GPU wins for good", "[08]") {
    const std::vector<int> sizes = {32, 64, 128, 256, 512};
    CHECK(ch08::crossover_size(sizes, {5, 5, 5, 5, 5}, {1, 2, 4, 8, 16}) == 256);
    CHECK(ch08::crossover_size(sizes, {1, 5, 1, 1, 1}, {2, 2, 2, 2, 2}) == 128);  // a lucky small size does not count
    CHECK(ch08::crossover_size(sizes, {9, 9, 9, 9, 9}, {1, 1, 1, 1, 1}) == 0);
    CHECK(ch08::crossover_size(sizes, {1, 1, 1, 1, 1}, {2, 2, 2, 2, 2}) == 32);
    CHECK(ch08::crossover_size(sizes, {5, 5, 1, 1, 1}, {2, 2, 2, -1, 2}) == 128);  // a size the CPU skipped
    CHECK(ch08::reps_within(100, 10, 1500) == 10);
    CHECK(ch08::reps_within(500, 10, 1500) == 3);
    CHECK(ch08::reps_within(5000, 10, 1500) == 1);

    const std::vector<ch08::CrossoverRow> rows = {
        crow(64, "gpu_cublas_pinned", true, 2.0),
        crow(64, "gpu_cublas_pageable", true, 0.5),  // pageable is shown, not counted
        crow(64, "cpu_blocked", false, 1.0),
        crow(64, "cpu_fast_but_wrong", false, 0.1, "FAIL"),
        crow(128, "gpu_best_pinned", true, 1.0),
    };
    const ch08::CrossoverSummary s = ch08::summarize_crossover(rows);
    REQUIRE(s.sizes == std::vector<int>({64, 128}));
    CHECK(s.gpu_ms[0] == 2.0);
    CHECK(s.cpu_ms[0] == 1.0);
    CHECK(s.cpu_path[0] == "cpu_blocked");
    CHECK(s.cpu_ms[1] == -1.0);
}

TEST_CASE("08: the small products checked against the reference include the first and last", "[08]") {
    for (int count : {1, 2, 19, 20, 21, 2000}) {
        const std::vector<int> p = ch08::sampled_products(count);
        CHECK(p.front() == 0);
        CHECK(p.back() == count - 1);
        CHECK(std::is_sorted(p.begin(), p.end()));
        CHECK(p.size() <= 22);
    }
}

TEST_CASE("08: the chapter's options are checked before any device work", "[08]") {
    for (const char* part : {"streams", "all", "transfers,graphs", "batched"}) {
        ch08::Settings s;
        s.part = part;
        std::string error;
        CHECK(ch08::check_settings(s, error));
    }
    {  // "all" is the six parts, numbered in the order they run
        ch08::Settings s;
        std::string error;
        REQUIRE(ch08::check_settings(s, error));
        CHECK(s.parts.size() == 6);
        CHECK(ch08::kPartCount == 6);
        CHECK(std::string(ch08::kParts[4]) == "batched");
    }
    struct Bad {
        const char* field;
        const char* value;
    };
    for (Bad b : {Bad{"part", "bogus"}, Bad{"panels", "0"}, Bad{"streams", "1"}, Bad{"streams", "9"},
                  Bad{"batch", "-3"}, Bad{"big", "0"}, Bad{"small", "4x"}}) {
        ch08::Settings s;
        std::string* f = std::string(b.field) == "part"     ? &s.part
                         : std::string(b.field) == "panels" ? &s.panels
                         : std::string(b.field) == "streams" ? &s.streams
                         : std::string(b.field) == "batch"   ? &s.batch
                         : std::string(b.field) == "big"     ? &s.big
                                                             : &s.small;
        *f = b.value;
        std::string error;
        INFO("--" << b.field << " " << b.value);
        CHECK_FALSE(ch08::check_settings(s, error));
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


TEST_CASE("08: the parts are numbered 1-6 and keep the CSV columns tools/wb/e2e.py reads", "[08]") {
    auto columns = [](const ch08::Table& table) {
        std::string joined;
        for (const std::string& c : table.header) joined += (joined.empty() ? "" : ",") + c;
        return table.csv + ": " + joined;
    };
    const ch08::PartReport reports[] = {
        ch08::report(std::vector<ch08::TransferRow>{}, ch08::LinkFacts{}),
        ch08::report(std::vector<ch08::CrossoverRow>{}),
        ch08::report(ch08::StreamsResult{}),
        ch08::report(ch08::GraphsResult{}),
        ch08::report(ch08::SmallRow{}, wb::Shape{1, 1, 1}, 1),
        ch08::report(ch08::ManagedResult{}),
    };
    for (int i = 0; i < ch08::kPartCount; ++i) {
        INFO(ch08::kParts[i]);
        CHECK(reports[i].part == i + 1);
        CHECK(reports[i].title.rfind(i == 5 ? "unified memory" : ch08::kParts[i], 0) == 0);
    }
    CHECK(columns(reports[0].tables.at(0)) == "transfers.csv: direction,host,bytes,ms_median,ms_min,gbs,pct_link");
    CHECK(columns(reports[1].tables.at(0)) ==
          "crossover.csv: size,shape,path,kind,total_ms,min_ms,h2d_ms,kernel_ms,d2h_ms,overhead_ms,reps,status,rel_err");
    REQUIRE(reports[2].tables.size() == 3);
    CHECK(columns(reports[2].tables[0]) == "streams.csv: mode,streams,panels,ms,h2d_ms,gemm_ms,d2h_ms,copy_ms,"
                                           "goal_bound_ms,engine_bound_ms,ratio_goal,status,same_as_serial");
    CHECK(columns(reports[2].tables[1]) == "timeline_serial.csv: stream,op,panel,start_ms,end_ms");
    CHECK(columns(reports[2].tables[2]) == "timeline_pipelined.csv: stream,op,panel,start_ms,end_ms");
    for (int i : {3, 4})
        CHECK(columns(reports[i].tables.at(0)) ==
              "graphs.csv: path,shape,count,us_per_gemm,gpu_us_per_gemm,status,same_as_loop");
    CHECK(columns(reports[5].tables.at(0)) == "managed.csv: scenario,setup_ms,first_gemm_ms,second_gemm_ms,c_to_cpu_ms,"
                                              "cpu_reads_a_ms,status,same_as_explicit");
}

TEST_CASE("08: one writer: aligned tables, CSV files started once and appended to after", "[08]") {
    wb::test::TempDir dir;
    ch08::Writer out(dir.path);
    // Parts 4 and 5 both fill graphs.csv: one header, the loop and the graph, then the batched call.
    ch08::GraphsResult g;
    g.shape = {4, 5, 6};
    g.count = 3;
    g.loop = {"loop", 9.0, 8.5, "PASS", true};
    g.graph = {"graph", 3.0, 2.5, "PASS", true};
    const ch08::PartReport four = ch08::report(g);
    CHECK(four.part == 4);
    CHECK(four.ok);
    CHECK(four.after.at(0).find("3.00x cheaper") != std::string::npos);
    out.emit(four);
    out.emit(ch08::report(ch08::SmallRow{"strided_batched", 0.5, 0.5, "PASS", true}, g.shape, g.count));
    CHECK(wb::test::read_file(dir / "graphs.csv") ==
          "path,shape,count,us_per_gemm,gpu_us_per_gemm,status,same_as_loop\n"
          "loop,4x5x6,3,9.0000,8.5000,PASS,yes\n"
          "graph,4x5x6,3,3.0000,2.5000,PASS,yes\n"
          "strided_batched,4x5x6,3,0.5000,0.5000,PASS,yes\n");
    // A graph whose bits differ from the loop's fails the part.
    g.graph.same_as_loop = false;
    CHECK_FALSE(ch08::report(g).ok);
    // A new writer starts the file again.
    ch08::Writer again(dir.path);
    again.emit(ch08::report(g));
    CHECK(wb::test::read_file(dir / "graphs.csv").find("strided_batched") == std::string::npos);
}

TEST_CASE("08: the CUDA handles are owned once: move-only, empty after a move", "[08][handles]") {
    // Checked by the compiler (static_assert): one owner, moves that cannot throw.
    static_assert(!std::is_copy_constructible<wb::Event>::value, "an event has one owner");
    static_assert(!std::is_copy_assignable<wb::Stream>::value, "a stream has one owner");
    static_assert(std::is_nothrow_move_constructible<wb::Event>::value, "a vector of events moves them");
    static_assert(std::is_nothrow_move_assignable<wb::GraphExec>::value, "moving a graph cannot throw");
    // A temporary does not hand out its raw handle (it would be destroyed at once).
    static_assert(!std::is_convertible<wb::Event&&, cudaEvent_t>::value, "no raw handle from a temporary");
    static_assert(std::is_convertible<const wb::Event&, cudaEvent_t>::value, "an owner converts to its handle");
    wb::GraphExec none;  // default-made: holds nothing, destroys nothing
    CHECK(none.get() == nullptr);
    wb::GraphExec moved(std::move(none));
    CHECK(moved.get() == nullptr);
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
        const ch08::StreamsResult r = ch08::measure_streams(c.s, c.panels, c.lanes, 1, 11);
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
        for (const ch08::TimelineRow& row : r.pipelined) streams_used = std::max(streams_used, row.stream + 1);
        CHECK(streams_used == std::min(c.lanes, r.panels));
        for (const ch08::TimelineRow& row : r.serial) CHECK(row.stream == 0);
    }
}

TEST_CASE("08: a pipeline that drops a panel is caught by the reference check", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const wb::Shape s{129, 65, 97};
    ch08::Matrices host(s, ch08::Memory::pinned, 5, true);
    ch08::Matrices dev(s, ch08::Memory::device, 5, false);
    ch08::PanelPipeline pipe(2);
    std::vector<ch08::Panel> panels = ch08::split_rows(s.m, 5);
    ch08::poison_host(host.C.get(), host.C.size());
    pipe.issue(host, dev, panels, 2, nullptr);
    pipe.sync();
    CHECK(ch08::verify_product(s, host.A.get(), host.B.get(), host.C.get(), 5).pass);
    REQUIRE(panels.size() == 5);
    panels.pop_back();  // the planted bug: the last rows of C are never computed
    ch08::poison_host(host.C.get(), host.C.size());
    ch08::poison_device(dev.C.get(), dev.C.size(), pipe.lane(0).stream());
    pipe.issue(host, dev, panels, 2, nullptr);
    pipe.sync();
    CHECK_FALSE(ch08::verify_product(s, host.A.get(), host.B.get(), host.C.get(), 5).pass);
}

TEST_CASE("08: graph replay equals direct launches bit for bit; batched is right", "[08][gpu]") {
    WB_REQUIRE_GPU();
    for (wb::Shape s : {wb::Shape{64, 64, 64}, wb::Shape{33, 47, 65}, wb::Shape{1, 1, 1}}) {
        const ch08::GraphsResult g = ch08::measure_graphs(s, 23, 1, 2, 3);
        const ch08::SmallRow batched = ch08::measure_batched(s, 23, 1, 2, 3);
        INFO(wb::to_string(s));
        for (const ch08::SmallRow& row : {g.loop, g.graph, batched}) {
            INFO(row.path);
            CHECK(row.status == "PASS");
            CHECK(row.us_per_gemm > 0);
        }
        CHECK(g.graph.path == "graph");
        CHECK(g.graph.same_as_loop);
        CHECK(g.speedup() > 0);
    }
}

TEST_CASE("08: managed memory gives the explicit copies' result, bit for bit", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const ch08::ManagedResult r = ch08::measure_managed({301, 67, 45}, 9);
    REQUIRE(r.rows.size() == 5);
    CHECK(r.rows[0].status == "PASS");
    for (const ch08::ManagedRow& m : r.rows) {
        INFO(m.scenario << ": " << m.status);
        if (m.status.rfind("skipped", 0) == 0) continue;
        CHECK(m.status == "PASS");
        CHECK(m.same_as_explicit);
        CHECK(m.first_gemm_ms > 0);
    }
}

TEST_CASE("08: every crossover path is right; the transfers are timed", "[08][gpu]") {
    WB_REQUIRE_GPU();
    ch08::CrossoverSettings set;
    set.shapes = {{1, 1, 1}, {33, 33, 33}, {64, 64, 64}};
    set.gpu = wb::table(ch08::kSgemmVariants);
    set.max_reps = 2;
    std::vector<ch08::CrossoverRow> rows = ch08::measure_crossover(set);
    CHECK(rows.size() >= 3 * 5);
    // Any shape, with beta != 0: C0 is copied in as input, and every run starts from it.
    set.shapes = {{67, 45, 33}, {130, 97, 75}};
    set.alpha = -1.5f;
    set.beta = 0.5f;
    const std::vector<ch08::CrossoverRow> more = ch08::measure_crossover(set);
    rows.insert(rows.end(), more.begin(), more.end());
    for (const ch08::CrossoverRow& r : rows) {
        INFO(wb::to_string(r.shape) << " " << r.path << ": " << r.status);
        if (r.status.rfind("skipped", 0) == 0) continue;
        CHECK(r.status == "PASS");
        CHECK(r.total_ms > 0);
        if (r.gpu) CHECK(r.kernel_ms > 0);
    }
    const std::vector<ch08::TransferRow> t = ch08::measure_transfers({4096, size_t(1) << 20}, 1, 2);
    REQUIRE(t.size() == 8);
    for (const ch08::TransferRow& x : t) CHECK(x.gbs() > 0);
}

TEST_CASE("08: failed allocations are reported, and the program says so with exit status 2", "[08][gpu]") {
    WB_REQUIRE_GPU();
    const size_t absurd = size_t(1) << 50;  // 4 PiB of floats
    for (ch08::Memory kind : {ch08::Memory::device, ch08::Memory::pinned}) {
        try {
            ch08::Buffer<float> b(absurd, kind);
            FAIL("an allocation of 4 PiB succeeded");
        } catch (const ch08::AllocError& e) {
            CHECK(std::string(e.what()).find(ch08::to_string(kind)) != std::string::npos);
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
    // tools/wb/e2e.py reads the paths of parts 4 and 5 from one file, in this order.
    const std::string graphs = wb::test::read_file(out + "/graphs.csv");
    const size_t loop = graphs.find("\nloop,"), graph = graphs.find("\ngraph,"), batched = graphs.find("\nstrided_batched,");
    CHECK(loop < graph);
    CHECK(graph < batched);
    CHECK(batched != std::string::npos);
    for (const char* heading : {"== 1. transfers", "== 2. crossover", "== 3. streams", "== 4. graphs", "== 5. batched",
                                "== 6. unified memory"})
        CHECK(r.out.find(heading) != std::string::npos);
}

TEST_CASE("08: the CUDA handles: events time, moves keep one owner", "[08][handles][gpu]") {
    WB_REQUIRE_GPU();
    wb::Stream stream(cudaStreamNonBlocking);
    wb::Event start, stop;
    ch08::Buffer<float> x(1 << 20, ch08::Memory::device);
    WB_CUDA_CHECK(cudaEventRecord(start, stream));
    WB_CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), stream));
    WB_CUDA_CHECK(cudaEventRecord(stop, stream));
    WB_CUDA_CHECK(cudaEventSynchronize(stop));
    CHECK(wb::elapsed_ms(start, stop) >= 0.0);
    const cudaEvent_t raw = start;
    wb::Event taken(std::move(start));
    CHECK(taken.get() == raw);
    CHECK(start.get() == nullptr);
    taken = std::move(stop);  // the event it held is destroyed, it now holds stop's
    CHECK(stop.get() == nullptr);
    CHECK(cudaEventQuery(taken) == cudaSuccess);
}

TEST_CASE("08: capture_graph replays the body, and ends the capture when the body fails", "[08][handles][gpu]") {
    WB_REQUIRE_GPU();
    wb::Stream stream(cudaStreamNonBlocking);
    ch08::Buffer<float> x(1000, ch08::Memory::device);
    std::vector<float> host(1000, 1.0f);
    // Recorded, not run: the memset happens at the launch.
    wb::GraphExec graph = wb::capture_graph(stream, [&](cudaStream_t s) {
        WB_CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), s));
    });
    WB_CUDA_CHECK(cudaMemcpyAsync(x.get(), host.data(), x.bytes(), cudaMemcpyHostToDevice, stream));
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    WB_CUDA_CHECK(cudaGraphLaunch(graph, stream));
    WB_CUDA_CHECK(cudaMemcpyAsync(host.data(), x.get(), x.bytes(), cudaMemcpyDeviceToHost, stream));
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(std::count(host.begin(), host.end(), 0.0f) == 1000);

    auto capturing = [&] {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        WB_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
        return status != cudaStreamCaptureStatusNone;
    };
    // The body throws: the error comes out, and the stream is no longer capturing.
    std::string thrown;
    try {
        wb::capture_graph(stream, [](cudaStream_t) { throw std::runtime_error("planted"); });
    } catch (const std::runtime_error& e) {
        thrown = e.what();
    }
    CHECK(thrown == "planted");
    CHECK_FALSE(capturing());
    // The body makes a call a capture cannot record (a synchronize of the captured stream) and
    // does not check it: the capture is invalidated, and capture_graph says so.
    CHECK_THROWS_AS(wb::capture_graph(stream, [](cudaStream_t s) { (void)cudaStreamSynchronize(s); }), wb::CudaError);
    CHECK_FALSE(capturing());
    CHECK(cudaGetLastError() == cudaSuccess);
    // The stream works as before.
    WB_CUDA_CHECK(cudaGraphLaunch(graph, stream));
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
}
