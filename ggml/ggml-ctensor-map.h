/*
 * ggml <-> ctensor enum tables for the ggml plugin (ggml/README.md).
 *
 * Types: ctensor.h keeps ggml's type ids, and the static asserts below check every
 * id the plugin maps, so a renumbering on either side fails the build instead of
 * mistranslating. Ops: the numbers differ (ggml has far more ops), so ops go
 * through an explicit table.
 */
#ifndef GGML_CTENSOR_MAP_H
#define GGML_CTENSOR_MAP_H

#include "ctensor.h"
#include "ggml.h"

/* X(name): a type both sides know, by the same spelling. */
#define CTG_TYPES(X) \
    X(F32) X(F16) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q8_1) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K) \
    X(Q8_K) X(IQ2_XXS) X(IQ2_XS) X(IQ3_XXS) X(IQ1_S) X(IQ4_NL) X(IQ3_S) X(IQ2_S) X(IQ4_XS) X(I8) X(I16) \
    X(I32) X(I64) X(F64) X(IQ1_M) X(BF16) X(TQ1_0) X(TQ2_0)

#define CTG_TYPE_ASSERT(n) \
    _Static_assert((int)GGML_TYPE_##n == (int)CT_TYPE_##n, "ggml and ctensor disagree on the id of " #n);
CTG_TYPES(CTG_TYPE_ASSERT)
#undef CTG_TYPE_ASSERT

/* Entries hold ct type + 1 so that 0 (the default) means "ctensor has no such type"
 * (MXFP4, NVFP4, Q1_0, Q2_0 in this ggml). */
static const int ctg_type_table[GGML_TYPE_COUNT] = {
#define CTG_TYPE_ENTRY(n) [GGML_TYPE_##n] = CT_TYPE_##n + 1,
    CTG_TYPES(CTG_TYPE_ENTRY)
#undef CTG_TYPE_ENTRY
};

static inline bool ctg_map_type(enum ggml_type t, ct_type *out) {
    if ((int)t < 0 || (int)t >= GGML_TYPE_COUNT || ctg_type_table[t] == 0) return false;
    *out = (ct_type)(ctg_type_table[t] - 1);
    return true;
}

/* ggml op -> ctensor op, for every op of ctensor's list (CT_OP_LIST in ctensor.h):
 * each has a ggml op of the same name (a new ctensor op without one fails to build
 * here). Entries hold ct op + 1 so that 0 means "ctensor has no such op". */
static const int ctg_op_table[GGML_OP_COUNT] = {
#define CTG_OP_ENTRY(id, name, is_view, family) [GGML_OP_##id] = CT_OP_##id + 1,
    CT_OP_LIST(CTG_OP_ENTRY)
#undef CTG_OP_ENTRY
};

/* CT_OP_COUNT: no counterpart. */
static inline ct_op ctg_map_op(enum ggml_op op) {
    if ((int)op < 0 || (int)op >= GGML_OP_COUNT || ctg_op_table[op] == 0) return CT_OP_COUNT;
    return (ct_op)(ctg_op_table[op] - 1);
}

/* The ops that only describe memory: nothing to compute, any device can hold them. */
static inline bool ctg_is_view_op(enum ggml_op op) { return ct_op_is_view(ctg_map_op(op)); }

_Static_assert(GGML_MAX_DIMS == CT_MAX_DIMS, "ggml and ctensor differ in the number of dims");
_Static_assert(GGML_MAX_OP_PARAMS == CT_MAX_OP_PARAMS, "ggml and ctensor differ in op_params size");

#endif /* GGML_CTENSOR_MAP_H */
