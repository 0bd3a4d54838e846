/* ARGSORT and TOP_K of F32 rows: a stable merge sort of the indices (equal values keep
 * their index order, NaNs last in both orders), TOP_K the first k of the descending
 * order. Every backend sorts by this total order, so all give the same bytes. */
#include "ref/ref_ops.h"

#include <math.h>
#include <string.h>

bool ct_ref_argsort_supported(const ct_tensor *op) {
    const ct_tensor *a = op->src[0];
    if (!a || a->type != CT_TYPE_F32 || op->type != CT_TYPE_I32 || a->ne[0] > INT32_MAX) return false;
    if (op->ne[1] != a->ne[1] || op->ne[2] != a->ne[2] || op->ne[3] != a->ne[3]) return false;
    if (op->op == CT_OP_ARGSORT)
        return op->ne[0] == a->ne[0] && (op->op_params[0] == CT_SORT_ORDER_ASC || op->op_params[0] == CT_SORT_ORDER_DESC);
    return op->op == CT_OP_TOP_K && op->ne[0] <= a->ne[0];
}

/* Whether index i goes before index j. */
static bool before(const float *x, int32_t i, int32_t j, bool desc) {
    const float a = x[i], b = x[j];
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b) ? i < j : !isnan(a);
    if (a != b) return desc ? a > b : a < b;
    return i < j;
}

ct_status ct_ref_argsort(ct_tensor *dst) {
    const ct_tensor *a = dst->src[0];
    const int64_t n = a->ne[0];
    const bool desc = dst->op == CT_OP_TOP_K || dst->op_params[0] == CT_SORT_ORDER_DESC;
    float *x = ct_ref_alloc_floats(n > 0 ? 3 * n : 1, dst);
    if (!x) return ct_last_status();
    int32_t *idx = (int32_t *)(void *)(x + n), *tmp = idx + n;
    ct_status st = CT_OK;
    for (int64_t i3 = 0; i3 < a->ne[3] && st == CT_OK; i3++)
        for (int64_t i2 = 0; i2 < a->ne[2] && st == CT_OK; i2++)
            for (int64_t i1 = 0; i1 < a->ne[1] && st == CT_OK; i1++) {
                if ((st = ct_ref_read_row(a, i1, i2, i3, x)) != CT_OK) break;
                for (int64_t i = 0; i < n; i++) idx[i] = (int32_t)i;
                /* bottom-up merge sort: runs of w merged pairwise into tmp, then swapped */
                for (int64_t w = 1; w < n; w *= 2) {
                    for (int64_t lo = 0; lo < n; lo += 2 * w) {
                        const int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
                        int64_t p = lo, q = mid, o = lo;
                        while (p < mid && q < hi) tmp[o++] = before(x, idx[q], idx[p], desc) ? idx[q++] : idx[p++];
                        while (p < mid) tmp[o++] = idx[p++];
                        while (q < hi) tmp[o++] = idx[q++];
                    }
                    int32_t *s = idx;
                    idx = tmp;
                    tmp = s;
                }
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) memcpy(ct_ref_addr(dst, i0, i1, i2, i3), &idx[i0], sizeof idx[i0]);
            }
    ct_free(x);
    return st;
}
