/* Internal to the tensors-and-graphs layer and the op constructors: the context
 * arena, the graph layout, and helpers that build tensors and describe them in
 * error messages. Backends may read struct ct_graph; they change nothing here. */
#ifndef CT_TENSOR_INTERNAL_H
#define CT_TENSOR_INTERNAL_H

#include "ctensor.h"
#include "core/internal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A tensor as carved from an arena: the public struct first (so a ct_tensor *
 * converts back), then the creation-order link. */
typedef struct ct_tensor_obj {
    ct_tensor tensor;
    struct ct_tensor_obj *next;
} ct_tensor_obj;

struct ct_context {
    uint8_t *mem;          /* arena base, CT_MEM_ALIGN-aligned; NULL when mem_size is 0 */
    size_t mem_size;
    size_t used;           /* always a multiple of CT_MEM_ALIGN */
    bool mem_owned;
    bool no_alloc;
    ct_tensor_obj *first;
    ct_tensor_obj *last;
};

/* One frame of the explicit depth-first stack: the tensor and the next source
 * to visit (0..CT_MAX_SRC-1 are src[], CT_MAX_SRC is view_src). */
typedef struct ct_graph_frame {
    ct_tensor *tensor;
    int next;
} ct_graph_frame;

struct ct_graph {
    int size;              /* capacity of nodes and of leafs */
    int n_nodes;
    int n_leafs;
    ct_tensor **nodes;
    ct_tensor **leafs;
    ct_tensor **hash;      /* open addressing set of nodes and leafs; NULL in a view */
    size_t hash_size;      /* a power of two, at least 2 * (2 * size) */
    ct_graph_frame *stack; /* 2 * size frames: every frame is a distinct tensor bound for the graph */
    bool is_view;
};

/* The slot of t, a node or leaf of g (not a view graph), in g's hash. */
size_t ct_graph_slot(const ct_graph *g, const ct_tensor *t);
/* How many nodes of g take each of its tensors as a source (each src[] entry counts) or as
 * their view source, by slot (ct_graph_slot): uses holds g->hash_size counts. For what a
 * backend may fuse: a view graph (ct_graph_view) does not know the consumers outside it
 * and returns false. */
bool ct_graph_count_uses(const ct_graph *g, int32_t *uses);

/* Carves size bytes (rounded up to CT_MEM_ALIGN) from the arena, or records
 * CT_OUT_OF_MEMORY naming func and what and returns NULL. */
void *ct_context_alloc(ct_context *ctx, size_t size, const char *func, const char *what);

/* Appends t (which must lie in ctx's arena, zeroed) to the creation-order list. */
void ct_context_link(ct_context *ctx, ct_tensor_obj *obj);

/* "role" or "role \"name\"", for messages: ct_tensor_label(a, "src").s. The
 * array lives until the end of the full expression that calls it. */
typedef struct ct_label {
    char s[CT_MAX_NAME + 32];
} ct_label;
ct_label ct_tensor_label(const ct_tensor *t, const char *role);

/* Validates type and shape (ne >= 0, ne[0] a multiple of the block size, the
 * element count fitting int64 and the byte size fitting INT64_MAX) and computes
 * contiguous strides and the byte size. Records a message naming func and role. */
ct_status ct_tensor_layout(const char *func, const char *role, ct_type type, const int64_t ne[CT_MAX_DIMS],
                           size_t nb[CT_MAX_DIMS], size_t *nbytes);

/* Bytes spanned by a tensor of this type, shape and strides (ct_nbytes), false
 * on overflow. */
bool ct_tensor_span(ct_type type, const int64_t ne[CT_MAX_DIMS], const size_t nb[CT_MAX_DIMS], size_t *nbytes);

/* A new contiguous tensor with data (unless the context is no_alloc): checks,
 * then one arena allocation for header and data. */
ct_tensor *ct_tensor_new_impl(ct_context *ctx, const char *func, ct_type type, const int64_t ne[CT_MAX_DIMS]);

/* A view of a: shape ne and strides nb (nb[0] included), starting offset bytes
 * into a. Checks that it lies inside the root's bytes; op VIEW, src[0] = a,
 * op_params = offset. */
ct_tensor *ct_view_impl(ct_context *ctx, const char *func, ct_tensor *a, const int64_t ne[CT_MAX_DIMS],
                        const size_t nb[CT_MAX_DIMS], size_t offset);

/* t's name becomes "<a's name><suffix>", truncated to CT_MAX_NAME-1; unchanged
 * when a has no name. */
void ct_tensor_name_from(ct_tensor *t, const ct_tensor *a, const char *suffix);

/* NULL checks shared by the op constructors: ctx, then each tensor whose role is
 * non-NULL ("ct_get_rows: indices (b) is NULL"). */
ct_status ct_op_check_args(const char *func, const ct_context *ctx, const ct_tensor *a, const char *role_a,
                           const ct_tensor *b, const char *role_b, const ct_tensor *c, const char *role_c);

/* The type pairs and row shapes a CPY/DUP/CONT node can be computed for on any
 * backend (whole blocks per row; float<->float, float->quantized, dequantizable->float). */
bool ct_cpy_types_supported(const ct_tensor *op);

/* The types and shapes a GET_ROWS node can be computed for on any backend
 * (dequantizable or I32 rows, I32 indices, block rows packed along dim 0). */
bool ct_get_rows_types_supported(const ct_tensor *op);

/* The types and shapes a SET_ROWS node can be computed for on any backend
 * (F32/F16 rows into a type ct_quantize_row writes, I64/I32 indices, whole
 * blocks packed along dim 0). */
bool ct_set_rows_types_supported(const ct_tensor *op);

/* A ROPE node any backend can compute: F32/F16 src0 and dst of one shape, I32
 * positions and F32 freq factors long enough, a known mode, n_dims, n_offs and
 * sections as the constructors allow (src/ops/rope.c). */
bool ct_rope_node_valid(const ct_tensor *op);
/* Whether a REPEAT, CONCAT, PAD, ARANGE or ACC node is one the constructors build (types,
 * shapes, op_params, ACC's window inside a): the check every backend's support starts
 * from (src/ops/shape.c). */
bool ct_shape_node_valid(const ct_tensor *op);

/* A GLU node one of the GLU constructors builds: F32/F16 a (and b, of a's type and shape)
 * with packed rows, dst of a's type, half a's ne0 (fused) or a's shape (split), a known
 * sub-op, swapped 0 or 1 (0 when split). Any strides for dims 1..3 (src/ops/glu.c). */
bool ct_glu_node_valid(const ct_tensor *op);

/* The K and V types FLASH_ATTN_EXT takes (src/ops/flash_attn.c). */
bool ct_flash_attn_kv_type(ct_type t);
/* A FLASH_ATTN_EXT node any backend can compute: the constructor's shapes and types
 * (src/ops/flash_attn.c), sinks F32 of n_head, a known precision. */
bool ct_flash_attn_node_valid(const ct_tensor *op);
/* The type whose precision ggml-cpu rounds Q to before the K dot products of op (F32: none):
 * K's vec_dot type (F16, BF16, Q8_0 for the quantized ones), except F32 where ggml-cpu's tiled
 * path runs (F32 or F16 K of V's type and n_q >= 64). */
ct_type ct_flash_attn_q_type(const ct_tensor *op);

/* op_params as float bits. */
void ct_tensor_set_param_f32(ct_tensor *t, int i, float value);

/* Whether an ADD/SUB/MUL/DIV/ADD1 node is one ct_add..ct_add1 build: (f32, f32), (f16, f16)
 * or (f16, f32) sources, dst of src0's type and shape, src1 repeating over src0 (ADD1:
 * one element). Any strides. Every backend's check starts from it. */
bool ct_binary_node_valid(const ct_tensor *op);

/* Whether a MUL_MAT_ID node is one ct_mul_mat_id builds (shapes, I32 ids, F32 dst of
 * [as.ne1, ids.ne0, b.ne2, 1]; src types any valid id); and an ADD_ID node one ct_add_id
 * builds with F32 or F16 a and b of one type (dst of a's type and shape). Each backend's
 * check starts from them. */
bool ct_mul_mat_id_node_valid(const ct_tensor *op);
bool ct_add_id_node_valid(const ct_tensor *op);

#endif
