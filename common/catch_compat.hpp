// catch_compat.hpp - write the tests once, build them with Catch2 v2 (one header; Debian 12,
// Ubuntu 22.04) or Catch2 v3 (headers and a library; Ubuntu 24.04 and later).
// The Makefile defines WB_CATCH2_V3 when it found v3; otherwise the header is picked here.
#pragma once

#if !defined(WB_CATCH2_V3) && !defined(WB_CATCH2_V2)
#if __has_include(<catch2/catch_test_macros.hpp>)
#define WB_CATCH2_V3 1
#else
#define WB_CATCH2_V2 1
#endif
#endif

#if defined(WB_CATCH2_V3)
#include <catch2/catch_test_macros.hpp>
#else
#include <catch2/catch.hpp>
#endif

// SKIP() exists from Catch2 3.3 on. Elsewhere a skipped test returns early; the workbook's own
// listener (test_main.cpp) counts it as skipped either way.
#if defined(SKIP)
#define WB_SKIP_NOW(msg) SKIP(msg)
#else
#define WB_SKIP_NOW(msg) \
    do {                 \
        WARN(msg);       \
        return;          \
    } while (0)
#endif
