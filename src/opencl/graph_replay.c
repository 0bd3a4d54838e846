/* The command trace of a compute, and its replay as a recorded command buffer.
 *
 * Encoders never call the driver: the argument cursor and dispatch (encoder.h) append each
 * kernel argument and launch to be->trace, and the compute submits the trace once
 * it is whole. A trace is plain bytes, so two computes that would send the driver
 * the same kernels, argument values (cl_mem handles, offsets, sizes, scalars) and
 * work sizes have equal traces. A trace seen before is recorded, on its second
 * sight, into a cl_khr_command_buffer, and from then on run by one
 * clEnqueueCommandBufferKHR instead of a clSetKernelArg per argument and a
 * clEnqueueNDRangeKernel per launch (the driver's cost of a launch is most of a
 * small node's; NVIDIA's OpenCL has no command buffers, so there every
 * trace is played). A cl_mem handle equal to one in a recording is the same object
 * unless the object was released in between, which bumps ct_ocl_mem_epoch and
 * retires every recording taken before. */
#include "opencl_internal.h"

#include <stdio.h>
#include <string.h>

_Atomic uint64_t ct_ocl_mem_epoch;

/* A record: this head, then for ARG the value padded to 8 bytes, for LAUNCH the
 * global and local sizes as 6 uint64. Fixed-width fields, no padding. */
enum { REC_ARG = 1, REC_ARG_LOCAL = 2, REC_LAUNCH = 3 };
typedef struct rec_head {
    uint32_t kind;
    uint32_t kernel;
    uint32_t arg_index;
    uint32_t node;
    uint64_t size; /* ARG / ARG_LOCAL: the argument's size */
} rec_head;
_Static_assert(sizeof(rec_head) == 24, "rec_head must have no padding");

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static unsigned char *trace_reserve(ct_ocl_backend *be, size_t n) {
    ct_ocl_trace *t = &be->trace;
    if (t->out_of_memory) return NULL;
    if (t->cap - t->len < n) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap - t->len < n) {
            if (cap > SIZE_MAX / 2) cap = SIZE_MAX;
            else cap *= 2;
        }
        unsigned char *p = ct_malloc(cap);
        if (!p) {
            t->out_of_memory = true;
            return NULL;
        }
        if (t->len) memcpy(p, t->bytes, t->len);
        ct_free(t->bytes);
        t->bytes = p;
        t->cap = cap;
    }
    unsigned char *at = t->bytes + t->len;
    t->len += n;
    return at;
}

static void trace_reset(ct_ocl_backend *be) {
    be->trace.len = 0;
    be->trace.n_launches = 0;
    be->trace.out_of_memory = false;
    be->trace.replayable = true;
    memset(be->trace_args_set, 0, sizeof be->trace_args_set);
}

static ct_status trace_out_of_memory(const ct_ocl_backend *be) {
    return ct_ocl_fail(be, CT_OUT_OF_MEMORY, "out of host memory recording the compute's commands");
}

ct_status ct_ocl_trace_arg(ct_ocl_backend *be, ct_ocl_kernel_id id, cl_uint index, size_t size, const void *value) {
    const size_t body = value ? pad8(size) : 0;
    unsigned char *p = trace_reserve(be, sizeof(rec_head) + body);
    if (!p) return trace_out_of_memory(be);
    rec_head h = {value ? REC_ARG : REC_ARG_LOCAL, (uint32_t)id, index, (uint32_t)be->node_index, size};
    memcpy(p, &h, sizeof h);
    if (value) {
        memcpy(p + sizeof h, value, size);
        memset(p + sizeof h + size, 0, body - size);
    }
    if (index < 64 && index < be->kernel_nargs[id]) be->trace_args_set[id] |= (uint64_t)1 << index;
    else be->trace.replayable = false; /* the driver will refuse it; recording indexes by it */
    return CT_OK;
}

ct_status ct_ocl_trace_launch(ct_ocl_backend *be, ct_ocl_kernel_id id, const size_t global[3],
                              const size_t local[3]) {
    unsigned char *p = trace_reserve(be, sizeof(rec_head) + 6 * sizeof(uint64_t));
    if (!p) return trace_out_of_memory(be);
    rec_head h = {REC_LAUNCH, (uint32_t)id, 0, (uint32_t)be->node_index, 0};
    uint64_t sizes[6] = {global[0], global[1], global[2], local[0], local[1], local[2]};
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, sizes, sizeof sizes);
    /* A launch that relies on an argument set by an earlier compute would replay
     * whatever a later one left there: such a trace is only ever played. */
    const cl_uint nargs = be->kernel_nargs[id];
    const uint64_t all = nargs >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << nargs) - 1;
    if (nargs > 64 || (be->trace_args_set[id] & all) != all) be->trace.replayable = false;
    be->trace.n_launches++;
    return CT_OK;
}

void ct_ocl_trace_discard(ct_ocl_backend *be) { trace_reset(be); }

/* ---- running a trace ---------------------------------------------------------- */

static ct_status node_fail_cl(ct_ocl_backend *be, ct_graph *graph, uint32_t node, const char *call,
                              const char *kernel, cl_int err, const char *extra) {
    if (graph && node < (uint32_t)ct_graph_n_nodes(graph)) {
        ct_ocl_set_where(be, ct_graph_node(graph, (int)node), (int)node);
    }
    char where[sizeof be->where];
    return ct_fail(CT_DEVICE_ERROR, "%s: %s(%s%s) failed: %s (%d)", ct_ocl_where(be, where, sizeof where), call,
                   kernel, extra, ct_ocl_error_name(err), err);
}

/* One record of the trace at p: its head, and its value (ARG) or sizes (LAUNCH). */
typedef struct rec_view {
    rec_head h;
    const unsigned char *value;
    size_t global[3], local[3];
} rec_view;

static const unsigned char *rec_next(const unsigned char *p, rec_view *r) {
    memcpy(&r->h, p, sizeof r->h);
    p += sizeof r->h;
    r->value = NULL;
    if (r->h.kind == REC_LAUNCH) {
        uint64_t s[6];
        memcpy(s, p, sizeof s);
        for (int d = 0; d < 3; d++) {
            r->global[d] = (size_t)s[d];
            r->local[d] = (size_t)s[3 + d];
        }
        return p + sizeof s;
    }
    if (r->h.kind == REC_ARG_LOCAL) return p;
    r->value = p;
    return p + pad8((size_t)r->h.size);
}

static ct_status set_arg_from(ct_ocl_backend *be, ct_graph *graph, cl_kernel k, const rec_view *r) {
    cl_int err = clSetKernelArg(k, r->h.arg_index, (size_t)r->h.size, r->value);
    if (err == CL_SUCCESS) return CT_OK;
    char idx[16];
    snprintf(idx, sizeof idx, ", %u", r->h.arg_index);
    return node_fail_cl(be, graph, r->h.node, "clSetKernelArg", ct_ocl_kernel_table[r->h.kernel].name, err, idx);
}

/* Whether the backend's kernel already holds argument r (be->arg_memo); if not, and r is
 * small enough, remembers it as set (the caller sets it, forgetting it on failure). */
static bool arg_held(ct_ocl_backend *be, const rec_view *r) {
    if (r->h.arg_index >= CT_OCL_ARG_MEMO_ARGS || r->h.size > CT_OCL_ARG_MEMO_BYTES || r->h.size == 0) return false;
    ct_ocl_arg_memo *m = &be->arg_memo[r->h.kernel][r->h.arg_index];
    const bool local = r->value == NULL;
    if (m->size == r->h.size && m->local == local && (local || memcmp(m->value, r->value, (size_t)r->h.size) == 0))
        return true;
    m->size = (uint32_t)r->h.size;
    m->local = local;
    if (!local) memcpy(m->value, r->value, (size_t)r->h.size);
    return false;
}

/* Sends the trace to the queue: an argument, a launch, in the encoders' order; an
 * argument the kernel object already holds is not set again. */
static ct_status play(ct_ocl_backend *be, ct_graph *graph) {
    const uint64_t epoch = atomic_load(&ct_ocl_mem_epoch);
    if (be->arg_memo_epoch != epoch) {
        memset(be->arg_memo, 0, sizeof be->arg_memo);
        be->arg_memo_epoch = epoch;
    }
    const unsigned char *p = be->trace.bytes, *end = p + be->trace.len;
    while (p < end) {
        rec_view r;
        p = rec_next(p, &r);
        cl_kernel k = be->kernels[r.h.kernel];
        if (r.h.kind != REC_LAUNCH) {
            if (arg_held(be, &r)) {
                be->n_args_skipped++;
                continue;
            }
            ct_status st = set_arg_from(be, graph, k, &r);
            if (st != CT_OK) {
                memset(be->arg_memo, 0, sizeof be->arg_memo); /* what the kernel holds is unknown now */
                return st;
            }
            continue;
        }
        cl_event *event = be->profile.on ? ct_ocl_profile_slot(be, r.h.kernel) : NULL;
        cl_int err = clEnqueueNDRangeKernel(be->queue, k, 3, NULL, r.global, r.local, 0, NULL, event);
        if (err != CL_SUCCESS) {
            if (event) be->profile.n--; /* no event came */
            return node_fail_cl(be, graph, r.h.node, "clEnqueueNDRangeKernel", ct_ocl_kernel_table[r.h.kernel].name,
                                err, "");
        }
    }
    return CT_OK;
}

/* Records the trace into cb: each launch on a kernel object of its own, created
 * for it and given the arguments the trace has set by then (a recorded command
 * must not see later clSetKernelArg calls; PoCL 3.1's do, and its clCloneKernel
 * crashes on kernels with __local arrays), and ordered after the launch before it
 * (a command buffer's commands are otherwise unordered). The kernels go to
 * kernels[*n_kernels]; current has CT_OCL_K_COUNT * 64 slots, zeroed. */
static ct_status record_trace(ct_ocl_backend *be, ct_graph *graph, ct_cl_cmdbuf cb, cl_kernel *kernels,
                              size_t *n_kernels, const unsigned char **current) {
    const unsigned char *p = be->trace.bytes, *end = p + be->trace.len;
    ct_cl_sync_point last = 0;
    bool have_last = false;
    while (p < end) {
        const unsigned char *at = p;
        rec_view r;
        p = rec_next(p, &r);
        const uint32_t id = r.h.kernel;
        if (r.h.kind != REC_LAUNCH) {
            current[id * 64 + r.h.arg_index] = at; /* < 64: a replayable trace sets no other */
            continue;
        }
        const char *kname = ct_ocl_kernel_table[id].name;
        cl_program program = NULL; /* the one the backend's kernel comes from (there may be two) */
        cl_int err = clGetKernelInfo(be->kernels[id], CL_KERNEL_PROGRAM, sizeof program, &program, NULL);
        if (err != CL_SUCCESS) return node_fail_cl(be, graph, r.h.node, "clGetKernelInfo", kname, err, "");
        cl_kernel k = CT_OCL_CREATE("clCreateKernel", &err, clCreateKernel(program, kname, &err));
        if (err != CL_SUCCESS || !k) return node_fail_cl(be, graph, r.h.node, "clCreateKernel", kname, err, "");
        kernels[(*n_kernels)++] = k;
        for (cl_uint i = 0; i < be->kernel_nargs[id]; i++) {
            rec_view a;
            rec_next(current[id * 64 + i], &a);
            ct_status st = set_arg_from(be, graph, k, &a);
            if (st != CT_OK) return st;
        }
        const ct_cl_sync_point wait = last; /* not the output's own storage */
        err = be->dev->cmdbuf.ndrange(cb, NULL, NULL, k, 3, NULL, r.global, r.local, have_last ? 1 : 0,
                                      have_last ? &wait : NULL, &last, NULL);
        if (err != CL_SUCCESS) return node_fail_cl(be, graph, r.h.node, "clCommandNDRangeKernelKHR", kname, err, "");
        have_last = true;
    }
    return CT_OK;
}

static void release_kernels(cl_kernel *kernels, size_t n) {
    for (size_t i = 0; i < n; i++) clReleaseKernel(kernels[i]);
    ct_free(kernels);
}

static void slot_clear(ct_ocl_backend *be, ct_ocl_replay_slot *s) {
    if (s->cb) be->dev->cmdbuf.release(s->cb);
    release_kernels(s->kernels, s->n_kernels);
    ct_free(s->bytes);
    memset(s, 0, sizeof *s);
}

/* Drops the recordings taken before a cl_mem release: besides never being replayed,
 * a driver's recorded commands may keep the memory they name allocated. */
static void slots_sweep(ct_ocl_backend *be, uint64_t epoch) {
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) {
        ct_ocl_replay_slot *s = &be->replays[i];
        if (s->bytes && s->epoch != epoch) slot_clear(be, s);
    }
}

/* The slot holding this trace (swept first), or NULL. */
static ct_ocl_replay_slot *slot_find(ct_ocl_backend *be) {
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) {
        ct_ocl_replay_slot *s = &be->replays[i];
        if (s->bytes && s->len == be->trace.len && memcmp(s->bytes, be->trace.bytes, s->len) == 0) return s;
    }
    return NULL;
}

/* Remembers the trace in the empty or least recently used slot (nothing when
 * out of memory: the trace is then just not replayed). */
static void slot_insert(ct_ocl_backend *be, uint64_t epoch) {
    ct_ocl_replay_slot *victim = &be->replays[0];
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) {
        ct_ocl_replay_slot *s = &be->replays[i];
        if (!s->bytes) {
            victim = s;
            break;
        }
        if (s->last_use < victim->last_use) victim = s;
    }
    unsigned char *copy = ct_malloc(be->trace.len);
    if (!copy) return;
    memcpy(copy, be->trace.bytes, be->trace.len);
    slot_clear(be, victim);
    victim->bytes = copy;
    victim->len = be->trace.len;
    victim->epoch = epoch;
    victim->last_use = ++be->replay_clock;
}

/* Records the trace into s's new command buffer; false (the slot then plays) when
 * the driver refuses any step or host memory runs out. */
static bool record(ct_ocl_backend *be, ct_graph *graph, ct_ocl_replay_slot *s) {
    const ct_cl_cmdbuf_api *api = &be->dev->cmdbuf;
    cl_kernel *kernels = ct_malloc(be->trace.n_launches * sizeof *kernels);
    const unsigned char **current = ct_calloc((size_t)CT_OCL_K_COUNT * 64, sizeof *current);
    size_t n_kernels = 0;
    cl_int err = CL_SUCCESS;
    ct_cl_cmdbuf cb = NULL;
    const ct_status saved_status = ct_last_status();
    char saved_message[512];
    snprintf(saved_message, sizeof saved_message, "%s", ct_last_error());
    if (kernels && current) {
        cb = CT_OCL_CREATE("clCreateCommandBufferKHR", &err, api->create(1, &be->queue, NULL, &err));
        if (err != CL_SUCCESS) cb = NULL;
    }
    ct_status st = CT_OUT_OF_MEMORY;
    if (cb) {
        st = record_trace(be, graph, cb, kernels, &n_kernels, current);
        if (st == CT_OK && (err = api->finalize(cb)) != CL_SUCCESS) {
            st = ct_fail(CT_DEVICE_ERROR, "%s: clFinalizeCommandBufferKHR failed: %s (%d)", be->dev->name,
                         ct_ocl_error_name(err), err);
        }
    } else if (kernels && current) {
        st = ct_fail(CT_DEVICE_ERROR, "%s: clCreateCommandBufferKHR failed: %s (%d)", be->dev->name,
                     ct_ocl_error_name(err), err);
    }
    ct_free(current);
    if (st != CT_OK) {
        ct_log(CT_LOG_DEBUG, "opencl: recording a command buffer failed (%s); the graph is played",
               st == CT_OUT_OF_MEMORY ? "out of host memory" : ct_last_error());
        /* not the caller's error: theirs, from before, stays */
        if (saved_status == CT_OK) ct_clear_error();
        else ct_fail(saved_status, "%s", saved_message);
        if (cb) api->release(cb);
        release_kernels(kernels, n_kernels);
        return false;
    }
    s->cb = cb;
    s->kernels = kernels;
    s->n_kernels = n_kernels;
    return true;
}

ct_status ct_ocl_trace_submit(ct_ocl_backend *be, ct_graph *graph, bool may_replay) {
    ct_status st = CT_OK;
    if (be->trace.out_of_memory) { /* an encoder went on after an append failed: never run a truncated trace */
        st = trace_out_of_memory(be);
        trace_reset(be);
        return st;
    }
    const uint64_t epoch = atomic_load(&ct_ocl_mem_epoch);
    slots_sweep(be, epoch); /* every submit, so freed memory is let go of soon whatever is computed */
    if (be->trace.len == 0) return CT_OK;
    if (be->flag_used && be->flag_dirty) {
        /* before every kernel of the trace, so before the first that takes the flag */
        const cl_int zero = 0;
        cl_int err = clEnqueueFillBuffer(be->queue, be->error_flag, &zero, sizeof zero, 0, sizeof zero, 0, NULL, NULL);
        if (err != CL_SUCCESS) {
            trace_reset(be);
            be->where_node = NULL; /* the compute's, not the last node's */
            return ct_ocl_fail_cl(be, "clEnqueueFillBuffer(error flag)", err);
        }
        be->flag_dirty = false;
    }
    if (may_replay && be->replay_enabled && be->trace.replayable &&
        be->trace.n_launches >= CT_OCL_REPLAY_MIN_LAUNCHES) {
        ct_ocl_replay_slot *s = slot_find(be);
        if (s && !s->cb && !s->record_failed) {
            s->record_failed = !record(be, graph, s);
            if (!s->record_failed) be->n_recorded++;
        }
        if (s && s->cb) {
            s->last_use = ++be->replay_clock;
            cl_event *event = be->profile.on ? ct_ocl_profile_slot(be, CT_OCL_K_COUNT) : NULL;
            cl_int err = be->dev->cmdbuf.enqueue(1, &be->queue, s->cb, 0, NULL, event);
            if (event && err != CL_SUCCESS) be->profile.n--;
            if (err == CL_SUCCESS) {
                be->n_replayed++;
                trace_reset(be);
                return CT_OK;
            }
            /* kept: the failure may be transient; this compute plays */
            ct_log(CT_LOG_DEBUG, "opencl: %s: clEnqueueCommandBufferKHR failed: %s (%d); played instead",
                   be->dev->name, ct_ocl_error_name(err), err);
        } else if (!s) {
            slot_insert(be, epoch);
        }
    }
    /* Args without a launch (an encoder that failed after setting some) still go
     * to the driver, whose errors the caller should see. */
    st = play(be, graph);
    be->n_played++;
    trace_reset(be);
    return st;
}

void ct_ocl_replay_free(ct_ocl_backend *be) {
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) slot_clear(be, &be->replays[i]);
    ct_free(be->trace.bytes);
    be->trace.bytes = NULL;
    be->trace.cap = 0;
    trace_reset(be);
}
