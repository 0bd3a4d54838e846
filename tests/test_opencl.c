/* The OpenCL backend's infrastructure: device enumeration and properties,
 * device and mapped buffers (views across max_size), the kernel library and
 * its disk cache (corrupt entries, an unwritable directory, build errors),
 * graph compute with the error flag and the abort callback, and many threads
 * creating backends at once; without an OpenCL library or platform, zero
 * devices and a working CPU backend. Exits 77 (skipped) without an OpenCL device. */
#include "testutil.h"

#include "ctensor-backend-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CT_HAVE_OPENCL

int main(void) {
    tu_init("test_opencl");
    printf("SKIP: ctensor was built without OpenCL (CT_OPENCL=OFF)\n");
    return 77;
}

#else

#include "opencl/opencl_internal.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SKIP = 77, MAX_SIZE = 1 << 20 };

static char cache_dir[64];

/* ---- helpers --------------------------------------------------------------- */

static ct_context *new_ctx(void) {
    ct_context_params p = {.mem_size = 64 * ct_tensor_overhead() + ct_graph_overhead(16), .no_alloc = true};
    return ct_context_new(p);
}

/* The one .clbin file of the kernel library in the cache directory, or false (with
 * cl_nv_compiler_options the mat-vec kernels' program has one of its own: "-mvq-"). */
static bool find_cache_file(char *out, size_t n) {
    DIR *d = opendir(cache_dir);
    if (!d) return false;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *dot = strrchr(e->d_name, '.');
        const size_t len = strlen(e->d_name), tail = strlen("-lib-0123456789abcdef.clbin");
        if (dot && strcmp(dot, ".clbin") == 0 && len >= tail && strncmp(e->d_name + len - tail, "-lib-", 5) == 0) {
            snprintf(out, n, "%s/%s", cache_dir, e->d_name);
            found++;
        }
    }
    closedir(d);
    return found == 1;
}

static void remove_cache_dir(void) {
    DIR *d = opendir(cache_dir);
    if (!d) return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(cache_dir);
}

/* The test encoder: checks node->src[1] (I32) against node->src[0]->ne[1]. */
static int encoded;
static ct_status flag_encoder(ct_ocl_backend *be, ct_tensor *node) {
    encoded++;
    const ct_tensor *idx = node->src[1];
    cl_int n = (cl_int)ct_nelements(idx), limit = (cl_int)node->src[0]->ne[1];
    ct_status st = ct_ocl_set_arg_tensor(be, CT_OCL_K_FLAG_TEST, 0, idx, "src1");
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, CT_OCL_K_FLAG_TEST, 2, n);
    if (st == CT_OK) st = CT_OCL_SET_ARG(be, CT_OCL_K_FLAG_TEST, 3, limit);
    if (st == CT_OK) st = ct_ocl_set_arg_error_flag(be, CT_OCL_K_FLAG_TEST, 4);
    size_t local = ct_ocl_clamp_wg(be, CT_OCL_K_FLAG_TEST, 64);
    size_t groups[3] = {((size_t)n + local - 1) / local, 1, 1}, lsz[3] = {local, 1, 1};
    if (st == CT_OK) st = ct_ocl_dispatch(be, CT_OCL_K_FLAG_TEST, groups, lsz);
    return st;
}

static ct_status bad_arg_encoder(ct_ocl_backend *be, ct_tensor *node) {
    CT_UNUSED(node);
    cl_int v = 0;
    return CT_OCL_SET_ARG(be, CT_OCL_K_FLAG_TEST, 99, v);
}

static ct_status huge_wg_encoder(ct_ocl_backend *be, ct_tensor *node) {
    CT_UNUSED(node);
    size_t groups[3] = {1, 1, 1}, local[3] = {ct_ocl_kernel_max_wg(be, CT_OCL_K_FLAG_TEST) + 1, 1, 1};
    return ct_ocl_dispatch(be, CT_OCL_K_FLAG_TEST, groups, local);
}

static ct_status compute(ct_backend *b, ct_graph *g) { return b->iface.graph_compute(b, g); }

/* A graph of GET_ROWS nodes over `a` (F32 [4, rows]), one per index tensor,
 * all in one device buffer. */
typedef struct flag_graph {
    ct_context *ctx;
    ct_buffer *buf;
    ct_graph *graph;
    ct_tensor *idx[3];
    int n_idx;
} flag_graph;

static bool flag_graph_new(flag_graph *fg, ct_device *dev, int n_nodes, int64_t rows, int64_t n) {
    memset(fg, 0, sizeof *fg);
    fg->ctx = new_ctx();
    if (!fg->ctx) return false;
    ct_tensor *a = ct_tensor_new_2d(fg->ctx, CT_TYPE_F32, 4, rows);
    fg->graph = ct_graph_new(fg->ctx, 16);
    static const char *names[] = {"first", "second", "third"};
    for (int i = 0; i < n_nodes; i++) {
        fg->idx[i] = ct_tensor_new_1d(fg->ctx, CT_TYPE_I32, n);
        ct_tensor *r = ct_get_rows(fg->ctx, a, fg->idx[i]);
        if (!r) return false;
        ct_tensor_set_name(r, names[i]);
        if (ct_graph_build_forward(fg->graph, r) != CT_OK) return false;
    }
    fg->n_idx = n_nodes;
    return ct_context_alloc_tensors(fg->ctx, ct_device_buffer_type(dev), &fg->buf) == CT_OK;
}

static void flag_graph_free(flag_graph *fg) {
    ct_buffer_free(fg->buf);
    ct_context_free(fg->ctx);
}

/* Sets idx[k] to valid random indices, with bad (if not 0) at position `at`. */
static void set_indices(ct_tensor *idx, int64_t rows, int32_t bad, int64_t at) {
    int64_t n = ct_nelements(idx);
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++) v[i] = (int32_t)tu_rand_below(rows);
    if (bad) v[at] = bad;
    CHECK(ct_tensor_set(idx, v, 0, (size_t)n * sizeof *v) == CT_OK);
    free(v);
}

/* ---- device enumeration and properties ---------------------------------------- */

static void test_devices(ct_backend_reg *reg) {
    size_t n = ct_backend_reg_dev_count(reg);
    for (size_t i = 0; i < n; i++) {
        ct_device *dev = ct_backend_reg_dev_get(reg, i);
        ct_ocl_device *d = ct_ocl_device_of(dev);
        char name[32];
        snprintf(name, sizeof name, "OpenCL%zu", i);
        CHECK(strcmp(ct_device_name(dev), name) == 0);
        CHECK(ct_device_reg(dev) == reg);
        printf("  %s: %s (%s)\n", ct_device_name(dev), ct_device_description(dev),
               ct_device_type_name(ct_device_get_type(dev)));

        char pname[256] = "", dname[256] = "", expect[600];
        clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        clGetDeviceInfo(d->device, CL_DEVICE_NAME, sizeof dname, dname, NULL);
        snprintf(expect, sizeof expect, "%s: %s", pname, dname);
        CHECK(strcmp(ct_device_description(dev), expect) == 0);

        cl_device_type t = 0;
        clGetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
        ct_device_type want = (t & CL_DEVICE_TYPE_GPU)   ? CT_DEVICE_TYPE_GPU
                              : (t & CL_DEVICE_TYPE_CPU) ? CT_DEVICE_TYPE_CPU
                                                         : CT_DEVICE_TYPE_ACCEL;
        CHECK(ct_device_get_type(dev) == want);

        cl_ulong global = 0, alloc = 0;
        clGetDeviceInfo(d->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL);
        clGetDeviceInfo(d->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
        ct_device_props props;
        CHECK(ct_device_get_props(dev, &props) == CT_OK);
        CHECK(strcmp(props.name, name) == 0);
        CHECK(props.memory_total == global);
        CHECK(props.memory_free <= props.memory_total);
        /* async: set/get_async queue on the backend's queue (tests/test_opencl_async.c) */
        CHECK(props.caps.buffer_from_host_ptr && props.caps.async && !props.caps.host_buffer && !props.caps.events);
        CHECK(props.type == want);

        /* CT_OPENCL_MAX_SIZE lowered max_size; never raised it. */
        size_t want_max = alloc < MAX_SIZE ? (size_t)alloc : MAX_SIZE;
        ct_buffer_type *buft = ct_device_buffer_type(dev);
        CHECK(strcmp(ct_buffer_type_name(buft), name) == 0);
        CHECK(ct_buffer_type_max_size(buft) == want_max);
        CHECK(d->max_size == want_max);
        size_t align = ct_buffer_type_alignment(buft);
        CHECK(align >= 128 && (align & (align - 1)) == 0);
        CHECK(!ct_buffer_type_is_host(buft));
        CHECK(ct_buffer_type_device(buft) == dev);
        CHECK(ct_device_supports_buft(dev, buft));
        CHECK(ct_device_host_buffer_type(dev) == NULL);
        CHECK(d->max_work_group_size >= 1 && d->refcount >= 1);

        cl_device_fp_config fp = 0;
        clGetDeviceInfo(d->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp, &fp, NULL);
        CHECK(d->has_correct_div_sqrt == ((fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0));
        CHECK(((d->features & CT_OCL_FEAT_FP16) != 0) == d->has_fp16);
        CHECK(((d->features & CT_OCL_FEAT_SUBGROUPS) != 0) == d->has_subgroups);
        CHECK(ct_ocl_kernel_available(d, CT_OCL_K_FLAG_TEST));

        /* The CPU backend cannot use OpenCL memory, nor OpenCL the CPU's. */
        ct_device *cpu = ct_device_by_name("CPU");
        if (cpu) {
            CHECK(!ct_device_supports_buft(cpu, buft));
            CHECK(!ct_device_supports_buft(dev, ct_device_buffer_type(cpu)));
        }
    }
    /* Views and no-ops are supported whatever kernels exist. */
    ct_context *ctx = new_ctx();
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 3);
    ct_tensor *v = ct_transpose(ctx, a);
    CHECK(ct_device_supports_op(ct_backend_reg_dev_get(reg, 0), v));
    ct_context_free(ctx);
}

/* ---- device buffers ------------------------------------------------------------- */

static void test_device_buffers(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_buffer_type *buft = ct_device_buffer_type(dev);
    size_t free0, total0, free1, total1;
    CHECK(ct_device_memory(dev, &free0, &total0) == CT_OK);

    ct_buffer *big = NULL;
    CHECK(ct_buffer_type_alloc(buft, d->max_size + 1, &big) == CT_OUT_OF_MEMORY && big == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "max size");
    CHECK(ct_buffer_type_alloc(buft, d->max_size, &big) == CT_OK && big);
    CHECK(ct_device_memory(dev, &free1, &total1) == CT_OK);
    CHECK(total1 == total0 && free1 == free0 - d->max_size);
    ct_buffer_free(big);
    CHECK(ct_device_memory(dev, &free1, &total1) == CT_OK && free1 == free0);

    ct_context *ctx = new_ctx();
    ct_tensor *f = ct_tensor_new_2d(ctx, CT_TYPE_F32, 1001, 3);
    ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_I8, 333);
    ct_tensor *one = ct_tensor_new_1d(ctx, CT_TYPE_F16, 1);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, buft, &buf) == CT_OK && buf);
    CHECK(strcmp(ct_buffer_type_name(ct_buffer_get_type(buf)), d->name) == 0);
    CHECK(!ct_buffer_is_host(buf));
    char *base = ct_buffer_base(buf);
    CHECK(base != NULL);
    CHECK(((uintptr_t)b->data - (uintptr_t)base) % d->alignment == 0);

    ct_tensor *ts[] = {f, b, one};
    for (size_t k = 0; k < CT_ARRAY_LEN(ts); k++) {
        size_t nb = ct_nbytes(ts[k]);
        unsigned char *in = malloc(nb), *out = malloc(nb);
        tu_fill_bytes(in, nb);
        CHECK(ct_tensor_set(ts[k], in, 0, nb) == CT_OK);
        memset(out, 0, nb);
        CHECK(ct_tensor_get(ts[k], out, 0, nb) == CT_OK);
        CHECK(memcmp(in, out, nb) == 0);
        /* Partial, odd offsets and sizes. */
        size_t off = nb > 7 ? 7 : 0, len = nb - off > 5 ? nb - off - 5 : nb - off;
        unsigned char *part = malloc(len);
        tu_fill_bytes(part, len);
        CHECK(ct_tensor_set(ts[k], part, off, len) == CT_OK);
        memcpy(in + off, part, len);
        CHECK(ct_tensor_get(ts[k], out, 0, nb) == CT_OK);
        CHECK(memcmp(in, out, nb) == 0);
        if (nb > 3) {
            CHECK(ct_tensor_memset(ts[k], 0xA5, 1, nb - 3) == CT_OK);
            memset(in + 1, 0xA5, nb - 3);
            CHECK(ct_tensor_get(ts[k], out, 0, nb) == CT_OK);
            CHECK(memcmp(in, out, nb) == 0);
        }
        memset(out, 0, nb);
        CHECK(ct_tensor_get(ts[k], out, nb - 1, 1) == CT_OK && out[0] == in[nb - 1]);
        free(part);
        free(in);
        free(out);
    }
    CHECK(ct_buffer_clear(buf, 0x5A) == CT_OK);
    for (size_t k = 0; k < CT_ARRAY_LEN(ts); k++) {
        size_t nb = ct_nbytes(ts[k]);
        unsigned char *out = malloc(nb);
        CHECK(ct_tensor_get(ts[k], out, 0, nb) == CT_OK);
        bool all = true;
        for (size_t i = 0; i < nb; i++) all = all && out[i] == 0x5A;
        CHECK(all);
        free(out);
    }
    /* Device-to-device copy inside the device. */
    ct_tensor *f2 = ct_tensor_new_2d(ctx, CT_TYPE_F32, 1001, 3);
    ct_buffer *buf2 = NULL;
    CHECK(ct_context_alloc_tensors(ctx, buft, &buf2) == CT_OK && buf2);
    float *x = malloc(ct_nbytes(f)), *y = malloc(ct_nbytes(f));
    tu_fill_uniform(x, (size_t)ct_nelements(f), -1, 1);
    CHECK(ct_tensor_set(f, x, 0, ct_nbytes(f)) == CT_OK);
    CHECK(buf2->iface.cpy_tensor(buf2, f, f2));
    CHECK(ct_tensor_get(f2, y, 0, ct_nbytes(f2)) == CT_OK);
    CHECK(memcmp(x, y, ct_nbytes(f)) == 0);
    free(x);
    free(y);
    ct_buffer_free(buf2);
    ct_buffer_free(buf);
    ct_context_free(ctx);
    CHECK(ct_device_memory(dev, &free1, &total1) == CT_OK && free1 == free0);
}

/* ---- mapped buffers across views ------------------------------------------------ */

static void test_mapped_buffers(ct_device *dev, ct_backend *backend) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_ocl_backend *be = backend->context;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t size = 3 * (size_t)MAX_SIZE + MAX_SIZE / 2, max_tensor = 64 << 10;
    char *mem = ct_aligned_alloc(page, size + page);
    char *ptr = mem + 100; /* not page-aligned */
    memset(ptr, 0, size);

    ct_buffer *buf = NULL;
    CHECK(ct_device_buffer_from_host_ptr(dev, ptr, size, d->max_size, &buf) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "max_tensor_size");
    CHECK(ct_device_buffer_from_host_ptr(dev, ptr, size, max_tensor, &buf) == CT_OK && buf);
    CHECK(ct_buffer_base(buf) == ptr && ct_buffer_size(buf) == size);
    CHECK(strcmp(ct_buffer_type_name(ct_buffer_get_type(buf)), d->mapped_name) == 0);
    CHECK(ct_device_supports_buft(dev, ct_buffer_get_type(buf)));

    /* Views: several, each at most max_size, inside the caller's bytes,
     * page-aligned after the first, covering every byte. */
    ct_ocl_buffer *ob = buf->context;
    CHECK(ob->n_views >= 4);
    char *covered = ptr;
    for (size_t i = 0; i < ob->n_views; i++) {
        const ct_ocl_view *v = &ob->views[i];
        CHECK(v->size <= d->max_size);
        CHECK(v->data >= ptr && v->data + v->size <= ptr + size);
        CHECK(i == 0 ? v->data == ptr : (uintptr_t)v->data % page == 0);
        CHECK(v->data <= covered);
        if (v->data + v->size > covered) covered = v->data + v->size;
    }
    CHECK(covered == ptr + size);

    /* Tensors of max_tensor bytes straddling every view's end. */
    ct_context *ctx = new_ctx();
    const int64_t n = (int64_t)(max_tensor / sizeof(int32_t));
    int n_t = 0;
    ct_tensor *ts[16];
    for (size_t i = 0; i + 1 < ob->n_views && n_t < 16; i++) {
        char *end = ob->views[i].data + ob->views[i].size;
        char *addr = end - (max_tensor / 2 + 4 * (size_t)tu_rand_below(1000));
        ts[n_t] = ct_tensor_new_1d(ctx, CT_TYPE_I32, n);
        CHECK(ct_buffer_alloc_tensor(buf, ts[n_t], addr) == CT_OK);
        n_t++;
    }
    int32_t *in = malloc(max_tensor), *out = malloc(max_tensor);
    for (int k = 0; k < n_t; k++) {
        for (int64_t i = 0; i < n; i++) in[i] = (int32_t)tu_rand_below(1000);
        CHECK(ct_tensor_set(ts[k], in, 0, max_tensor) == CT_OK);
        memset(out, 0, max_tensor);
        CHECK(ct_tensor_get(ts[k], out, 0, max_tensor) == CT_OK);
        CHECK(memcmp(in, out, max_tensor) == 0);
        cl_mem m;
        cl_ulong off;
        CHECK(ct_ocl_tensor_mem(be, ts[k], "src1", &m, &off) == CT_OK);
        const ct_ocl_view *v = ct_ocl_buffer_find_view(ob, ts[k]->data, max_tensor);
        CHECK(v && v->mem == m && (char *)ts[k]->data == v->data + off && off + max_tensor <= v->size);
        /* The device reads the whole tensor through its view: a bad last index
         * (beyond the straddled boundary) is seen. */
        ct_tensor a = {0};
        a.ne[1] = 1000;
        ct_tensor node = {0};
        node.src[0] = &a;
        node.src[1] = ts[k];
        snprintf(be->where, sizeof be->where, "test");
        be->node_index = 0;
        cl_int zero = 0, flag = -1;
        clEnqueueWriteBuffer(be->queue, be->error_flag, CL_TRUE, 0, sizeof zero, &zero, 0, NULL, NULL);
        CHECK(flag_encoder(be, &node) == CT_OK);
        CHECK(ct_ocl_trace_submit(be, NULL, false) == CT_OK); /* encoders only trace */
        clEnqueueReadBuffer(be->queue, be->error_flag, CL_TRUE, 0, sizeof flag, &flag, 0, NULL, NULL);
        CHECK(flag == 0);
        int32_t bad = 1000;
        CHECK(ct_tensor_set(ts[k], &bad, max_tensor - sizeof bad, sizeof bad) == CT_OK);
        CHECK(flag_encoder(be, &node) == CT_OK);
        CHECK(ct_ocl_trace_submit(be, NULL, false) == CT_OK); /* encoders only trace */
        clEnqueueReadBuffer(be->queue, be->error_flag, CL_TRUE, 0, sizeof flag, &flag, 0, NULL, NULL);
        CHECK(flag == 1);
        be->flag_dirty = true; /* raised outside a compute: the next one must reset it */
    }

    /* A tensor larger than any view: transfers still work piecewise, but no
     * kernel can reach it. */
    ct_tensor *huge = ct_tensor_new_1d(ctx, CT_TYPE_I8, (int64_t)d->max_size + 4096);
    CHECK(ct_buffer_alloc_tensor(buf, huge, ptr + 3) == CT_OK);
    size_t hn = ct_nbytes(huge);
    unsigned char *hin = malloc(hn), *hout = malloc(hn);
    tu_fill_bytes(hin, hn);
    CHECK(ct_tensor_set(huge, hin, 0, hn) == CT_OK);
    CHECK(ct_tensor_get(huge, hout, 0, hn) == CT_OK);
    CHECK(memcmp(hin, hout, hn) == 0);
    CHECK(ct_tensor_memset(huge, 7, 10, hn - 20) == CT_OK);
    CHECK(ct_tensor_get(huge, hout, 0, hn) == CT_OK);
    memset(hin + 10, 7, hn - 20);
    CHECK(memcmp(hin, hout, hn) == 0);
    cl_mem m;
    cl_ulong off;
    snprintf(be->where, sizeof be->where, "ct_backend_graph_compute: node 'x' (CPY)");
    CHECK(ct_ocl_tensor_mem(be, huge, "src0", &m, &off) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "src0 '(unnamed)'");
    free(hin);
    free(hout);
    free(in);
    free(out);

    CHECK(ct_buffer_clear(buf, 0x11) == CT_OK);
    unsigned char probe[2];
    CHECK(ct_tensor_get(huge, probe, hn - 2, 2) == CT_OK && probe[0] == 0x11 && probe[1] == 0x11);
    ct_buffer_free(buf);
    ct_context_free(ctx);
    ct_free(mem);

    /* The mapped type allocates host memory of its own. */
    ct_buffer *own = NULL;
    CHECK(ct_buffer_type_alloc(&d->buft_mapped, 5000, &own) == CT_OK && own);
    ct_buffer_free(own);
}

/* ---- compute: the error flag, the abort callback, device errors ----------------- */

static int abort_calls, abort_at;
static bool abort_cb(void *data) {
    CT_UNUSED(data);
    return ++abort_calls == abort_at;
}

static void test_compute(ct_device *dev, ct_backend *b) {
    ct_ocl_backend *be = b->context;
    CHECK(strcmp(ct_backend_name(b), ct_device_name(dev)) == 0);
    CHECK(ct_backend_get_device(b) == dev);
    CHECK(ct_ocl_kernel_max_wg(be, CT_OCL_K_FLAG_TEST) >= 1);
    CHECK(ct_ocl_clamp_wg(be, CT_OCL_K_FLAG_TEST, (size_t)1 << 40) <= ct_ocl_kernel_max_wg(be, CT_OCL_K_FLAG_TEST));
    CHECK(ct_ocl_clamp_wg(be, CT_OCL_K_FLAG_TEST, 0) == 1);

    const int64_t rows = 10, n = 37;
    flag_graph fg;
    CHECK(flag_graph_new(&fg, dev, 3, rows, n));
    be->test_encoder = flag_encoder;
    for (int k = 0; k < 3; k++) set_indices(fg.idx[k], rows, 0, 0);
    encoded = 0;
    CHECK(compute(b, fg.graph) == CT_OK && encoded == 3);

    set_indices(fg.idx[1], rows, (int32_t)rows, n - 1);
    CHECK(compute(b, fg.graph) == CT_INDEX_OUT_OF_RANGE);
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "node 'second' (GET_ROWS)");
    set_indices(fg.idx[2], rows, -1, 0);
    CHECK(compute(b, fg.graph) == CT_INDEX_OUT_OF_RANGE);
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "node 'second'"); /* the first bad node wins */
    set_indices(fg.idx[1], rows, 0, 0);
    CHECK(compute(b, fg.graph) == CT_INDEX_OUT_OF_RANGE);
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "node 'third'");
    set_indices(fg.idx[2], rows, 0, 0);
    CHECK(compute(b, fg.graph) == CT_OK); /* the flag is reset per compute */
    if (be->replay_enabled) CHECK(be->n_recorded == 1 && be->n_replayed == 4); /* the same graph each time */

    /* Abort before the second node: one node ran. */
    ct_backend_set_abort_callback(b, abort_cb, NULL);
    abort_calls = 0;
    abort_at = 2;
    encoded = 0;
    CHECK(compute(b, fg.graph) == CT_ABORTED && encoded == 1 && abort_calls == 2);
    CHECK_ERROR(CT_ABORTED, "before node");
    abort_at = 0;
    abort_calls = 0;
    CHECK(compute(b, fg.graph) == CT_OK && abort_calls == 3);
    ct_backend_set_abort_callback(b, NULL, NULL);

    /* Encoder failures become statuses naming the node and the CL call. */
    be->test_encoder = bad_arg_encoder;
    CHECK(compute(b, fg.graph) == CT_DEVICE_ERROR);
    CHECK_ERROR(CT_DEVICE_ERROR, "node 'first' (GET_ROWS): clSetKernelArg(ct_flag_test, 99) failed: CL_INVALID_ARG_INDEX");
    be->test_encoder = huge_wg_encoder;
    CHECK(compute(b, fg.graph) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "node 'first' (GET_ROWS): ct_flag_test: work-group");
    be->test_encoder = NULL;
    /* Without the hook, a node the device refuses is refused by compute too. */
    if (!ct_device_supports_op(dev, ct_graph_node(fg.graph, 0))) {
        CHECK(compute(b, fg.graph) == CT_UNSUPPORTED);
        CHECK_ERROR(CT_UNSUPPORTED, "node 'first' (GET_ROWS): not supported");
    }
    flag_graph_free(&fg);

    CHECK(ct_device_init_backend(dev, "n_threads=2", &b) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "takes no params");
}

/* ---- graph replay: recorded command buffers ------------------------------------- */

enum { RG_M = 16, RG_N = 3, RG_E = 40, RG_T = 9, RG_MAX_IO = 8 };

/* CPY F32 -> Q8_0 and MUL_MAT (the 8-bit path: src1 quantized into the work
 * memory) then RMS_NORM, once per row length in k[] (0: none); GET_ROWS of F16
 * rows and SUM_ROWS of them. Inputs in[], outputs out[]. */
typedef struct replay_graph {
    ct_context *ctx;
    ct_buffer *buf;
    ct_graph *g;
    ct_tensor *in[RG_MAX_IO], *out[RG_MAX_IO];
    int n_in, n_out;
    ct_tensor *ids;
} replay_graph;

static bool replay_graph_new(replay_graph *rg, ct_device *dev, const int64_t k[2], int64_t n_ids) {
    memset(rg, 0, sizeof *rg);
    ct_context_params p = {.mem_size = 64 * ct_tensor_overhead() + ct_graph_overhead(64), .no_alloc = true};
    if (!(rg->ctx = ct_context_new(p)) || !(rg->g = ct_graph_new(rg->ctx, 64))) return false;
    ct_context *c = rg->ctx;
    for (int i = 0; i < 2; i++) {
        if (!k[i]) continue;
        ct_tensor *w = ct_tensor_new_2d(c, CT_TYPE_F32, k[i], RG_M), *x = ct_tensor_new_2d(c, CT_TYPE_F32, k[i], RG_N);
        ct_tensor *wq = ct_cpy(c, w, ct_tensor_new_2d(c, CT_TYPE_Q8_0, k[i], RG_M));
        rg->in[rg->n_in++] = w;
        rg->in[rg->n_in++] = x;
        rg->out[rg->n_out++] = wq;
        rg->out[rg->n_out++] = ct_rms_norm(c, ct_mul_mat(c, wq, x), 1e-5f);
    }
    ct_tensor *tab = ct_tensor_new_2d(c, CT_TYPE_F16, RG_E, RG_T);
    rg->ids = ct_tensor_new_1d(c, CT_TYPE_I32, n_ids);
    ct_tensor *rows = ct_get_rows(c, tab, rg->ids);
    ct_tensor_set_name(rows, "rows");
    rg->in[rg->n_in++] = tab;
    rg->out[rg->n_out++] = rows;
    rg->out[rg->n_out++] = ct_sum_rows(c, rows);
    for (int i = 0; i < rg->n_out; i++) {
        if (!rg->out[i] || ct_graph_build_forward(rg->g, rg->out[i]) != CT_OK) return false;
    }
    return ct_context_alloc_tensors(c, ct_device_buffer_type(dev), &rg->buf) == CT_OK;
}

static void replay_graph_free(replay_graph *rg) {
    ct_buffer_free(rg->buf);
    ct_context_free(rg->ctx);
}

/* Fresh inputs from seed (the same seed, the same inputs), valid row ids. */
static void replay_graph_fill(replay_graph *rg, uint32_t seed) {
    uint32_t st = seed * 2654435761u + 1;
    for (int i = 0; i < rg->n_in; i++) {
        ct_tensor *t = rg->in[i];
        size_t n = (size_t)ct_nelements(t);
        float *f = malloc(n * sizeof *f);
        for (size_t j = 0; j < n; j++) {
            st = st * 1664525u + 1013904223u;
            f[j] = (float)(int32_t)st / 2147483648.0f;
        }
        if (t->type == CT_TYPE_F16) {
            ct_fp16 *h = malloc(n * sizeof *h);
            ct_fp32_to_fp16_row(f, h, (int64_t)n);
            CHECK(ct_tensor_set(t, h, 0, n * sizeof *h) == CT_OK);
            free(h);
        } else {
            CHECK(ct_tensor_set(t, f, 0, n * sizeof *f) == CT_OK);
        }
        free(f);
    }
    int64_t n = ct_nelements(rg->ids);
    int32_t *v = malloc((size_t)n * sizeof *v);
    for (int64_t j = 0; j < n; j++) v[j] = (int32_t)((seed + 7 * (uint32_t)j) % RG_T);
    CHECK(ct_tensor_set(rg->ids, v, 0, (size_t)n * sizeof *v) == CT_OK);
    free(v);
}

/* Every output's bytes, concatenated into a malloc'd block of *n. */
static unsigned char *replay_graph_read(replay_graph *rg, size_t *n) {
    size_t total = 0;
    for (int i = 0; i < rg->n_out; i++) total += ct_nbytes(rg->out[i]);
    unsigned char *bytes = malloc(total), *p = bytes;
    for (int i = 0; i < rg->n_out; i++) {
        CHECK(ct_tensor_get(rg->out[i], p, 0, ct_nbytes(rg->out[i])) == CT_OK);
        p += ct_nbytes(rg->out[i]);
    }
    *n = total;
    return bytes;
}

/* Computes rg on b with the inputs of seed and checks the bytes against the same
 * compute on ref (a backend that never replays). */
static void replay_check(ct_backend *b, ct_backend *ref, replay_graph *rg, uint32_t seed, const char *what) {
    size_t n_got, n_want;
    replay_graph_fill(rg, seed);
    CHECK(ct_backend_graph_compute(ref, rg->g) == CT_OK);
    unsigned char *want = replay_graph_read(rg, &n_want);
    for (int i = 0; i < rg->n_out; i++) { /* b's compute must write every output again */
        CHECK(ct_tensor_memset(rg->out[i], 0xEE, 0, ct_nbytes(rg->out[i])) == CT_OK);
    }
    CHECK_MSG(ct_backend_graph_compute(b, rg->g) == CT_OK, "%s: %s", what, ct_last_error());
    unsigned char *got = replay_graph_read(rg, &n_got);
    CHECK_MSG(n_got == n_want && memcmp(got, want, n_want) == 0, "%s: outputs differ from the played compute", what);
    free(want);
    free(got);
}

static void test_graph_replay(ct_device *dev) {
    ct_backend *b = NULL, *ref = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &b) == CT_OK && ct_device_init_backend(dev, NULL, &ref) == CT_OK);
    if (!b || !ref) return;
    ct_ocl_backend *be = b->context;
    ((ct_ocl_backend *)ref->context)->replay_enabled = false;
    const bool on = be->replay_enabled;
    printf("  graph replay: %s\n", on ? "on (cl_khr_command_buffer)" : "off: every compute is played");
    /* CT_OPENCL_GRAPH_REPLAY=1 (main): on wherever the device lists the extension for a plain queue */
    ct_ocl_device *d = ct_ocl_device_of(dev);
    char ext[8192] = "";
    cl_command_queue_properties required = 1;
    clGetDeviceInfo(d->device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
    const bool listed = strstr(ext, "cl_khr_command_buffer") != NULL;
    if (listed) clGetDeviceInfo(d->device, CT_CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES, sizeof required,
                                &required, NULL);
    CHECK(d->has_cmdbuf == (listed && required == 0));
    CHECK(on == d->has_cmdbuf);
    const int64_t k_small[2] = {64, 0}, k_two[2] = {64, 512}, k_big[2] = {1024, 0};

    /* Played, then recorded on its second sight, then replayed; with new inputs each time. */
    replay_graph g1, g2;
    CHECK(replay_graph_new(&g1, dev, k_small, 5) && replay_graph_new(&g2, dev, k_small, 6));
    replay_check(b, ref, &g1, 1, "first compute");
    CHECK(be->n_played == 1 && be->n_recorded == 0 && be->n_replayed == 0);
    replay_check(b, ref, &g1, 2, "second compute");
    replay_check(b, ref, &g1, 3, "third compute");
    if (on) CHECK(be->n_played == 1 && be->n_recorded == 1 && be->n_replayed == 2);
    else CHECK(be->n_played == 3 && be->n_replayed == 0);

    /* Another graph (one more row id) is its own trace; g1's recording survives it. */
    replay_check(b, ref, &g2, 4, "another graph");
    replay_check(b, ref, &g1, 5, "back to the first graph");
    if (on) CHECK(be->n_recorded == 1 && be->n_replayed == 3);

    /* A bad row id in a replayed compute: the error flag names the node, and is reset after. */
    replay_graph_fill(&g1, 6);
    int32_t bad = RG_T;
    CHECK(ct_tensor_set(g1.ids, &bad, 2 * sizeof bad, sizeof bad) == CT_OK);
    CHECK(ct_backend_graph_compute(b, g1.g) == CT_INDEX_OUT_OF_RANGE);
    CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "node 'rows' (GET_ROWS)");
    replay_check(b, ref, &g1, 7, "after a bad index");
    if (on) CHECK(be->n_recorded == 1 && be->n_replayed == 5);

    /* Freeing any buffer retires every recording (its cl_mem handles may come back). */
    replay_graph_free(&g2);
    uint64_t played = be->n_played;
    replay_check(b, ref, &g1, 8, "after a buffer was freed");
    replay_check(b, ref, &g1, 9, "recorded again");
    if (on) CHECK(be->n_played == played + 1 && be->n_recorded == 2);

    /* Growing the work memory (a longer mat-vec) retires recordings that name the old one. */
    CHECK(replay_graph_new(&g2, dev, k_big, 5));
    replay_check(b, ref, &g2, 10, "a graph that grows the work memory");
    played = be->n_played;
    replay_check(b, ref, &g1, 11, "after the work memory grew");
    if (on) CHECK(be->n_played == played + 1);
    replay_graph_free(&g2);

    /* The work memory growing in the middle of a graph: the first mat-vec still reads the old one. */
    ct_backend *fresh = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &fresh) == CT_OK);
    CHECK(replay_graph_new(&g2, dev, k_two, 4));
    for (uint32_t seed = 12; fresh && seed < 15; seed++) replay_check(fresh, ref, &g2, seed, "work memory grown mid-graph");
    replay_graph_free(&g2);
    ct_backend_free(fresh);

    /* With an abort callback every node is played on its own. */
    ct_backend_set_abort_callback(b, abort_cb, NULL);
    abort_calls = 0;
    abort_at = 0;
    uint64_t replayed = be->n_replayed;
    replay_check(b, ref, &g1, 15, "with an abort callback");
    CHECK(be->n_replayed == replayed && abort_calls > 1);
    ct_backend_set_abort_callback(b, NULL, NULL);

    /* Traces are compared byte for byte: more graphs than slots evict the oldest. */
    replay_graph more[CT_OCL_REPLAY_SLOTS];
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) {
        CHECK(replay_graph_new(&more[i], dev, k_small, 7 + i));
        replay_check(b, ref, &more[i], 20 + (uint32_t)i, "filling the slots");
    }
    played = be->n_played;
    replay_check(b, ref, &g1, 30, "evicted");
    if (on) CHECK(be->n_played == played + 1);
    for (int i = 0; i < CT_OCL_REPLAY_SLOTS; i++) replay_graph_free(&more[i]);

    replay_graph_free(&g1);
    ct_backend_free(ref);
    ct_backend_free(b);
}

/* ---- many threads creating backends on one device ------------------------------- */

typedef struct thread_arg {
    ct_device *dev;
    int ok;
} thread_arg;

static void *thread_main(void *p) {
    thread_arg *t = p;
    ct_backend *b = NULL;
    if (ct_device_init_backend(t->dev, NULL, &b) != CT_OK) {
        fprintf(stderr, "thread: %s\n", ct_last_error());
        return NULL;
    }
    ((ct_ocl_backend *)b->context)->test_encoder = flag_encoder;
    flag_graph fg;
    if (flag_graph_new(&fg, t->dev, 2, 50, 1000)) {
        for (int k = 0; k < 2; k++) set_indices(fg.idx[k], 50, 0, 0);
        bool good = compute(b, fg.graph) == CT_OK;
        set_indices(fg.idx[1], 50, 50, 999);
        good = good && compute(b, fg.graph) == CT_INDEX_OUT_OF_RANGE && strstr(ct_last_error(), "'second'");
        t->ok = good;
    }
    flag_graph_free(&fg);
    ct_backend_free(b);
    return NULL;
}

static void test_threads(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_ocl_device_reset_program(d);
    int builds = d->program_builds;
    int refs = d->refcount;
    enum { N = 8 };
    pthread_t th[N];
    thread_arg args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (thread_arg){dev, 0};
        CHECK(pthread_create(&th[i], NULL, thread_main, &args[i]) == 0);
    }
    int ok = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        ok += args[i].ok;
    }
    CHECK(ok == N);
    CHECK(d->program_builds == builds + 1); /* built once, under the lock */
    CHECK(d->refcount == refs);
}

/* ---- the program cache ---------------------------------------------------------- */

static ct_ocl_program_origin load_origin(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_ocl_device_reset_program(d);
    ct_backend *b = NULL;
    if (ct_device_init_backend(dev, NULL, &b) != CT_OK) {
        fprintf(stderr, "init: %s\n", ct_last_error());
        return CT_OCL_PROGRAM_NONE;
    }
    /* The program works: a compute with the flag kernel. */
    ((ct_ocl_backend *)b->context)->test_encoder = flag_encoder;
    flag_graph fg;
    bool ok = flag_graph_new(&fg, dev, 1, 8, 16);
    if (ok) {
        set_indices(fg.idx[0], 8, 9, 3);
        ok = compute(b, fg.graph) == CT_INDEX_OUT_OF_RANGE;
    }
    flag_graph_free(&fg);
    ct_backend_free(b);
    return ok ? d->program_origin : CT_OCL_PROGRAM_NONE;
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(p, 1, n, f) == n);
    fclose(f);
}

static void test_cache(ct_device *dev) {
    char path[512];
    CHECK(find_cache_file(path, sizeof path));
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_CACHE);

    /* Garbage: rebuilt from source and rewritten, then loaded from the cache. */
    unsigned char junk[777];
    tu_fill_bytes(junk, sizeof junk);
    write_file(path, junk, sizeof junk);
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_SOURCE);
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_CACHE);

    /* A valid header over a damaged binary: the same. */
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, -1, SEEK_END);
        int c = fgetc(f);
        fseek(f, -1, SEEK_END);
        fputc(c ^ 0x40, f);
        fclose(f);
    }
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_SOURCE);
    /* Truncated. */
    struct stat st;
    CHECK(stat(path, &st) == 0 && truncate(path, st.st_size / 2) == 0);
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_SOURCE);
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_CACHE);
    CHECK(find_cache_file(path, sizeof path)); /* still one entry, no temporaries left */
}

static int warnings;
static char last_warning[512];
static void log_cb(ct_log_level level, const char *msg, void *data) {
    CT_UNUSED(data);
    if (level >= CT_LOG_WARN) {
        warnings++;
        snprintf(last_warning, sizeof last_warning, "%s", msg);
    }
}

static void test_unwritable_cache(ct_device *dev) {
    char file[128], dir[160];
    snprintf(file, sizeof file, "%s/not_a_dir", cache_dir);
    write_file(file, "x", 1);
    snprintf(dir, sizeof dir, "%s/sub", file);
    setenv("CT_OPENCL_CACHE_DIR", dir, 1);
    ct_log_set_callback(log_cb, NULL);
    warnings = 0;
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_SOURCE); /* and the compute worked */
    const int programs = ct_ocl_device_of(dev)->program_mvq ? 2 : 1; /* each warns that it is not cached */
    CHECK_MSG(warnings == programs && strstr(last_warning, "cache") && strstr(last_warning, "not_a_dir"),
              "%d warnings for %d programs, the last: %s", warnings, programs, last_warning);
    ct_log_set_callback(NULL, NULL);
    setenv("CT_OPENCL_CACHE_DIR", cache_dir, 1);
    unlink(file);
}

static void test_build_failure(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    CHECK(ct_ocl_device_set_test_build_options(d, "-DCT_TEST_BUILD_ERROR") == CT_OK);
    ct_ocl_device_reset_program(d);
    int refs = d->refcount;
    ct_backend *b = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &b) == CT_DEVICE_ERROR && b == NULL);
    CHECK_ERROR(CT_DEVICE_ERROR, "ct_device_init_backend: ");
    CHECK_ERROR(CT_DEVICE_ERROR, "build error requested by the test hook");
    printf("  build error: %s\n", ct_last_error());
    CHECK(d->program == NULL && d->refcount == refs);
    CHECK(ct_ocl_device_set_test_build_options(d, NULL) == CT_OK);
    CHECK(load_origin(dev) == CT_OCL_PROGRAM_CACHE);
}

/* ---- the 8-bit mat-vec kernels' own program ---------------------------------------- */

static cl_program kernel_program(ct_backend *b, ct_ocl_kernel_id k) {
    cl_program p = NULL;
    cl_kernel kernel = NULL;
    CHECK(ct_ocl_kernel_get(b->context, k, &kernel) == CT_OK); /* created on first use */
    if (kernel) clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof p, &p, NULL);
    return p;
}

/* replay_graph's mat-vecs (k = 64 and 512) on b, byte for byte as on ref, three times
 * (where the device replays graphs: played, recorded, replayed). */
static void mvq_check(ct_backend *b, ct_backend *ref, uint32_t seed, const char *what) {
    const int64_t k[2] = {64, 512};
    replay_graph g;
    CHECK(replay_graph_new(&g, ct_backend_get_device(b), k, 5));
    for (uint32_t i = 0; i < 3; i++) replay_check(b, ref, &g, seed + i, what);
    replay_graph_free(&g);
}

/* Where the device takes NVIDIA's compiler options, the 8-bit mat-vec kernels come from
 * a second program, built register-capped from the helpers and mul_mvq.cl (library.c);
 * the test hook builds it on any device with options of its own. Its kernels must give
 * the bytes of ref's (the library's, or on NVIDIA the capped program's), and a second
 * program that does not build must leave the library's kernels in place, with a warning
 * and without an error state. */
static void test_mvq_program(ct_device *dev) {
    ct_ocl_device *d = ct_ocl_device_of(dev);
    ct_backend *ref = NULL, *b = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &ref) == CT_OK);
    if (!ref) return;
    ((ct_ocl_backend *)ref->context)->replay_enabled = false;
    CHECK((d->program_mvq != NULL) == d->has_nv_compiler_options);
    printf("  mat-vec kernels: %s\n", d->program_mvq ? "their own program (register cap)" : "the kernel library");

    /* the helpers and mul_mvq.cl alone, no option added (ref keeps its kernels' programs) */
    d->test_mvq_options = "";
    ct_ocl_device_reset_program(d);
    CHECK(ct_device_init_backend(dev, NULL, &b) == CT_OK && d->program_mvq != NULL);
    if (b && d->program_mvq) {
        CHECK(kernel_program(b, CT_OCL_K_MUL_MVQ_Q8_0_F32) == d->program_mvq);
        CHECK(kernel_program(b, CT_OCL_K_MUL_MVQ1_Q4_K_F32) == d->program_mvq);
        CHECK(kernel_program(b, CT_OCL_K_MUL_MVQY_Q6_K_F32) == d->program_mvq);
        CHECK(kernel_program(b, CT_OCL_K_QUANTIZE_QY) == d->program);
        mvq_check(b, ref, 41, "mat-vec kernels from their own program");
    }
    ct_backend_free(b);
    b = NULL;

    /* a second program that does not build */
    d->test_mvq_options = "-cl-ctensor-no-such-option";
    ct_ocl_device_reset_program(d);
    ct_log_set_callback(log_cb, NULL);
    warnings = 0;
    ct_clear_error();
    CHECK(ct_device_init_backend(dev, NULL, &b) == CT_OK);
    CHECK_MSG(ct_last_status() == CT_OK, "a success left the error '%s'", ct_last_error());
    ct_log_set_callback(NULL, NULL);
    CHECK_MSG(warnings == 1 && strstr(last_warning, "ct_mul_mvq kernels come from the kernel library") &&
                  strstr(last_warning, "-cl-ctensor-no-such-option"),
              "%d warnings, the last: %s", warnings, last_warning);
    CHECK(d->program_mvq == NULL);
    if (b) {
        CHECK(kernel_program(b, CT_OCL_K_MUL_MVQ_Q8_0_F32) == d->program);
        mvq_check(b, ref, 44, "mat-vec kernels from the library after the second program failed");
    }
    ct_backend_free(b);
    d->test_mvq_options = NULL;
    ct_ocl_device_reset_program(d);
    ct_backend_free(ref);
}

/* ---- no platform: zero devices, the CPU carries on (a child process) ------------- */

static int child_no_platform(void) {
    ct_backend_reg *reg = ct_backend_reg_by_name("OpenCL");
    if (!reg) reg = ct_backend_opencl_reg();
    /* Some ICD loaders also read their system list whatever the environment says:
     * then the platforms cannot be hidden, which the parent reports as a skip. */
    if (ct_backend_reg_dev_count(reg) != 0) return 4;
    ct_backend *cpu = NULL;
    if (ct_backend_cpu_init(&cpu) != CT_OK) return 2;
    ct_backend_free(cpu);
    return 0;
}

static void test_no_platform(void) {
    char vendors[160];
    snprintf(vendors, sizeof vendors, "%s/no_vendors", cache_dir);
    CHECK(mkdir(vendors, 0700) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("OCL_ICD_VENDORS", vendors, 1);
        setenv("OPENCL_VENDOR_PATH", vendors, 1);
        unsetenv("OCL_ICD_FILENAMES");
        execl("/proc/self/exe", "test_opencl", "--no-platform", (char *)NULL);
        _exit(3);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
        printf("test_opencl: skipped the no-platform check: this ICD loader ignores OCL_ICD_VENDORS\n");
    } else {
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status %d", WEXITSTATUS(status));
    }
    rmdir(vendors);
}

/* ---- no OpenCL library: zero devices, the CPU carries on (a child process) ------ */

static char no_library_log[512];

static void no_library_log_cb(ct_log_level level, const char *msg, void *data) {
    CT_UNUSED(data);
    if (level == CT_LOG_INFO && strstr(msg, "opencl: no OpenCL library")) {
        snprintf(no_library_log, sizeof no_library_log, "%s", msg);
    }
}

/* Exit codes name the first thing that went wrong (the parent prints them). */
static int child_no_library(void) {
    ct_log_set_level(CT_LOG_INFO);
    ct_log_set_callback(no_library_log_cb, NULL);
    ct_backend_reg *reg = ct_backend_reg_by_name("OpenCL");
    if (!reg) reg = ct_backend_opencl_reg();
    if (!reg || strcmp(ct_backend_reg_name(reg), "OpenCL") != 0) return 2;
    if (ct_backend_reg_dev_count(reg) != 0) return 3;
    if (ct_backend_reg_dev_get(reg, 0) != NULL) return 4;
    if (ct_cl_load() || ct_cl.GetPlatformIDs != NULL) return 5;
    /* One line naming the library that was tried. */
    if (!strstr(no_library_log, "tried /nonexistent/libOpenCL.so.1, from CT_OPENCL_LIBRARY")) return 10;
    printf("  %s\n", no_library_log);

    /* sum_rows of [1..8] x 2 rows on the CPU backend. */
    ct_backend *cpu = NULL;
    if (ct_backend_cpu_init(&cpu) != CT_OK) return 6;
    ct_context *ctx = new_ctx();
    ct_buffer *buf = NULL;
    int rc = 7;
    ct_tensor *a = ctx ? ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 2) : NULL;
    ct_tensor *s = a ? ct_sum_rows(ctx, a) : NULL;
    ct_graph *g = s ? ct_graph_new(ctx, 8) : NULL;
    if (g && ct_graph_build_forward(g, s) == CT_OK &&
        ct_context_alloc_tensors(ctx, ct_backend_buffer_type(cpu), &buf) == CT_OK) {
        float x[8], y[2] = {0, 0};
        for (int i = 0; i < 8; i++) x[i] = (float)(i + 1);
        rc = ct_tensor_set(a, x, 0, sizeof x) == CT_OK && ct_backend_graph_compute(cpu, g) == CT_OK &&
                     ct_tensor_get(s, y, 0, sizeof y) == CT_OK && y[0] == 10.0f && y[1] == 26.0f
                 ? 0
                 : 8;
    }
    if (rc) fprintf(stderr, "no-library child: %s\n", ct_last_error());
    ct_buffer_free(buf);
    ct_context_free(ctx);
    ct_backend_free(cpu);
    return rc;
}

static void test_no_library(void) {
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CT_OPENCL_LIBRARY", "/nonexistent/libOpenCL.so.1", 1);
        execl("/proc/self/exe", "test_opencl", "--no-library", (char *)NULL);
        _exit(9);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "no-library child: exit status %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--no-platform") == 0) return child_no_platform();
    if (argc > 1 && strcmp(argv[1], "--no-library") == 0) return child_no_library();
    tu_init("test_opencl");
    /* First: it needs no OpenCL device, so it runs where the rest is skipped. */
    test_no_library();

    /* Before the registry initializes: a small max_size, a fresh cache. */
    snprintf(cache_dir, sizeof cache_dir, "/tmp/ct_opencl_test_XXXXXX");
    if (!mkdtemp(cache_dir)) {
        perror("mkdtemp");
        return 1;
    }
    setenv("CT_OPENCL_CACHE_DIR", cache_dir, 1);
    setenv("CT_OPENCL_MAX_SIZE", "1M", 1);
    setenv("CT_OPENCL_GRAPH_REPLAY", "1", 1); /* on CPU devices too (PoCL), so the replay paths run here */

    ct_backend_reg *reg = ct_backend_reg_by_name("OpenCL");
    if (!reg) {
        printf("note: the registry does not list OpenCL yet; using ct_backend_opencl_reg() directly\n");
        reg = ct_backend_opencl_reg();
    }
    CHECK(strcmp(ct_backend_reg_name(reg), "OpenCL") == 0);
    if (ct_backend_reg_dev_count(reg) == 0) {
        printf("SKIP: no OpenCL device\n");
        remove_cache_dir();
        return tu_finish() ? 1 : SKIP;
    }
    test_devices(reg);
    /* the first device, or the one CT_TEST_OPENCL_DEVICE names */
    ct_device *dev = NULL;
    for (size_t i = 0; i < ct_backend_reg_dev_count(reg) && !dev; i++) {
        if (tu_opencl_device_selected(ct_backend_reg_dev_get(reg, i))) dev = ct_backend_reg_dev_get(reg, i);
    }
    if (!dev) {
        CHECK_MSG(false, "CT_TEST_OPENCL_DEVICE=%s names no OpenCL device", getenv("CT_TEST_OPENCL_DEVICE"));
        remove_cache_dir();
        return tu_finish();
    }
    printf("device %s: %s\n", ct_device_name(dev), ct_device_description(dev));

    ct_backend *b = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &b) == CT_OK && b);
    if (!b) {
        fprintf(stderr, "cannot create a backend: %s\n", ct_last_error());
        remove_cache_dir();
        return tu_finish();
    }
    CHECK(ct_ocl_device_of(dev)->program_origin == CT_OCL_PROGRAM_SOURCE);

    test_device_buffers(dev);
    test_mapped_buffers(dev, b);
    test_compute(dev, b);
    ct_backend_free(b);
    test_graph_replay(dev);
    test_threads(dev);
    test_cache(dev);
    test_unwritable_cache(dev);
    test_build_failure(dev);
    test_mvq_program(dev);
    test_no_platform();

    remove_cache_dir();
    return tu_finish();
}

#endif
