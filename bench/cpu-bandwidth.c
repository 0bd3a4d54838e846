/* What this machine's memory gives two threads, access pattern by access pattern, to set
 * the CPU backend's figures against (docs/PERF.md, "CPU"). Each line is the best
 * of five passes over buffers well past the last-level cache; GB/s counts bytes read plus
 * bytes written, as ct-ops perf does.
 *
 *   seq memcpy      glibc memcpy of 512 MiB a thread (what ct_tensor_copy does)
 *   seq stream      the same with non-temporal 16-byte stores of whole lines
 *                   (ct_cpu_stream_memcpy; the CPY kernel's same-type copy)
 *   rand memcpy     16 KiB rows gathered from random indices (GET_ROWS F32 at r = 16384)
 *   rand stream     the same rows, streamed out
 *   read only       a sum over 1 GiB (SUM_ROWS, the read side of the norms)
 *
 * Build and run: gcc -O2 -mavx2 -pthread -o bw bench/cpu-bandwidth.c && ./bw */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { THREADS = 2, PASSES = 5, ROW = 16384 };
static const size_t SEQ_BYTES = (size_t)1 << 30;      /* per buffer */
static const size_t SRC_ROWS = 32768, DST_ROWS = 16384; /* 512 MiB gathered into 256 MiB */

static char *src, *dst;
static int *row_index;
static float sink[THREADS];

typedef void (*job_fn)(int t);

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stream_copy(char *d, const char *s, size_t n) {
    for (size_t b = 0; b < n; b += 64)
        for (int k = 0; k < 4; k++) _mm_stream_ps((float *)(d + b + 16 * k), _mm_loadu_ps((const float *)(s + b + 16 * k)));
    _mm_sfence();
}

static void seq_memcpy(int t) {
    const size_t per = SEQ_BYTES / THREADS;
    memcpy(dst + t * per, src + t * per, per);
}

static void seq_stream(int t) {
    const size_t per = SEQ_BYTES / THREADS;
    stream_copy(dst + t * per, src + t * per, per);
}

static void rand_rows(int t, int stream) {
    const size_t per = DST_ROWS / THREADS;
    for (size_t r = t * per; r < (t + 1) * per; r++) {
        const char *s = src + (size_t)row_index[r] * ROW;
        if (stream) stream_copy(dst + r * ROW, s, ROW);
        else memcpy(dst + r * ROW, s, ROW);
    }
}

static void rand_memcpy(int t) { rand_rows(t, 0); }
static void rand_stream(int t) { rand_rows(t, 1); }

static void read_only(int t) {
    const size_t per = SEQ_BYTES / THREADS / sizeof(float);
    const float *p = (const float *)(const void *)src + t * per;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < per; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_load_ps(p + i));
        s1 = _mm256_add_ps(s1, _mm256_load_ps(p + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_load_ps(p + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_load_ps(p + i + 24));
    }
    float r[8];
    _mm256_storeu_ps(r, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    sink[t] = r[0] + r[1] + r[2] + r[3] + r[4] + r[5] + r[6] + r[7];
}

static job_fn current;
static void *thread_main(void *arg) {
    current((int)(size_t)arg);
    return NULL;
}

/* Best GB/s of PASSES runs of fn on THREADS threads moving `bytes` in all. */
static double best_gbps(job_fn fn, double bytes) {
    double best = 0;
    for (int p = 0; p < PASSES; p++) {
        pthread_t th[THREADS];
        current = fn;
        const double t0 = now();
        for (size_t i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
        for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
        const double gbps = bytes / (now() - t0) / 1e9;
        if (gbps > best) best = gbps;
    }
    return best;
}

int main(void) {
    src = aligned_alloc(4096, SEQ_BYTES > SRC_ROWS * ROW ? SEQ_BYTES : SRC_ROWS * ROW);
    dst = aligned_alloc(4096, SEQ_BYTES);
    row_index = malloc(DST_ROWS * sizeof *row_index);
    if (!src || !dst || !row_index) return 1;
    memset(src, 1, SEQ_BYTES > SRC_ROWS * ROW ? SEQ_BYTES : SRC_ROWS * ROW);
    memset(dst, 2, SEQ_BYTES);
    srand(1);
    for (size_t i = 0; i < DST_ROWS; i++) row_index[i] = rand() % (int)SRC_ROWS;

    printf("seq memcpy   %5.1f GB/s\n", best_gbps(seq_memcpy, 2.0 * SEQ_BYTES));
    printf("seq stream   %5.1f GB/s\n", best_gbps(seq_stream, 2.0 * SEQ_BYTES));
    printf("rand memcpy  %5.1f GB/s\n", best_gbps(rand_memcpy, 2.0 * DST_ROWS * ROW));
    printf("rand stream  %5.1f GB/s\n", best_gbps(rand_stream, 2.0 * DST_ROWS * ROW));
    printf("read only    %5.1f GB/s (%g)\n", best_gbps(read_only, (double)SEQ_BYTES), (double)(sink[0] + sink[1]));
    free(src);
    free(dst);
    free(row_index);
    return 0;
}
