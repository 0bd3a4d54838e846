/* ARGSORT and TOP_K of F32 rows, threaded over rows, by the total order every backend
 * sorts by (value, equal values by index, NaNs last in both orders), so results agree
 * byte for byte: each element becomes one 64-bit key (sort_key) whose unsigned order is
 * that order, and the keys are radix sorted (stable, on the value bits). TOP_K with small
 * k keeps a sorted list of the best k keys instead of sorting the row. */
#include "cpu/cpu_ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { TOPK_LIST = 64 }; /* k up to this: an insertion list; more: the whole row sorted */

bool ct_cpu_argsort_supported(const ct_tensor *op) {
    if (!op) return false;
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_I32 || a->ne[0] > INT32_MAX) return false;
    if (op->nb[0] != sizeof(int32_t)) return false;
    if (op->ne[1] != a->ne[1] || op->ne[2] != a->ne[2] || op->ne[3] != a->ne[3]) return false;
    if (op->op == CT_OP_ARGSORT)
        return op->ne[0] == a->ne[0] && (op->op_params[0] == CT_SORT_ORDER_ASC || op->op_params[0] == CT_SORT_ORDER_DESC);
    return op->op == CT_OP_TOP_K && op->ne[0] <= a->ne[0];
}

/* Per thread: two arrays of ne00 keys. */
static size_t per_thread(const ct_tensor *dst) {
    const size_t n = (size_t)dst->src[0]->ne[0];
    return (2 * n * sizeof(uint64_t) + 63) / 64 * 64;
}

size_t ct_cpu_argsort_work_size(const ct_tensor *dst, int n_threads) {
    return per_thread(dst) * (size_t)(n_threads > 0 ? n_threads : 1);
}

/* The sort key of value v at index i: (order bits << 32) | i, so that one unsigned
 * compare is the total order: the value's bits mapped to an unsigned order (-0 as +0;
 * descending: inverted), every NaN above all numbers, then the index. */
static inline uint64_t sort_key(float v, int64_t i, bool desc) {
    uint32_t u;
    if (v == 0.0f) v = 0.0f;
    memcpy(&u, &v, sizeof u);
    uint32_t o = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    if (desc) o = ~o;
    if (isnan(v)) o = 0xFFFFFFFFu;
    return ((uint64_t)o << 32) | (uint64_t)i;
}

/* LSD radix sort of a[0..n) by the upper 32 bits (stable: the index bits stay in order);
 * tmp as scratch. Returns the array holding the result. */
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, int64_t n) {
    if (n < 2) return a;
    for (int shift = 32; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (int64_t i = 0; i < n; i++) count[(a[i] >> shift) & 0xFF]++;
        if (count[(a[0] >> shift) & 0xFF] == (size_t)n) continue; /* one bucket: nothing moves */
        size_t pos = 0;
        for (int b = 0; b < 256; b++) {
            const size_t c = count[b];
            count[b] = pos;
            pos += c;
        }
        for (int64_t i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 0xFF]++] = a[i];
        uint64_t *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* The k (<= TOPK_LIST) smallest keys of key[0..n) in order, into out. */
static void top_k_list(const uint64_t *key, int64_t n, uint64_t *out, int64_t k) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint64_t v = key[i];
        if (m == k && v >= out[m - 1]) continue;
        int64_t j = m < k ? m++ : m - 1;
        while (j > 0 && v < out[j - 1]) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = v;
    }
}

void ct_cpu_argsort(const ct_cpu_params *params, ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int64_t n = a->ne[0], k = dst->ne[0], ne01 = a->ne[1], ne02 = a->ne[2];
    const bool desc = dst->op == CT_OP_TOP_K || dst->op_params[0] == CT_SORT_ORDER_DESC;
    const bool list = dst->op == CT_OP_TOP_K && k <= TOPK_LIST;
    uint64_t *k0 = (uint64_t *)(void *)((char *)params->wdata + per_thread(dst) * (size_t)params->ith), *k1 = k0 + n;
    int64_t r0, r1;
    ct_cpu_split(ct_nrows(a), params, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i01 = r % ne01, i02 = (r / ne01) % ne02, i03 = r / (ne01 * ne02);
        const char *src = (const char *)a->data + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2] + (size_t)i03 * a->nb[3];
        int32_t *y = (int32_t *)(void *)((char *)dst->data + (size_t)i01 * dst->nb[1] + (size_t)i02 * dst->nb[2] +
                                         (size_t)i03 * dst->nb[3]);
        for (int64_t i = 0; i < n; i++) {
            float v;
            memcpy(&v, src + (size_t)i * a->nb[0], sizeof v);
            k0[i] = sort_key(v, i, desc);
        }
        const uint64_t *s = k0;
        if (list) {
            top_k_list(k0, n, k1, k);
            s = k1;
        } else {
            s = radix_sort(k0, k1, n);
        }
        for (int64_t i = 0; i < k; i++) y[i] = (int32_t)(uint32_t)s[i];
    }
}
