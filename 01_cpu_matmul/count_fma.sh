#!/usr/bin/env bash
# count_fma.sh - counts the fused multiply-add instructions that g++ emitted for one function of
# a program (by default the blocked micro-kernel of 01_cpu_matmul), by vector width, and finds
# the loop that holds most of them (the micro-kernel's k loop).
#
#   ./count_fma.sh [PROGRAM [FUNCTION]]     disassemble PROGRAM (default: ./01_cpu_matmul)
#   ./count_fma.sh - [FUNCTION] < LISTING   read an `objdump -d --no-show-raw-insn -C` listing
#
# Why by width: what -march=native gives depends on the CPU and on how g++ tunes for it. An AVX2
# CPU has 256-bit ymm registers only. Some AVX-512 CPUs get 512-bit zmm FMAs, while for others
# g++ prefers 256-bit vectors (-mprefer-vector-width=256 is part of its tuning for several Intel
# AVX-512 models) and emits ymm FMAs there too. Counting only zmm would report 0 FMAs on all of
# those machines although the kernel is vectorized.
#
# The width of a packed FMA is the width of its registers: xmm 128 bits (4 floats), ymm 256 (8),
# zmm 512 (16). Scalar FMAs (vfmadd231ss and friends) also name xmm registers but do one
# multiply-add; they are counted apart.
#
# Exit status: 0 when the function has packed FMAs; 1 when it has none (built without
# -march=native, at -O1, or with a compiler that did not vectorize it); 2 for bad usage, a missing
# program or objdump, or a function that is not in the listing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
program=${1:-$here/01_cpu_matmul}
function=${2:-ch01::blocked::micro_kernel}

if [ "$program" = "-h" ] || [ "$program" = "--help" ]; then
    sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
fi

if [ "$program" = "-" ]; then
    listing=$(cat)
    source_name="the listing on stdin"
else
    if [ ! -f "$program" ]; then
        echo "count_fma.sh: $program does not exist: build it first (make 01)" >&2
        exit 2
    fi
    if ! command -v objdump >/dev/null 2>&1; then
        echo "count_fma.sh: objdump not found: it comes with binutils (sudo apt-get install binutils)" >&2
        exit 2
    fi
    listing=$(objdump -d --no-show-raw-insn -C "$program") || exit 2
    source_name=$program
fi

# The awk program reads the function's own instructions only: from its label line
# ("0000000000012040 <ch01::blocked::micro_kernel(int, ...)>:") to the blank line after it. A line
# that merely mentions the name (a `call` from another function) does not start it.
printf '%s\n' "$listing" | awk -v fn="$function" -v src="$source_name" '
function hex(s,    i, c, v) {
    v = 0
    s = tolower(s)
    for (i = 1; i <= length(s); ++i) {
        c = index("0123456789abcdef", substr(s, i, 1))
        if (c == 0) return -1
        v = v * 16 + c - 1
    }
    return v
}
# The register width of a packed FMA: the last operand (AT&T order) is the destination.
function width_of(ops,    n, parts, last) {
    n = split(ops, parts, ",")
    last = parts[n]
    if (last ~ /%zmm/) return "zmm"
    if (last ~ /%ymm/) return "ymm"
    if (last ~ /%xmm/) return "xmm"
    return ""
}
BEGIN {
    lanes["xmm"] = 4; lanes["ymm"] = 8; lanes["zmm"] = 16
    bits["xmm"] = 128; bits["ymm"] = 256; bits["zmm"] = 512
    found = 0; inside = 0; n = 0
}
/^[0-9a-f]+ <.*>:$/ {
    name = $0
    sub(/^[0-9a-f]+ </, "", name)
    inside = (index(name, fn "(") == 1 || index(name, fn ">") == 1)
    if (inside) { found = 1; label = name; sub(/>:$/, "", label) }
    next
}
/^$/ { inside = 0; next }
inside && /^ *[0-9a-f]+:\t/ {
    line = $0
    sub(/^ */, "", line)
    split(line, f, "\t")
    addr = hex(substr(f[1], 1, length(f[1]) - 1))
    insn = f[2]
    mnem = insn; sub(/ .*/, "", mnem)
    ops = insn; if (index(ops, " ")) sub(/^[^ ]+ +/, "", ops); else ops = ""
    ++n
    address[n] = addr
    kind[n] = ""
    if (mnem ~ /^vf(n?m(add|sub)|maddsub|msubadd)(132|213|231)(ps|pd|ss|sd)$/) {
        if (mnem ~ /s[sd]$/) {
            kind[n] = "scalar"
            ++scalar
        } else {
            w = width_of(ops)
            kind[n] = w
            ++packed[w]
            # Multiply-adds per instruction: lanes of a float vector, half as many doubles.
            madds[n] = (mnem ~ /pd$/) ? lanes[w] / 2 : lanes[w]
        }
    }
    stack[n] = (ops ~ /\(%(rsp|rbp)\)/ || ops ~ /\(%(rsp|rbp),/)
    # A jump back to an earlier address of this function closes a loop.
    target[n] = -1
    if (mnem ~ /^j/ && match(ops, /^[0-9a-f]+ /)) {
        t = hex(substr(ops, 1, RLENGTH - 1))
        if (t <= addr) target[n] = t
    }
}
END {
    if (!found) {
        printf "count_fma.sh: no function %s in %s\n", fn, src > "/dev/stderr"
        exit 2
    }
    total = packed["xmm"] + packed["ymm"] + packed["zmm"]
    printf "%s in %s:\n", label, src
    printf "  packed FMA instructions: %d\n", total
    printf "    xmm (128-bit,  4 floats): %d\n", packed["xmm"]
    printf "    ymm (256-bit,  8 floats): %d\n", packed["ymm"]
    printf "    zmm (512-bit, 16 floats): %d\n", packed["zmm"]
    printf "  scalar FMA instructions (one multiply-add each): %d\n", scalar + 0

    # The loop with the most packed FMAs: the micro-kernel s k loop (when g++ unrolls it, one
    # iteration covers several steps k).
    best_fmas = 0
    for (j = 1; j <= n; ++j) {
        if (target[j] < 0) continue
        fmas = 0; m = 0; st = 0; cnt["xmm"] = cnt["ymm"] = cnt["zmm"] = 0
        for (i = 1; i <= j; ++i) {
            if (address[i] < target[j]) continue
            if (kind[i] != "" && kind[i] != "scalar") { ++fmas; m += madds[i]; ++cnt[kind[i]] }
            if (stack[i]) ++st
        }
        if (fmas > best_fmas) {
            best_fmas = fmas; best_madds = m; best_stack = st
            best_w = (cnt["zmm"] ? "zmm" : (cnt["ymm"] ? "ymm" : "xmm"))
        }
    }
    widest = packed["zmm"] ? "zmm" : (packed["ymm"] ? "ymm" : (packed["xmm"] ? "xmm" : "none"))
    if (best_fmas > 0) {
        printf "  hottest loop: %d packed FMAs (%s), %d multiply-adds per iteration, %d stack accesses\n", \
            best_fmas, best_w, best_madds, best_stack
    } else {
        printf "  hottest loop: no packed FMA inside a loop\n"
    }
    if (widest == "none") {
        printf "  vector width: none (no packed FMA: was it built with -O3 -march=native?)\n"
    } else {
        printf "  vector width: %s (%d-bit, %d floats per FMA)\n", widest, bits[widest], lanes[widest]
    }
    # One line for scripts and tests.
    printf "summary: width=%s packed=%d xmm=%d ymm=%d zmm=%d scalar=%d loop_fmas=%d loop_madds=%d loop_stack=%d\n", \
        widest, total, packed["xmm"], packed["ymm"], packed["zmm"], scalar, best_fmas, best_madds + 0, \
        best_stack + 0
    exit (total > 0 ? 0 : 1)
}'
