/* CPUID-based feature detection for the run-time SIMD dispatch. */
#include "core/cpu_features.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)

#include <cpuid.h>
#include <stddef.h>
#include <stdatomic.h>

/* CPUID directly: not every compiler's __builtin_cpu_supports knows f16c.
 * XGETBV confirms that the OS saves the YMM registers. */
static bool detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const unsigned need = 1u << 12 | 1u << 27 | 1u << 28 | 1u << 29; /* FMA, OSXSAVE, AVX, F16C */
    if ((c & need) != need) return false;
    unsigned xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 6u) != 6u) return false;
    if (__get_cpuid_max(0, NULL) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & 1u << 5) != 0; /* AVX2 */
}

/* AVX512F, BW, VL and VNNI on top of detect(); XGETBV confirms that the OS saves
 * the opmask and ZMM registers (XCR0 bits 5-7). */
static bool detect_avx512(void) {
    if (!detect()) return false;
    unsigned a, b, c, d, xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 0xE6u) != 0xE6u) return false;
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned need_b = 1u << 16 | 1u << 30 | 1u << 31; /* AVX512F, AVX512BW, AVX512VL */
    return (b & need_b) == need_b && (c & 1u << 11) != 0;  /* AVX512_VNNI */
}

/* state: 0 unknown, 1 yes, 2 no */
static bool cached(atomic_int *state, bool (*fn)(void)) {
    int s = atomic_load_explicit(state, memory_order_relaxed);
    if (s == 0) {
        s = fn() ? 1 : 2;
        atomic_store_explicit(state, s, memory_order_relaxed);
    }
    return s == 1;
}

bool ct_cpu_has_avx2_f16c(void) {
    static atomic_int state;
    return cached(&state, detect);
}

bool ct_cpu_has_avx512_vnni(void) {
    static atomic_int state;
    return cached(&state, detect_avx512);
}

#else

bool ct_cpu_has_avx2_f16c(void) { return false; }
bool ct_cpu_has_avx512_vnni(void) { return false; }

#endif
