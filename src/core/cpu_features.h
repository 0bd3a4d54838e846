/* CPU features that select SIMD code paths at run time. */
#ifndef CT_CPU_FEATURES_H
#define CT_CPU_FEATURES_H

#include <stdbool.h>

/* AVX2, FMA and F16C present and the YMM state saved by the OS (cached after the first call). */
bool ct_cpu_has_avx2_f16c(void);

#endif
