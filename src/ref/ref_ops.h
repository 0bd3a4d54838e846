/* The REF backend's op functions: plain, single-threaded, scalar code written
 * independently of src/cpu, so that the CPU backend can be tested against it.
 * Every element is addressed as i0*nb0 + i1*nb1 + i2*nb2 + i3*nb3 (i0 a block
 * index for block types); rows convert through float one block at a time with
 * ct_dequantize_row / ct_quantize_row. No fast paths.
 *
 * Op functions return CT_OK or a status recorded with ct_fail, whose message
 * starts with "ct_backend_graph_compute" (the public entry they run under).
 */
#ifndef CT_REF_OPS_H
#define CT_REF_OPS_H

#include "ctensor.h"
#include "core/internal.h"

/* Name of the function errors are reported under. */
#define CT_REF_FN "ct_backend_graph_compute"

/* The tensor's name, or role ("src0", "dst") when it has none. */
const char *ct_ref_label(const ct_tensor *t, const char *role);

/* Address of element (or block, for block types) (i0, i1, i2, i3). */
static inline char *ct_ref_addr(const ct_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *)t->data + (size_t)i0 * t->nb[0] + (size_t)i1 * t->nb[1] + (size_t)i2 * t->nb[2] +
           (size_t)i3 * t->nb[3];
}

/* Reads row (i1, i2, i3) of t, ne[0] elements of any dequantizable type, as floats. */
ct_status ct_ref_read_row(const ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, float *out);
/* Writes ne[0] floats into row (i1, i2, i3) of t, of any quantizable type. */
ct_status ct_ref_write_row(ct_tensor *t, int64_t i1, int64_t i2, int64_t i3, const float *in);
/* A scratch array of n floats through the allocator hooks; NULL + CT_OUT_OF_MEMORY recorded. */
float *ct_ref_alloc_floats(int64_t n, const ct_tensor *node);

/* Each family of the op list (CT_OP_LIST) has, in src/ref/ref_<family>.c, an
 * exact support check and the op function, declared here from the list:
 *   bool ct_ref_<family>_supported(const ct_tensor *op);
 *   ct_status ct_ref_<family>(ct_tensor *dst);
 * The op table (ref_backend.c) names them; op functions are called only for a
 * node their check accepted. */
#define CT_REF_DECLARE_FAMILY(id, name, is_view, family) CT_REF_DECLARE_FAMILY_##is_view(family)
#define CT_REF_DECLARE_FAMILY_0(family)                       \
    bool ct_ref_##family##_supported(const ct_tensor *op); \
    ct_status ct_ref_##family(ct_tensor *dst);
#define CT_REF_DECLARE_FAMILY_1(family) /* a view op: nothing to compute */
CT_OP_LIST(CT_REF_DECLARE_FAMILY)

#endif
