/* ARGSORT and TOP_K of F32 rows, threaded over rows: a stable merge sort of the indices
 * (equal values keep their index order, NaNs last in both orders: the total order every
 * backend sorts by, so results agree byte for byte). TOP_K with small k keeps a sorted
 * list of the best k instead of sorting the row. */
#include "cpu/cpu_ops.h"

#include <math.h>
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

/* Per thread: the row as floats (ne00) and two index arrays (ne00 each), 64-byte apart. */
static size_t per_thread(const ct_tensor *dst) {
    const size_t n = (size_t)dst->src[0]->ne[0];
    return (3 * n * sizeof(float) + 63) / 64 * 64;
}

size_t ct_cpu_argsort_work_size(const ct_tensor *dst, int n_threads) {
    return per_thread(dst) * (size_t)(n_threads > 0 ? n_threads : 1);
}

/* Whether index i goes before index j. */
static inline bool before(const float *x, int32_t i, int32_t j, bool desc) {
    const float a = x[i], b = x[j];
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? i < j : !isnan(a);
    if (a != b) return desc ? a > b : a < b;
    return i < j;
}

/* idx[0..n) sorted by before(), tmp as scratch; returns the array holding the result. */
static int32_t *merge_sort(const float *x, int32_t *idx, int32_t *tmp, int64_t n, bool desc) {
    /* runs of 16 by insertion, then bottom-up merges */
    enum { RUN = 16 };
    for (int64_t lo = 0; lo < n; lo += RUN) {
        const int64_t hi = lo + RUN < n ? lo + RUN : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            const int32_t v = idx[i];
            int64_t j = i;
            while (j > lo && before(x, v, idx[j - 1], desc)) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = v;
        }
    }
    for (int64_t w = RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            int64_t p = lo, q = mid, o = lo;
            if (mid == hi || !before(x, idx[mid], idx[mid - 1], desc)) { /* already in order */
                memcpy(tmp + lo, idx + lo, (size_t)(hi - lo) * sizeof *idx);
                continue;
            }
            while (p < mid && q < hi) tmp[o++] = before(x, idx[q], idx[p], desc) ? idx[q++] : idx[p++];
            while (p < mid) tmp[o++] = idx[p++];
            while (q < hi) tmp[o++] = idx[q++];
        }
        int32_t *s = idx;
        idx = tmp;
        tmp = s;
    }
    return idx;
}

/* The best k (k <= TOPK_LIST) of the row in order, into out. */
static void top_k_list(const float *x, int64_t n, int32_t *out, int64_t k) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        const int32_t v = (int32_t)i;
        if (m == k && !before(x, v, out[m - 1], true)) continue;
        int64_t j = m < k ? m++ : m - 1;
        while (j > 0 && before(x, v, out[j - 1], true)) {
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
    char *w = (char *)params->wdata + per_thread(dst) * (size_t)params->ith;
    float *x = (float *)(void *)w;
    int32_t *i0 = (int32_t *)(void *)(x + n), *i1 = i0 + n;
    const int64_t nr = ct_nrows(a), per = nr / params->nth, rem = nr % params->nth, ith = params->ith;
    const int64_t r0 = ith * per + (ith < rem ? ith : rem);
    const int64_t r1 = r0 + per + (ith < rem ? 1 : 0);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i01 = r % ne01, i02 = (r / ne01) % ne02, i03 = r / (ne01 * ne02);
        const char *src = (const char *)a->data + (size_t)i01 * a->nb[1] + (size_t)i02 * a->nb[2] + (size_t)i03 * a->nb[3];
        int32_t *y = (int32_t *)(void *)((char *)dst->data + (size_t)i01 * dst->nb[1] + (size_t)i02 * dst->nb[2] +
                                         (size_t)i03 * dst->nb[3]);
        for (int64_t i = 0; i < n; i++) memcpy(&x[i], src + (size_t)i * a->nb[0], sizeof(float));
        if (list) {
            top_k_list(x, n, i0, k);
            memcpy(y, i0, (size_t)k * sizeof *y);
            continue;
        }
        for (int64_t i = 0; i < n; i++) i0[i] = (int32_t)i;
        const int32_t *s = merge_sort(x, i0, i1, n, desc);
        memcpy(y, s, (size_t)k * sizeof *y);
    }
}
