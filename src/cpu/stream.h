/* Converting rows with non-temporal stores (and prefetching rows), for the CPU ops whose outputs are larger
 * than the caches (GET_ROWS, SET_ROWS, CPY, the norms). A normal store first reads the
 * line it writes (read for ownership): a third stream of memory traffic beside the
 * input read and the output written, which held those ops at 50-65% of memcpy on the
 * 2-core test machine (memcpy itself streams its large copies). The converters write
 * CT_CPU_STREAM_FLOATS values at a time into an L1 buffer that is then streamed out,
 * so the bytes are the converters' own. The caller ends its part with
 * ct_cpu_stream_fence() before the threads meet. */
#ifndef CT_CPU_STREAM_H
#define CT_CPU_STREAM_H

#include "types/types_internal.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Outputs from this size on take non-temporal stores (past any cache here). */
#define CT_CPU_STREAM_MIN_BYTES ((size_t)32 << 20)
/* Values per conversion step: a multiple of every block size. */
#define CT_CPU_STREAM_FLOATS 256

/* Prefetches the n bytes at p a cache line at a time, to be written when write (rows at
 * random indices, which no hardware prefetcher follows). */
static inline void ct_cpu_prefetch(const char *p, size_t n, bool write) {
    for (size_t i = 0; i < n; i += 64) {
        if (write) __builtin_prefetch(p + i, 1, 3);
        else __builtin_prefetch(p + i, 0, 3);
    }
}

/* Whether out can be streamed: SSE2 and a 16-byte aligned start. */
static inline bool ct_cpu_stream_ok(const void *out) {
#ifdef __SSE2__
    return (uintptr_t)out % 16 == 0;
#else
    (void)out;
    return false;
#endif
}

/* bytes (a multiple of 16) from buf (any alignment) to the 16-byte aligned out. */
static inline void ct_cpu_stream_copy(void *out, const void *buf, size_t bytes) {
#ifdef __SSE2__
    for (size_t b = 0; b < bytes; b += 16)
        _mm_stream_ps((float *)((char *)out + b), _mm_loadu_ps((const float *)((const char *)buf + b)));
#else
    memcpy(out, buf, bytes);
#endif
}

/* memcpy of non-overlapping bytes with non-temporal stores for the whole 64-byte lines of out
 * (glibc's memcpy ran 1.2-1.8x slower than this on the 2-core Zen 4 test machine, docs/TUNING.md,
 * CPU: streamed stores); the partial lines at either end go through memcpy. */
static inline void ct_cpu_stream_memcpy(void *out, const void *in, size_t bytes) {
    char *d = out;
    const char *s = in;
    const size_t head = (64 - (uintptr_t)d % 64) % 64;
    if (bytes < head + 64) {
        memcpy(d, s, bytes);
        return;
    }
    const size_t lines = (bytes - head) / 64 * 64;
    memcpy(d, s, head);
    ct_cpu_stream_copy(d + head, s + head, lines);
    memcpy(d + head + lines, s + head + lines, bytes - head - lines);
}

/* Orders this thread's non-temporal stores before what follows (the threads' barrier). */
static inline void ct_cpu_stream_fence(void) {
#ifdef __SSE2__
    _mm_sfence();
#endif
}

/* m <= CT_CPU_STREAM_FLOATS values of a block type (blck values in ts bytes) at src,
 * dequantized to out through an L1 buffer when stream (out 16-byte aligned). */
static inline void ct_cpu_dequantize_step(ct_dequantize_fn deq, const char *src, float *out, int64_t m,
                                          bool stream) {
    if (stream && m % 4 == 0) {
        float buf[CT_CPU_STREAM_FLOATS] __attribute__((aligned(16)));
        deq(src, buf, m);
        ct_cpu_stream_copy(out, buf, (size_t)m * sizeof(float));
        return;
    }
    deq(src, out, m);
}

/* m <= CT_CPU_STREAM_FLOATS floats at src quantized into `bytes` bytes at out, through an
 * L1 buffer when stream (out 16-byte aligned, bytes a multiple of 16). */
static inline void ct_cpu_quantize_step(ct_quantize_fn quant, const float *src, char *out, int64_t m, size_t bytes,
                                        bool stream) {
    if (stream && bytes % 16 == 0 && (uintptr_t)out % 16 == 0) {
        float buf[CT_CPU_STREAM_FLOATS] __attribute__((aligned(16))); /* holds any type's m values */
        quant(src, buf, m);
        ct_cpu_stream_copy(out, buf, bytes);
        return;
    }
    quant(src, out, m);
}

#endif
