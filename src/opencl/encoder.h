/* The encoder layer: what an op family's encoder (src/opencl/encoders/) uses to turn a
 * graph node into kernel launches, and the families' entry points.
 *
 * An encoder gets a ct_ocl_enc, the state of the node being encoded:
 *   - tensors are resolved once per node (ct_ocl_enc_tensor: the cl_mem holding the
 *     tensor, its offset there and the address bits its alignment is judged from);
 *   - a kernel's arguments are set through a cursor (ct_ocl_enc_kernel starts a kernel,
 *     each ct_ocl_arg_* sets the next argument), and launched by ct_ocl_enc_dispatch;
 *   - the first failure sticks in enc->st: every later call does nothing, so an encoder
 *     sets its arguments without an error ladder and returns enc->st at its end.
 * Nothing reaches the driver while encoding: arguments and launches go to the compute's
 * trace (graph_replay.c), submitted once the graph is encoded. An encoder sets every
 * argument of a kernel before each launch, never waits, and reports how many graph
 * nodes it consumed (1, or more where it fuses: encoders/norm.c, docs/BACKENDS.md "Fusion").
 *
 * Invariants supports_op established (types, shapes, strides, alignments, kernels the
 * device has) are CT_ASSERTs in the encoders, not statuses; what depends on where the
 * caller put the tensors (a tensor straddling two views of a mapped buffer) is a status. */
#ifndef CT_OPENCL_ENCODER_H
#define CT_OPENCL_ENCODER_H

#include "opencl_internal.h"

/* A tensor as kernels see it. */
typedef struct ct_ocl_tensor_ref {
    cl_mem mem;         /* the view of its buffer holding all its bytes */
    cl_ulong offset;    /* of its first byte in mem */
    cl_ulong addr_bits; /* ct_ocl_addr_bits: the low bits decide its alignment */
} ct_ocl_tensor_ref;

/* The most distinct tensors a node's encoder resolves (dst, src0, src1, and room). */
enum { CT_OCL_ENC_MAX_TENSORS = 6 };

struct ct_ocl_enc {
    ct_ocl_backend *be;
    ct_graph *graph;
    int node_index;        /* of the node being encoded */
    ct_status st;          /* the node's first failure; sticks until the next node */
    const int32_t *uses;   /* the graph's use counts by hash slot; NULL: nothing is fused */
    ct_ocl_kernel_id kid;  /* the kernel whose arguments the cursor sets */
    cl_uint arg;           /* its next argument's index */
    int n_resolved;
    const ct_tensor *resolved_tensor[CT_OCL_ENC_MAX_TENSORS];
    ct_ocl_tensor_ref resolved[CT_OCL_ENC_MAX_TENSORS];
    unsigned work_takes; /* ct_ocl_enc_work calls in this compute */
    /* What a MUL_MAT left in the work memory (encoders/mul_mat.c): its src1 in the form
     * `form` at `offset`, made for node `node` at the work_takes'th take of the memory. A
     * later MUL_MAT with the same src1 and form takes it as it is while no node took the
     * work memory since and none wrote src1's bytes. */
    struct {
        const ct_tensor *src;
        int node, form;
        unsigned take;
        size_t offset;
    } work_y;
};

/* Starts node i of enc->graph: clears the error and the resolved tensors. */
void ct_ocl_enc_begin_node(ct_ocl_enc *enc, int i);

/* Records status with ct_ocl_fail's message unless a failure is already recorded;
 * returns enc->st. */
ct_status ct_ocl_enc_fail(ct_ocl_enc *enc, ct_status status, const char *fmt, ...) CT_PRINTF(3, 4);

/* t resolved (once per node; role, "src0" or "dst", names it in the error), or NULL
 * with the error recorded. */
const ct_ocl_tensor_ref *ct_ocl_enc_tensor(ct_ocl_enc *enc, const ct_tensor *t, const char *role);
/* The address bits of t (ct_ocl_addr_bits), 0 with the error recorded when t is not
 * in one view of a buffer of this device. */
static inline cl_ulong ct_ocl_enc_addr_bits(ct_ocl_enc *enc, const ct_tensor *t, const char *role) {
    const ct_ocl_tensor_ref *r = ct_ocl_enc_tensor(enc, t, role);
    return r ? r->addr_bits : 0;
}

/* The largest power of two up to cap that divides addr and every stride of nb. */
static inline unsigned ct_ocl_alignment(cl_ulong addr, const size_t nb[4], unsigned cap) {
    cl_ulong bits = addr | nb[0] | nb[1] | nb[2] | nb[3];
    unsigned a = 1;
    while (a < cap && (bits & a) == 0) a *= 2;
    return a;
}

/* The kernel's CL_KERNEL_WORK_GROUP_SIZE on this device, creating the kernel on first
 * use (1, with the error recorded, when it cannot be created). */
size_t ct_ocl_enc_max_wg(ct_ocl_enc *enc, ct_ocl_kernel_id id);
/* min(want, the kernel's max, the device's dim-0 max), at least 1. */
size_t ct_ocl_enc_clamp_wg(ct_ocl_enc *enc, ct_ocl_kernel_id id, size_t want);

/* The node after the one being encoded, when an encoder may compute it in the same
 * kernel from t (the node being encoded, or one the encoder took already): fusion is on,
 * that node is t's only consumer in the graph (in one source slot), and t is no view, no
 * view's source and not flagged CT_TENSOR_FLAG_OUTPUT, so t's bytes need not be written.
 * NULL otherwise. next counts from the node being encoded (1: the one right after it). */
ct_tensor *ct_ocl_enc_fusable_next(const ct_ocl_enc *enc, const ct_tensor *t, int next);

/* Whether x's and y's bytes may share memory: intersecting byte ranges in buffers whose
 * addresses compare (ct_buffers_share_addresses: one buffer, or caller memory both wrap). */
bool ct_ocl_may_overlap(const ct_tensor *x, const ct_tensor *y);
/* Whether a fused kernel that writes out while it reads in may race: their bytes overlap
 * other than element for element (one start, type, shape and strides), so one work-group
 * could overwrite what another has yet to read. The unfused nodes would be right there: an
 * allocator may place a result over an input that is dead once the first node ran. */
bool ct_ocl_fused_write_clashes(const ct_tensor *out, const ct_tensor *in);

/* ---- the argument cursor -------------------------------------------------------- */

/* The next arguments are kernel id's, from index 0 (created on first use). */
void ct_ocl_enc_kernel(ct_ocl_enc *enc, ct_ocl_kernel_id id);
/* Raw bytes as the next argument (a scalar, a struct the kernel takes by value). */
void ct_ocl_arg_bytes(ct_ocl_enc *enc, const void *value, size_t size);
static inline void ct_ocl_arg_i32(ct_ocl_enc *enc, int32_t v) {
    const cl_int x = v;
    ct_ocl_arg_bytes(enc, &x, sizeof x);
}
static inline void ct_ocl_arg_u32(ct_ocl_enc *enc, uint32_t v) {
    const cl_uint x = v;
    ct_ocl_arg_bytes(enc, &x, sizeof x);
}
static inline void ct_ocl_arg_i64(ct_ocl_enc *enc, int64_t v) {
    const cl_long x = v;
    ct_ocl_arg_bytes(enc, &x, sizeof x);
}
static inline void ct_ocl_arg_u64(ct_ocl_enc *enc, uint64_t v) {
    const cl_ulong x = v;
    ct_ocl_arg_bytes(enc, &x, sizeof x);
}
static inline void ct_ocl_arg_f32(ct_ocl_enc *enc, float v) {
    const cl_float x = v;
    ct_ocl_arg_bytes(enc, &x, sizeof x);
}
static inline void ct_ocl_arg_mem(ct_ocl_enc *enc, cl_mem m) { ct_ocl_arg_bytes(enc, &m, sizeof m); }
/* Two arguments: the tensor's cl_mem (__global T *) and its byte offset (ulong). */
void ct_ocl_arg_tensor(ct_ocl_enc *enc, const ct_tensor *t, const char *role);
/* The pair of a tensor the kernel never reads: a NULL buffer, offset 0. */
void ct_ocl_arg_null_tensor(ct_ocl_enc *enc);
/* Two arguments: the error flag (__global int *) and this node's code (int), which
 * the kernel passes to CT_RAISE_ERROR. */
void ct_ocl_arg_flag(ct_ocl_enc *enc);
/* The error-flag pair of a kernel launched without indices (it never reads them). */
void ct_ocl_arg_no_flag(ct_ocl_enc *enc);
/* __local memory of bytes. */
void ct_ocl_arg_local(ct_ocl_enc *enc, size_t bytes);

/* Metal's dispatchThreadgroups for the cursor's kernel: groups[d] work-groups of local[d]
 * items (global = groups * local), traced. Nothing is traced when a group count is 0. A
 * local size above the kernel's or device's limit is CT_INVALID_ARGUMENT. */
void ct_ocl_enc_dispatch(ct_ocl_enc *enc, const size_t groups[3], const size_t local[3]);

/* be->work, sized before encoding (ct_ocl_work_reserve) to what every node asked; counted
 * in enc->work_takes. */
cl_mem ct_ocl_enc_work(ct_ocl_enc *enc, size_t bytes);

/* ---- op families (src/opencl/encoders/) ----------------------------------------- */

/* Each family: supported() is exact, and says no where a kernel it would use is gated
 * off; encode() encodes node (one of its ops, supported) and sets *n_nodes. */
bool ct_ocl_get_rows_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_get_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
bool ct_ocl_set_rows_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_set_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* CPY, DUP, CONT */
bool ct_ocl_cpy_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_cpy(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
bool ct_ocl_mul_mat_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_mul_mat(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* The work memory MUL_MAT's encoder will take for node (0 when none). */
ct_status ct_ocl_mul_mat_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes);
/* MUL_MAT's tiled kernels, which MUL_MAT_ID's grouped path runs too: from
 * CT_OCL_MM_MIN_NE11 src1 rows (each weight read then serves enough of them for the tiles
 * to pay), work-groups of CT_OCL_MM_WG. */
enum { CT_OCL_MM_MIN_NE11 = 16, CT_OCL_MM_WG = 256 };
typedef struct ct_ocl_mm_tiles {
    ct_ocl_kernel_id id;
    size_t bm, bn;  /* outputs a work-group computes: bm src0 rows x bn src1 rows */
    size_t wg;      /* its work-items */
    size_t scratch; /* its local memory, bytes */
} ct_ocl_mm_tiles;
/* The tiled kernel for ne01 x ne11 outputs: mmtc (tensor cores, CT_MMTC_BM x CT_MMTC_BN)
 * where the device runs it, else mm (64x64 tiles), or mm128 (128x128) where both are large
 * enough and the device runs it; false where the device runs none of them. */
bool ct_ocl_mm_tiles_pick(ct_ocl_enc *enc, ct_ocl_kernel_id mmtc, ct_ocl_kernel_id mm, ct_ocl_kernel_id mm128,
                          size_t ne01, size_t ne11, ct_ocl_mm_tiles *t);
/* An F16 src1 b widened into packed F32 rows (row (i13 * ne12 + i12) * ne11 + i11 of ne10
 * floats) at y_offset of work, exactly as the CPU widens it. */
void ct_ocl_mm_widen_f16_y(ct_ocl_enc *enc, const ct_tensor *b, cl_mem work, size_t y_offset);
/* MUL_MAT_ID, ADD_ID */
bool ct_ocl_mul_mat_id_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_mul_mat_id(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* The work memory MUL_MAT_ID's encoder will take for node (0 when none). */
ct_status ct_ocl_mul_mat_id_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes);
/* NORM, RMS_NORM, L2_NORM, GROUP_NORM */
bool ct_ocl_norm_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_norm(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* The ADD add with the RMS_NORM + MUL after it in one kernel where they fuse (norm.c); false,
 * with nothing encoded and no failure, where they do not. */
bool ct_ocl_encode_add_norm(ct_ocl_enc *enc, ct_tensor *add, int *n_nodes);
/* SUM_ROWS, MEAN */
bool ct_ocl_sum_rows_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_sum_rows(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* The element-wise engine (encoders/unary.c) of UNARY, SCALE and the math ops: kernel id
 * over a 1-d launch of one element a work-item, taking (src0, dst, ct_unary_args) with op
 * and p[4] as given. The check: F32 or F16 src0 and dst of one type and shape, int dims,
 * every start and stride a multiple of the element size, the kernel available. */
bool ct_ocl_elementwise_supported(const ct_ocl_device *dev, const ct_tensor *op, ct_ocl_kernel_id kid);
ct_status ct_ocl_encode_elementwise(ct_ocl_enc *enc, ct_tensor *node, ct_ocl_kernel_id kid, int32_t op,
                                    const float p[4]);
/* UNARY */
bool ct_ocl_unary_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_unary(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* SCALE */
bool ct_ocl_scale_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_scale(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* ADD, SUB, MUL, DIV, ADD1 */
bool ct_ocl_binary_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_binary(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* SOFT_MAX */
bool ct_ocl_soft_max_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_soft_max(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
bool ct_ocl_rope_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_rope(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* GLU */
bool ct_ocl_glu_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_glu(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* SUM, CUMSUM, ARGMAX */
bool ct_ocl_reduce_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_reduce(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* ARGSORT, TOP_K; the work memory their encoder takes for node */
bool ct_ocl_argsort_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_argsort(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
ct_status ct_ocl_argsort_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes);
/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU, FILL (encoders/math.c) */
bool ct_ocl_math_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_math(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* REPEAT, CONCAT, PAD, ARANGE, ACC (encoders/shape.c) */
bool ct_ocl_shape_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_shape(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);

/* FLASH_ATTN_EXT */
bool ct_ocl_flash_attn_supported(const ct_ocl_device *dev, const ct_tensor *op);
ct_status ct_ocl_encode_flash_attn(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* The work memory FLASH_ATTN_EXT's encoder will take for node (0 when none). */
ct_status ct_ocl_flash_attn_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes);

/* ---- before encoding -------------------------------------------------------------- */

/* The work memory node's encoder will take (0 for most ops). */
ct_status ct_ocl_node_work_bytes(ct_ocl_enc *enc, const ct_tensor *node, size_t *bytes);
/* Grows be->work to at least bytes. Called before a compute records anything, so no
 * trace names the old one. */
ct_status ct_ocl_work_reserve(ct_ocl_backend *be, size_t bytes);

#endif
