/* ct-hw-threads: an LD_PRELOAD library that makes std::thread::hardware_concurrency()
 * return $CT_HW_THREADS. ggml's test-backend-ops gives every backend half of that
 * count (through ggml_backend_set_n_threads), so CT_HW_THREADS=2*N runs ggml-cpu and
 * ctensor's CTCPU with N threads each on any machine (scripts/ggml/tbo-perf.sh).
 * Built by that script with `cc -shared -fPIC`; not part of the library. */
#include <stdlib.h>

unsigned int _ZNSt6thread20hardware_concurrencyEv(void);

/* The mangled name of the static member std::thread::hardware_concurrency(). */
unsigned int _ZNSt6thread20hardware_concurrencyEv(void) {
    const char *s = getenv("CT_HW_THREADS");
    long n = s ? strtol(s, NULL, 10) : 0;
    return n > 0 && n < 65536 ? (unsigned int)n : 1u;
}
