/* The OpenCL backend's internal interface, shared by its infrastructure
 * (device.c, library.c, buffer.c, backend.c, graph_replay.c, encoder.c) and the op
 * families' encoders (encoders/, through encoder.h, which says how to write one).
 *
 * Adding an op family: its kernels in kernels.def (one line each, with its gate and
 * program), its .cl file in library.c's source list, its encoder in encoders/ with
 * supported() and encode() declared in encoder.h. Index-checking kernels take the error
 * flag pair (ct_ocl_arg_flag) and on a bad index write nothing and call
 * CT_RAISE_ERROR(err, code).
 *
 * What every kernel source sees (library.c prepends it; do not redefine):
 *   #pragma OPENCL FP_CONTRACT OFF
 *   CT_HAS_SUBGROUPS, CT_HAS_FP16, CT_HAS_FP64, CT_HAS_INT_DOT: 0 or 1, matching
 *     the device's features (the extension pragmas are already enabled);
 *   CT_FP16_CONVERT: 1 when the half type's conversions are exact (has_fp16_exact);
 *   CT_HALF_BY_SCALE: 1 when halves become floats by scaling their bits (has_half_scale);
 *   CT_HAS_NV_DP4A: 1 when NVIDIA inline PTX (dp4a, prmt) builds and runs right;
 *   CT_HAS_NV_WARP: 1 when NVIDIA inline PTX shfl.sync and bar.warp.sync build;
 *   CT_CORRECTLY_ROUNDED_DIV: 1 when the program is built with
 *     -cl-fp32-correctly-rounded-divide-sqrt. When it is 0, '/' and sqrt() of
 *     float are NOT correctly rounded (OpenCL allows 2.5 ulp), so quantizers that
 *     must match the CPU bit for bit have to use a correctly rounded software
 *     division under #if !CT_CORRECTLY_ROUNDED_DIV;
 *   CT_RAISE_ERROR(err, code): records code in the flag unless one is already set.
 * No fast-math options are ever passed. A kernel takes a tensor as two arguments,
 * (__global char *base, ulong offs): see ct_ocl_arg_tensor.
 */
#ifndef CT_OPENCL_INTERNAL_H
#define CT_OPENCL_INTERNAL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
/* clCreateCommandQueue: the one queue constructor every platform (1.2 included) has. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif
/* cl* names are macros for pointers loaded at run time (no link against libOpenCL). */
#include "cl_api.h"

#include "core/internal.h"
#include "ctensor-backend-impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Every clCreate* call goes through CT_OCL_CREATE and every clBuildProgram
 * through CT_OCL_BUILD, so the reliability tests can fail the n-th one
 * (ct_fault_cl_should_fail) as if the driver had run out of memory. */
#define CT_OCL_CREATE(what, errp, call) \
    (ct_fault_cl_should_fail(what, __FILE__, __LINE__) ? (*(errp) = CL_OUT_OF_HOST_MEMORY, NULL) : (call))
#define CT_OCL_BUILD(call) \
    (ct_fault_cl_should_fail("clBuildProgram", __FILE__, __LINE__) ? CL_OUT_OF_HOST_MEMORY : (call))

/* ---- kernel table ---------------------------------------------------------- */

/* Device features a kernel may need (the gate in kernels.def). */
enum {
    CT_OCL_FEAT_SUBGROUPS = 1u << 0, /* cl_khr_subgroups (or OpenCL C 3.0 __opencl_c_subgroups) */
    CT_OCL_FEAT_FP16 = 1u << 1,      /* cl_khr_fp16 half arithmetic (vload_half/vstore_half need nothing) */
    CT_OCL_FEAT_FP64 = 1u << 2,      /* cl_khr_fp64 */
    CT_OCL_FEAT_INT_DOT = 1u << 3,   /* cl_khr_integer_dot_product */
    CT_OCL_FEAT_MMA = 1u << 4,       /* warp matrix products: PTX mma.sync (probed), or their emulation */
};

/* The programs kernels come from (the program column of kernels.def). */
typedef enum ct_ocl_program_id {
    CT_OCL_PROGRAM_LIBRARY, /* every kernel source (library.c) */
    CT_OCL_PROGRAM_MVQ,     /* the 8-bit mat-vec kernels, register-capped where NVIDIA's compiler takes it */
    CT_OCL_PROGRAM_COUNT
} ct_ocl_program_id;

typedef enum ct_ocl_kernel_id {
#define CT_OCL_KERNEL(id, name, gate, program) CT_OCL_K_##id,
#include "kernels.def"
    CT_OCL_K_COUNT
} ct_ocl_kernel_id;

/* The families of typed kernels (kernels.def). */
typedef enum ct_ocl_family {
#define CT_OCL_FAMILY(family) CT_OCL_FAMILY_##family,
#include "kernels.def"
    CT_OCL_FAMILY_COUNT
} ct_ocl_family;

/* library.c: family's kernel for type (kernels.def's typed lines), or CT_OCL_K_COUNT. */
ct_ocl_kernel_id ct_ocl_kernel_for(ct_ocl_family family, ct_type type);

typedef struct ct_ocl_kernel_info {
    const char *name; /* the __kernel function */
    unsigned gate;    /* CT_OCL_FEAT_* bits the device must have */
    ct_ocl_program_id program;
} ct_ocl_kernel_info;

extern const ct_ocl_kernel_info ct_ocl_kernel_table[CT_OCL_K_COUNT];

/* The kernel sources (src/opencl/kernels), embedded at build time (embed.cmake). */
typedef struct ct_ocl_source_file {
    const char *name; /* "common.cl" */
    const char *text; /* after a #line directive naming the file */
    size_t len;
} ct_ocl_source_file;
extern const ct_ocl_source_file ct_ocl_source_files[];
extern const size_t ct_ocl_source_file_count;
/* library.c: the embedded file name, or false. */
bool ct_ocl_find_source(const char *name, const char **text, size_t *len);
/* The helper files every program starts with, in order (tests build them alone). */
const char *const *ct_ocl_helper_sources(size_t *n);

/* ---- device context (one per OpenCL device) -------------------------------- */

typedef enum ct_ocl_program_origin {
    CT_OCL_PROGRAM_NONE = 0,
    CT_OCL_PROGRAM_SOURCE, /* compiled from the embedded source */
    CT_OCL_PROGRAM_CACHE,  /* loaded from the on-disk binary cache */
} ct_ocl_program_origin;

typedef struct ct_ocl_device {
    ct_device dev;              /* the public device; dev.context points here */
    ct_buffer_type buft;        /* "OpenCL<n>": device memory */
    ct_buffer_type buft_mapped; /* "OpenCL<n>_Mapped": caller memory (buffer_from_host_ptr) */

    int index; /* the n of "OpenCL<n>", counted over every platform */
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue; /* set/get/memset/clear; OpenCL API calls are thread-safe */

    /* Guards refcount, the programs, kernel_wg_size and the test hooks. */
    pthread_mutex_t lock;
    int refcount; /* the registration, every backend and every buffer hold one */

    /* Capabilities, read once at acquire. */
    ct_device_type type;
    unsigned features; /* CT_OCL_FEAT_* */
    bool has_subgroups, has_fp16, has_fp64, has_int_dot;
    bool has_nv_dp4a; /* NVIDIA's compiler takes inline PTX dp4a (probed: no extension names it) */
    bool has_nv_warp; /* NVIDIA's compiler takes inline PTX shfl.sync and bar.warp.sync (probed) */
    bool has_nv_mma;  /* NVIDIA's compiler takes inline PTX mma.sync m16n8k16 and cvt to f16x2/bf16x2 (probed) */
    bool mma_emulate; /* CT_OPENCL_MMA_EMULATE=1: the tensor-core kernels built on their portable emulation */
    bool has_nv_compiler_options; /* cl_nv_compiler_options: -cl-nv-maxrregcount and friends */
    bool has_correct_div_sqrt; /* CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT in CL_DEVICE_SINGLE_FP_CONFIG */
    bool has_cmdbuf;           /* cl_khr_command_buffer, usable with our queue: cmdbuf is filled */
    ct_cl_cmdbuf_api cmdbuf;
    bool has_fp16_exact;       /* the fp16 conversions the kernels would use are exact, as CL_DEVICE_HALF_FP_CONFIG
                                  says or a probe found (kernels: CT_FP16_CONVERT); set when the library
                                  is first loaded (ct_ocl_library_load) */
    bool has_half_scale;       /* halves to float by scaling their bits: exact (a probe) and chosen for
                                  the device (ct_ocl_probe_half_scale; kernels: CT_HALF_BY_SCALE); set
                                  with has_fp16_exact */
    int cl_c_version;          /* OpenCL C version, major*100 + minor*10: 110, 120, 200, 300 */
    size_t max_work_group_size;
    size_t max_work_item_sizes[3];
    size_t local_mem;  /* CL_DEVICE_LOCAL_MEM_SIZE in bytes */
    size_t max_size;   /* CL_DEVICE_MAX_MEM_ALLOC_SIZE, lowered by env CT_OPENCL_MAX_SIZE */
    size_t global_mem; /* CL_DEVICE_GLOBAL_MEM_SIZE */
    size_t alignment;  /* buffer type alignment: CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes, at least 128 */
    char name[16];     /* "OpenCL0" */
    char mapped_name[32];
    char description[288]; /* "<platform name>: <device name>" */
    char device_name[128];
    char platform_name[128];
    char driver_version[64];

    atomic_size_t allocated; /* bytes of device buffers this process holds */

    /* Built lazily, once, under lock. */
    cl_program program;
    ct_ocl_program_origin program_origin;
    int program_builds;                     /* successful loads (source or cache), for tests */
    cl_program program_mvq; /* with cl_nv_compiler_options: the 8-bit mat-vec kernels again, register-capped
                               (library.c); NULL elsewhere or when it did not build */
    size_t kernel_wg_size[CT_OCL_K_COUNT];  /* CL_KERNEL_WORK_GROUP_SIZE; 0 until queried */
    char *test_build_options;               /* test hook: appended to the build options */
    const char *test_mvq_options; /* test hook (a static string): build program_mvq on any device, with
                                     these options in place of the register cap (kernel_wg_size keeps
                                     the limits of the program each kernel first came from) */
    unsigned rows8_min_log2; /* jobs of >= 2^this work-items at 8 units take them (encoders/rows.h), and
                                quantizing ones at 4 blocks a team: 20; tests lower it to reach
                                ct_rows8 and ct_quant_rows_wide with small tensors */
} ct_ocl_device;

static inline ct_ocl_device *ct_ocl_device_of(const ct_device *dev) { return (ct_ocl_device *)dev->context; }

/* True when the device has every feature the kernel's gate names. */
static inline bool ct_ocl_kernel_available(const ct_ocl_device *dev, ct_ocl_kernel_id id) {
    return (unsigned)id < CT_OCL_K_COUNT && (ct_ocl_kernel_table[id].gate & ~dev->features) == 0;
}

/* device.c: every device of every platform, each acquired (refcount 1). Returns
 * the number found (0 without a platform); *out is a ct_malloc'd array. */
size_t ct_ocl_devices_enumerate(ct_ocl_device ***out);
void ct_ocl_device_retain(ct_ocl_device *dev);
/* The switch environment variable name sets: if_unset when it is unset or empty, off for
 * "0", on for any other value (CT_OPENCL_FUSION, _GRAPH_REPLAY, _PROFILE, _MMA_EMULATE). */
bool ct_ocl_env_switch(const char *name, bool if_unset);
/* Drops one reference; the last frees the program, queue, context and struct. */
void ct_ocl_device_release(ct_ocl_device *dev);

/* library.c: builds dev->program if it is NULL (from the disk cache when a valid
 * entry exists), and where the device takes NVIDIA's compiler options
 * dev->program_mvq. The caller holds dev->lock. fn names the public function for
 * messages. A build error is CT_DEVICE_ERROR with the compiler's log. */
ct_status ct_ocl_library_load(ct_ocl_device *dev, const char *fn);
/* device.c: whether the fp16 conversions the kernels would use are exact on dev (its
 * CL_DEVICE_HALF_FP_CONFIG, else a small program run on its queue); false on any failure. */
bool ct_ocl_probe_fp16_exact(ct_ocl_device *dev);
/* device.c: whether the kernels take halves to float by scaling their bits on dev (exact
 * there, by a small program on its queue, and not an NVIDIA platform); false on any failure. */
bool ct_ocl_probe_half_scale(ct_ocl_device *dev);
/* Test hooks: drop the program so the next backend rebuilds it (existing
 * backends keep theirs); add build options (NULL clears). */
void ct_ocl_device_reset_program(ct_ocl_device *dev);
ct_status ct_ocl_device_set_test_build_options(ct_ocl_device *dev, const char *options);
/* The directory the program cache uses now, or false when none is configured. */
bool ct_ocl_cache_dir(char *out, size_t n);

/* ---- buffers --------------------------------------------------------------- */

/* One cl_mem covering [data, data + size) of the buffer's address range. */
typedef struct ct_ocl_view {
    char *data;
    size_t size;
    cl_mem mem;
} ct_ocl_view;

typedef struct ct_ocl_buffer {
    ct_ocl_device *dev;
    bool mapped; /* host memory wrapped in overlapping views; else one device allocation */
    bool owned;  /* the host memory of a mapped buffer is ours to free */
    char *base;  /* a device buffer's placeholder address (never dereferenced), or the caller's pointer */
    size_t size;
    size_t n_views;
    ct_ocl_view *views;
} ct_ocl_buffer;

/* buffer.c: fills dev->buft and dev->buft_mapped. */
void ct_ocl_buffer_types_init(ct_ocl_device *dev);
bool ct_ocl_is_own_buft(const ct_ocl_device *dev, const ct_buffer_type *buft);
/* The driver ran out of memory (a driver may allocate a buffer at its first use). */
static inline bool ct_ocl_is_oom(cl_int err) {
    return err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY;
}
/* The flags of every device-memory cl_mem of dev (buffers, work memory, the error flag). */
cl_mem_flags ct_ocl_device_mem_flags(const ct_ocl_device *dev);
ct_status ct_ocl_buffer_from_host_ptr(ct_device *dev, void *ptr, size_t size, size_t max_tensor_size,
                                      ct_buffer **buffer);
/* Non-blocking write/read of [offset, offset + size) of t (in buffer, one of the
 * device's) queued on q, a backend's queue: every overlapping view written, each byte
 * read from the first view holding it, as the blocking transfers do. *n_queued is
 * raised per command queued, also when a later one fails. fn names the public function. */
ct_status ct_ocl_buffer_write_async(const char *fn, ct_buffer *buffer, cl_command_queue q, const ct_tensor *t,
                                    const void *data, size_t offset, size_t size, unsigned *n_queued);
ct_status ct_ocl_buffer_read_async(const char *fn, ct_buffer *buffer, cl_command_queue q, const ct_tensor *t,
                                   void *data, size_t offset, size_t size, unsigned *n_queued);
/* The first view wholly containing [data, data + nbytes), or NULL: a tensor
 * straddling two views of a mapped buffer has no single cl_mem a kernel could take. */
const ct_ocl_view *ct_ocl_buffer_find_view(const ct_ocl_buffer *buf, const void *data, size_t nbytes);

/* Bumped before the library releases a cl_mem a kernel may have taken (a buffer's
 * views, MUL_MAT's work memory): a recorded command buffer holding the handle can
 * then no longer be told apart from one holding a new object at the same address. */
extern _Atomic uint64_t ct_ocl_mem_epoch;

/* ---- command trace and graph replay (graph_replay.c) ----------------------- */

/* A compute's kernel arguments and launches in encoding order, as plain bytes
 * (no padding), so that two computes with the same commands compare equal. */
typedef struct ct_ocl_trace {
    unsigned char *bytes;
    size_t len, cap;
    size_t n_launches;
    bool out_of_memory; /* an append failed: the compute fails with CT_OUT_OF_MEMORY */
    bool replayable;    /* every launch found all its kernel's arguments set in this trace */
} ct_ocl_trace;

/* One recorded graph: its trace, and once seen twice, its command buffer. */
typedef struct ct_ocl_replay_slot {
    unsigned char *bytes; /* NULL: empty slot */
    size_t len;
    uint64_t epoch;    /* ct_ocl_mem_epoch when the trace was taken */
    ct_cl_cmdbuf cb;   /* NULL until recorded */
    cl_kernel *kernels; /* the kernel object of each recorded launch, with its arguments */
    size_t n_kernels;
    bool record_failed; /* the driver refused to record it: played from now on */
    uint64_t last_use;
} ct_ocl_replay_slot;

#define CT_OCL_REPLAY_SLOTS 4
/* Traces with fewer launches are always played: replay saves little there. */
#define CT_OCL_REPLAY_MIN_LAUNCHES 2

/* The arguments play() remembers per kernel (the first ones, up to this many bytes each:
 * buffers, offsets, scalars; argument structs are set every launch). */
#define CT_OCL_ARG_MEMO_ARGS 12
#define CT_OCL_ARG_MEMO_BYTES 16
typedef struct ct_ocl_arg_memo {
    uint32_t size; /* 0: unknown */
    bool local;    /* __local memory of size bytes */
    unsigned char value[CT_OCL_ARG_MEMO_BYTES];
} ct_ocl_arg_memo;

/* Kernel profiling (profile.c, CT_OPENCL_PROFILE): the launches of the compute under
 * way (an event and a kernel id each; the id CT_OCL_K_COUNT is a replayed command buffer)
 * and the sums since the backend was made. */
#define CT_OCL_PROFILE_EVENTS 1024
#define CT_OCL_PROFILE_KINDS (CT_OCL_K_COUNT + 1)
typedef struct ct_ocl_profile {
    bool on;
    int n;
    cl_event events[CT_OCL_PROFILE_EVENTS];
    uint16_t kernel_of[CT_OCL_PROFILE_EVENTS];
    uint64_t launches[CT_OCL_PROFILE_KINDS], device_ns[CT_OCL_PROFILE_KINDS];
    /* per compute, summed: wall (entry to return), the host's submit (the driver calls),
     * the device's span (first kernel's start to the last one's end) and busy time (the
     * kernels' own; below the span where the device waited between kernels) */
    uint64_t computes, wall_ns, submit_ns, span_ns, busy_ns;
    uint64_t lost; /* launches the driver gave no times for */
    uint64_t compute_start_ns, compute_busy_ns;
    cl_ulong compute_first, compute_last;
} ct_ocl_profile;

/* ---- backend instance ------------------------------------------------------ */

typedef struct ct_ocl_backend ct_ocl_backend;
/* An op family's encoder (encoder.h): encodes node, sets *n_nodes to the nodes it took. */
typedef struct ct_ocl_enc ct_ocl_enc;
typedef ct_status (*ct_ocl_encode_fn)(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes);
/* A test hook's encoder, with the one-call-a-step helpers below. */
typedef ct_status (*ct_ocl_test_encode_fn)(ct_ocl_backend *be, ct_tensor *node);

struct ct_ocl_backend {
    ct_backend base; /* base.context points here */
    ct_ocl_device *dev;
    cl_command_queue queue;            /* in-order */
    /* The programs this instance creates its kernels from (retained at init: a program
     * rebuilt later serves later instances), NULL where not built. */
    cl_program programs[CT_OCL_PROGRAM_COUNT];
    cl_kernel kernels[CT_OCL_K_COUNT]; /* created on first use (ct_ocl_kernel_get); setting args is per instance */
    size_t kernel_wg[CT_OCL_K_COUNT];  /* CL_KERNEL_WORK_GROUP_SIZE (the device's kernel_wg_size) once created */
    /* One cl_int: 0, or the code of the first node whose kernel saw a bad index. A
     * compute resets and reads it only when one of its kernels takes it (GET_ROWS,
     * SET_ROWS), and resets it only when it may be nonzero (flag_dirty). */
    cl_mem error_flag;
    bool flag_used;  /* this compute passed the flag to a kernel */
    bool flag_dirty; /* the flag may hold a nonzero code (also before its first reset) */
    /* Device scratch for encoders (MUL_MAT's quantized src1), shared by every node: the
     * queue is in order, so one node's use ends before the next node's kernels start.
     * Sized before a compute encodes anything (ct_ocl_work_reserve). */
    cl_mem work;
    size_t work_size;
    ct_graph *graph; /* the graph being computed (for messages), else NULL */
    /* What the encoders asked for (ct_ocl_set_arg, ct_ocl_dispatch), submitted once
     * per compute (per node with an abort callback) by ct_ocl_trace_submit. */
    ct_ocl_trace trace;
    cl_uint kernel_nargs[CT_OCL_K_COUNT];   /* CL_KERNEL_NUM_ARGS */
    uint64_t trace_args_set[CT_OCL_K_COUNT]; /* bit i: argument i set in this trace */
    bool replay_enabled; /* the device records command buffers and CT_OPENCL_GRAPH_REPLAY is not 0 */
    /* What play() last gave each small argument of each kernel object: the driver keeps
     * arguments on the kernel between launches (a launch takes them when enqueued), so an
     * argument set to the value it holds needs no clSetKernelArg. Valid while
     * ct_ocl_mem_epoch is arg_memo_epoch (a released cl_mem's handle may come back for
     * another object); n_args_skipped counts the calls saved, for tests. */
    ct_ocl_arg_memo arg_memo[CT_OCL_K_COUNT][CT_OCL_ARG_MEMO_ARGS];
    uint64_t arg_memo_epoch, n_args_skipped;
    /* Fusion (docs/BACKENDS.md, "Fusion"): on unless CT_OPENCL_FUSION=0; the graph's use
     * counts by hash slot (ct_graph_count_uses), counted once per compute into uses (grown
     * to uses_cap); n_fused counts the nodes encoders took beyond the first, for tests. */
    bool fusion_enabled;
    int32_t *uses;
    size_t uses_cap;
    uint64_t n_fused;
    ct_ocl_replay_slot replays[CT_OCL_REPLAY_SLOTS];
    uint64_t replay_clock;
    /* Counts, for tests and the log: traces played command by command, command
     * buffers recorded, and replays of a recorded one. */
    uint64_t n_played, n_recorded, n_replayed;
    /* Async transfers (ct_backend_tensor_set/get_async): commands queued on queue without
     * waiting, and whether any was queued since the queue was last waited for. n_waits
     * counts those waits (a compute's end, a synchronize that had something to wait for). */
    uint64_t n_async_queued, n_waits;
    bool async_pending;
    ct_abort_callback abort_callback;
    void *abort_data;
    /* The node being encoded: its graph index; the node messages name (where_node,
     * where_index: ct_ocl_set_where), else the prefix in where. */
    int node_index;
    const ct_tensor *where_node;
    int where_index;
    char where[CT_MAX_NAME + 64];
    ct_ocl_test_encode_fn test_encoder; /* test hook: when set, encodes every non-view node */
    ct_ocl_profile profile;
};

/* graph_replay.c. Appends to be->trace (CT_OUT_OF_MEMORY when host memory runs
 * out, which also marks the trace). */
ct_status ct_ocl_trace_arg(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, size_t size, const void *value);
ct_status ct_ocl_trace_launch(ct_ocl_backend *be, ct_ocl_kernel_id id, const size_t global[3],
                              const size_t local[3]);
/* Runs what be->trace holds and empties it: one recorded command buffer when
 * may_replay and the same trace came before (recorded on its second sight), else
 * each argument and launch through the queue. Errors name the node of the
 * failing command (graph gives the names). Does not wait. */
ct_status ct_ocl_trace_submit(ct_ocl_backend *be, ct_graph *graph, bool may_replay);
/* profile.c: a monotonic clock; the
 * event of the next launch (which waits for the events taken when CT_OCL_PROFILE_EVENTS
 * are); a compute's start and end (after its wait); the log of the sums (backend free). */
uint64_t ct_ocl_now_ns(void);
cl_event *ct_ocl_profile_slot(ct_ocl_backend *be, uint32_t id);
void ct_ocl_profile_begin(ct_ocl_backend *be);
void ct_ocl_profile_end(ct_ocl_backend *be);
void ct_ocl_profile_report(ct_ocl_backend *be);
/* Empties the trace without running it (an encoder failed). */
void ct_ocl_trace_discard(ct_ocl_backend *be);
/* Releases the recorded command buffers and the trace's memory (backend free). */
void ct_ocl_replay_free(ct_ocl_backend *be);
/* backend.c: messages from now name node i of the compute's graph
 * ("ct_backend_graph_compute: node 'name' (OP)"), formatted only when one is made. */
void ct_ocl_set_where(ct_ocl_backend *be, const ct_tensor *node, int i);
/* The message prefix: the node's (formatted into buf) or be->where. */
const char *ct_ocl_where(const ct_ocl_backend *be, char *buf, size_t n);

/* ---- encoder helpers (encoder.c; the node being encoded is be->node_index) ---- */

/* Records status with the message "<ct_ocl_where>: <fmt...>". */
ct_status ct_ocl_fail(const ct_ocl_backend *be, ct_status status, const char *fmt, ...) CT_PRINTF(3, 4);
/* CT_DEVICE_ERROR "<ct_ocl_where>: <call> failed: CL_OUT_OF_RESOURCES (-5)". */
ct_status ct_ocl_fail_cl(const ct_ocl_backend *be, const char *call, cl_int err);
/* "CL_INVALID_VALUE", ...; "CL_UNKNOWN_ERROR" otherwise. */
const char *ct_ocl_error_name(cl_int err);

/* The view holding t's bytes and t's offset in it; role ("src0", "dst") names
 * it in the error (a tensor straddling views of a mapped buffer). */
ct_status ct_ocl_tensor_mem(const ct_ocl_backend *be, const ct_tensor *t, const char *role, cl_mem *mem,
                            cl_ulong *offset);
/* The bits to judge the alignment of t's first byte from, as kernels see it (only the
 * low bits matter; every encoder and supported() test takes alignment from here, never
 * from the offset in the view: a buffer over caller memory may start at any address).
 * For a tensor not yet in one of dev's buffers, its view offset (buffers place roots
 * at their alignment); compute asks again once it is placed. */
cl_ulong ct_ocl_addr_bits(const ct_ocl_device *dev, const ct_tensor *t);
/* t's first byte, as kernels see it, is a multiple of a (a power of two). */
static inline bool ct_ocl_start_aligned(const ct_ocl_device *dev, const ct_tensor *t, size_t a) {
    return ct_ocl_addr_bits(dev, t) % a == 0;
}

/* Kernel id of this instance, created on first use from its program (kernels.def);
 * CT_UNSUPPORTED when the device lacks its gate. */
ct_status ct_ocl_kernel_get(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_kernel *out);
/* CL_KERNEL_WORK_GROUP_SIZE of that kernel on this device (1 when it cannot be created). */
size_t ct_ocl_kernel_max_wg(ct_ocl_backend *be, ct_ocl_kernel_id id);
/* min(want, the kernel's max, the device's dim-0 max), at least 1. */
size_t ct_ocl_clamp_wg(ct_ocl_backend *be, ct_ocl_kernel_id id, size_t want);

/* One call a step, for test encoders (op encoders use encoder.h's cursor). */
ct_status ct_ocl_set_arg(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, size_t size, const void *value);
#define CT_OCL_SET_ARG(be, id, index, var) ct_ocl_set_arg((be), (id), (index), sizeof(var), &(var))
ct_status ct_ocl_set_arg_tensor(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, const ct_tensor *t,
                                const char *role);
ct_status ct_ocl_set_arg_error_flag(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index);
ct_status ct_ocl_dispatch(ct_ocl_backend *be, ct_ocl_kernel_id id, const size_t groups[3], const size_t local[3]);

#endif
