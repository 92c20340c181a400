// tune_06 - chapter 06's lab program: the tuning sweep over every tile configuration of
// lab/lab_configs.cuh, and the precision study of the ladder.
// Run: make tune-06 (from the top) or, in 06_tensor_core_wmma, make tune [TUNE_ARGS="--sizes 2048,4096"]
//      lab/tune_06 [--sizes ...] [--csv FILE]      every configuration, the fastest per shape
//      lab/tune_06 --precision --sizes 1024,4096   errors of the ladder against the exact FP32 product
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lab_configs.cuh"

namespace {

bool has_flag(int argc, char** argv, const char* flag) {
    return std::any_of(argv + 1, argv + argc, [&](const char* a) { return std::string(a) == flag; });
}

// ---- the sweep: every configuration, the fastest per precision and shape ----------------------
int tune(const wb::Chapter& ch, const wb::Options& opt) {
    return wb::run_and_print_fastest(ch, opt, "lab/best_06.py turns a sweep saved with --csv into the rates of best");
}

// ---- --precision: what FP16 and TF32 inputs cost in accuracy -----------------------------------
// Every selected variant and the three cuBLAS modes run once on the same random FP32 data (FP16
// variants get it rounded to FP16, as in the timed runs). Each result is compared with
//   - the exact product of the FP32 inputs: what the program wanted, the error a user sees;
//   - the exact product of the inputs as rounded for that arithmetic: the accumulation error only
//     (the rel.err column of a normal run);
//   - cuBLAS SGEMM (FP32 on the CUDA cores) on the FP32 inputs.
// Each number is the normwise relative error ||C - C_ref|| / ||C_ref|| (over a sample of entries
// for large shapes).
struct Reference {
    bool full = false;
    std::vector<double> value, scale;
    std::vector<wb::RefEntry> sample;
};

Reference make_reference(const wb::GemmView& g, uint64_t seed) {
    constexpr size_t kSampleEntries = 4096;
    Reference r;
    r.full = wb::GemmProblem::full_reference(g.s);
    if (r.full)
        wb::reference_full(g, r.value, r.scale);
    else
        r.sample = wb::reference_sample(g, kSampleEntries, seed);
    return r;
}

double rel_err(const Reference& ref, const std::vector<float>& C, const wb::Shape& s) {
    const wb::Tolerance tol = wb::tolerance_for(wb::Precision::fp32, s.k);  // only rel_err is used
    return ref.full ? wb::check_full(C.data(), s.m, s.n, ref.value, ref.scale, tol).rel_err
                    : wb::check_sample(C.data(), s.n, ref.sample, tol).rel_err;
}

double rel_diff(const std::vector<float>& C, const std::vector<float>& base) {
    double d2 = 0.0, b2 = 0.0;
    for (size_t i = 0; i < C.size(); ++i) {
        const double d = double(C[i]) - double(base[i]);
        d2 += std::isfinite(d) ? d * d : INFINITY;
        b2 += double(base[i]) * base[i];
    }
    return b2 > 0.0 ? std::sqrt(d2 / b2) : std::sqrt(d2);
}

bool selected(const wb::Options& opt, const char* name) {
    if (opt.variant == "all") return true;
    const std::string list = "," + opt.variant + ",";
    return list.find("," + std::string(name) + ",") != std::string::npos;
}

int precision_study(const wb::Chapter& ch, const wb::Options& opt) {
    const wb::DeviceFacts dev = wb::require_device(ch.name);
    std::printf("%s --precision on %s (sm_%d%d): normwise relative error ||C - C_ref|| / ||C_ref||\n",
                ch.name.c_str(), dev.name.c_str(), dev.cc_major, dev.cc_minor);
    std::printf("inputs uniform in [-1, 1), seed %llu, alpha = %g, beta = %g\n", (unsigned long long)opt.seed,
                opt.alpha, opt.beta);
    for (const wb::Shape& s : opt.shapes) {
        const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
        std::vector<float> A(na), B(nb), C0;
        wb::fill_random(A.data(), na, opt.seed, 1);
        wb::fill_random(B.data(), nb, opt.seed, 2);
        if (opt.beta != 0.0f) {
            C0.resize(nc);
            wb::fill_random(C0.data(), nc, opt.seed, 3);
        }
        // The three input precisions, each with the exact product of its own (rounded) inputs.
        std::map<wb::Precision, Reference> rounded_ref;
        for (wb::Precision p : {wb::Precision::fp32, wb::Precision::tf32, wb::Precision::fp16}) {
            std::vector<float> a = A, b = B;
            wb::round_to(p, a);
            wb::round_to(p, b);
            wb::GemmView g;
            g.s = s;
            g.alpha = opt.alpha;
            g.beta = opt.beta;
            g.A = a.data();
            g.B = b.data();
            g.C0 = C0.empty() ? nullptr : C0.data();
            rounded_ref[p] = make_reference(g, opt.seed);
        }
        const Reference& exact = rounded_ref[wb::Precision::fp32];

        wb::DeviceBuffer<float> dA(na), dB(nb), dC(nc), dC0(C0.empty() ? 1 : nc);
        wb::DeviceBuffer<__half> dA16(na), dB16(nb);
        dA.upload(A);
        dB.upload(B);
        dA16.upload(wb::to_half(A));
        dB16.upload(wb::to_half(B));
        if (!C0.empty()) dC0.upload(C0);
        auto run = [&](auto launch) {
            if (opt.beta == 0.0f)  // NaN everywhere: a kernel that reads C when beta == 0 shows up
                WB_CUDA_CHECK(cudaMemset(dC.get(), 0xFF, nc * sizeof(float)));
            else
                WB_CUDA_CHECK(cudaMemcpy(dC.get(), dC0.get(), nc * sizeof(float), cudaMemcpyDeviceToDevice));
            launch();
            WB_CUDA_CHECK(cudaDeviceSynchronize());
            return dC.download();
        };
        const std::vector<float> sgemm = run(
            [&] { wb::cublas_sgemm(s.m, s.n, s.k, opt.alpha, dA.get(), dB.get(), opt.beta, dC.get(), 0); });

        std::printf("\n%s\n%-24s %-6s %24s %26s %18s\n", wb::to_string(s).c_str(), "variant", "dtype",
                    "vs exact, FP32 inputs", "vs exact, rounded inputs", "vs cuBLAS SGEMM");
        auto report = [&](const char* name, wb::Precision p, const std::vector<float>& C) {
            std::printf("%-24s %-6s %24.3e %26.3e %18.3e\n", name, wb::to_string(p), rel_err(exact, C, s),
                        rel_err(rounded_ref[p], C, s), rel_diff(C, sgemm));
        };
        report("cublas_sgemm", wb::Precision::fp32, sgemm);
        auto fp32_inputs = [&](SgemmFn f) {
            return run([&] { f(s.m, s.n, s.k, opt.alpha, dA.get(), dB.get(), opt.beta, dC.get(), 0); });
        };
        auto fp16_inputs = [&](HgemmFn f) {
            return run([&] { f(s.m, s.n, s.k, opt.alpha, dA16.get(), dB16.get(), opt.beta, dC.get(), 0); });
        };
        if (dev.cc_number() >= 80) {
            report("cublas_tf32", wb::Precision::tf32, fp32_inputs(wb::cublas_tf32));
            for (const wb::SgemmVariant& v : ch.sgemm)
                if (selected(opt, v.name)) report(v.name, v.precision, fp32_inputs(v.run));
        } else {
            std::printf("%-24s tf32   skipped (needs sm_80)\n", "cublas_tf32 and TF32 variants");
        }
        report("cublas_hgemm", wb::Precision::fp16, fp16_inputs(wb::cublas_hgemm));
        for (const wb::HgemmVariant& v : ch.hgemm)
            if (selected(opt, v.name) && dev.cc_number() >= v.min_cc)
                report(v.name, wb::Precision::fp16, fp16_inputs(v.run));
    }
    return wb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
    // --precision studies the ladder; otherwise the configurations are swept. The tables must be
    // known before parsing, because --variant names are checked against the tables that will run.
    const bool precision = has_flag(argc, argv, "--precision");
    bool precision_flag = false;
    wb::Chapter ch{"06_tensor_core_wmma", precision ? wb::table(ch06::kTf32Variants) : wb::table(ch06::kTf32Configs),
                   precision ? wb::table(ch06::kHgemmVariants) : wb::table(ch06::kHgemmConfigs)};
    ch.default_shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}};
    ch.extras = {
        {"precision", "print each ladder variant's error against the exact product of the FP32 inputs",
         nullptr, &precision_flag},
    };
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    try {
        return precision_flag ? precision_study(ch, opt) : tune(ch, opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", ch.name.c_str(), e.what());
        return wb::kExitVerifyFailed;
    }
}
