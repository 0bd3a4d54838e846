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

bool ct_cpu_has_avx2_f16c(void) {
    static atomic_int state; /* 0 unknown, 1 yes, 2 no */
    int s = atomic_load_explicit(&state, memory_order_relaxed);
    if (s == 0) {
        s = detect() ? 1 : 2;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 1;
}

#else

bool ct_cpu_has_avx2_f16c(void) { return false; }

#endif
