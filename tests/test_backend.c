/* The backend interface: registry, devices, buffer types, buffers, the generic
 * wrappers' argument checks, ct_context_alloc_tensors (packing, alignment,
 * splitting, rollback) and the CPU backend's graph compute (threads, abort,
 * unsupported ops, op errors, allocation failures). */
#include "testutil.h"
#include "core/internal.h"
#include "ctensor-backend-impl.h"
#include "cpu/cpu_ops.h"

#include <math.h>
#include <stdlib.h>

static ct_device *cpu_dev;
static ct_buffer_type *cpu_buft;

/* ---- a fake buffer type wrapping the CPU host type ------------------------- */

typedef struct fake_cfg {
    size_t max_size;
    bool host;
    int alloc_calls;
    int fail_alloc_at;        /* fail the n-th alloc (1-based), 0: never */
    const char *fail_init;    /* init_tensor fails for the tensor of this name */
} fake_cfg;

static const char *fake_get_name(const ct_buffer_type *buft) {
    return ((const fake_cfg *)buft->context)->host ? "FAKE_HOST" : "FAKE_DEVICE";
}

static ct_status fake_init_tensor(ct_buffer *buffer, ct_tensor *t) {
    const fake_cfg *cfg = buffer->buft->context;
    if (cfg->fail_init && strcmp(t->name, cfg->fail_init) == 0) {
        return ct_fail(CT_DEVICE_ERROR, "fake_init_tensor: refusing '%s'", t->name);
    }
    return CT_OK;
}

static ct_status fake_alloc_buffer(ct_buffer_type *buft, size_t size, ct_buffer **buffer) {
    fake_cfg *cfg = buft->context;
    cfg->alloc_calls++;
    if (cfg->alloc_calls == cfg->fail_alloc_at) {
        return ct_fail(CT_OUT_OF_MEMORY, "fake_alloc_buffer: call %d fails", cfg->alloc_calls);
    }
    ct_status st = cpu_buft->iface.alloc_buffer(cpu_buft, size, buffer);
    if (st != CT_OK) return st;
    (*buffer)->buft = buft;
    (*buffer)->iface.init_tensor = fake_init_tensor;
    return CT_OK;
}

static size_t fake_get_alignment(const ct_buffer_type *buft) {
    (void)buft;
    return cpu_buft->iface.get_alignment(cpu_buft);
}

static size_t fake_get_max_size(const ct_buffer_type *buft) { return ((const fake_cfg *)buft->context)->max_size; }

static bool fake_is_host(const ct_buffer_type *buft) { return ((const fake_cfg *)buft->context)->host; }

static ct_buffer_type make_fake(fake_cfg *cfg) {
    return (ct_buffer_type){
        .iface = {
            .get_name = fake_get_name,
            .alloc_buffer = fake_alloc_buffer,
            .get_alignment = fake_get_alignment,
            .get_max_size = fake_get_max_size,
            .get_alloc_size = NULL,
            .is_host = fake_is_host,
        },
        .device = NULL,
        .context = cfg,
    };
}

/* ---- helpers ---------------------------------------------------------------- */

/* Allocator hooks that fail on demand (huge real allocations abort under ASan). */
static int fail_allocs;
static void *failing_alloc(size_t size, size_t alignment, void *user) {
    (void)user;
    if (fail_allocs) return NULL;
    void *p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}
static void plain_free(void *p, void *user) {
    (void)user;
    free(p);
}

static ct_context *new_ctx(size_t n_tensors) {
    ct_context_params p = {
        .mem_size = n_tensors * ct_tensor_overhead() + ct_graph_overhead(64), .mem_buffer = NULL, .no_alloc = true};
    ct_context *ctx = ct_context_new(p);
    CHECK(ctx != NULL);
    return ctx;
}

static void fill_random(ct_tensor *t) {
    size_t n = ct_nbytes(t);
    unsigned char *b = malloc(n ? n : 1);
    tu_fill_bytes(b, n);
    CHECK(ct_tensor_set(t, b, 0, n) == CT_OK);
    free(b);
}

static bool within(const void *p, size_t n, const void *base, size_t size) {
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
    return a >= b && n <= size && a - b <= size - n;
}

/* ---- registry and devices ----------------------------------------------------- */

static void test_registry(void) {
    CHECK(ct_backend_reg_count() >= 1);
    ct_backend_reg *reg = ct_backend_reg_get(0);
    CHECK(reg != NULL && strcmp(ct_backend_reg_name(reg), "CPU") == 0);
    CHECK(ct_backend_reg_by_name("cpu") == reg);
    CHECK(ct_backend_reg_by_name("no such backend") == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "no registration named 'no such backend'");
    CHECK(ct_backend_reg_get(ct_backend_reg_count()) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_reg_get: index");
    CHECK(ct_backend_reg_by_name(NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "name is NULL");
    CHECK(ct_backend_reg_dev_count(reg) == 1);
    CHECK(ct_backend_reg_dev_get(reg, 1) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_reg_dev_get: index 1 out of range");

    /* every registration's devices appear in the flat list, in registry order */
    size_t total = 0;
    for (size_t r = 0; r < ct_backend_reg_count(); r++) {
        ct_backend_reg *rr = ct_backend_reg_get(r);
        for (size_t d = 0; d < ct_backend_reg_dev_count(rr); d++, total++) {
            ct_device *dev = ct_backend_reg_dev_get(rr, d);
            CHECK(ct_device_get(total) == dev);
            CHECK(ct_device_reg(dev) == rr);
        }
    }
    CHECK(total == ct_device_count());
    CHECK(ct_device_get(total) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_device_get: index");

    ct_device *dev = ct_device_get(0);
    CHECK(dev == cpu_dev);
    CHECK(strcmp(ct_device_name(dev), "CPU") == 0);
    CHECK(ct_device_by_name("cPu") == dev);
    CHECK(ct_device_by_name("") == NULL);
    CHECK(ct_device_by_type(CT_DEVICE_TYPE_CPU) == dev);
    CHECK(ct_device_get_type(dev) == CT_DEVICE_TYPE_CPU);
    CHECK(ct_device_reg(dev) == reg);
    CHECK(strcmp(ct_device_type_name(CT_DEVICE_TYPE_CPU), "CPU") == 0);
    CHECK(strcmp(ct_device_type_name(CT_DEVICE_TYPE_GPU), "GPU") == 0);
    CHECK(strcmp(ct_device_type_name(CT_DEVICE_TYPE_ACCEL), "ACCEL") == 0);

    ct_device_props props;
    CHECK(ct_device_get_props(dev, &props) == CT_OK);
    CHECK(strcmp(props.name, "CPU") == 0);
    CHECK(props.description && props.description[0] != '\0');
    CHECK(props.type == CT_DEVICE_TYPE_CPU);
    CHECK(props.memory_total > (size_t)1 << 20);
    CHECK(props.memory_free > 0 && props.memory_free <= props.memory_total);
    CHECK(!props.caps.async && !props.caps.host_buffer && props.caps.buffer_from_host_ptr && !props.caps.events);
    CHECK(strcmp(ct_device_description(dev), props.description) == 0);
    printf("CPU device: %s, %zu of %zu MiB free\n", props.description, props.memory_free >> 20,
           props.memory_total >> 20);
    size_t f = 1, t = 1;
    CHECK(ct_device_memory(dev, &f, &t) == CT_OK && t == props.memory_total && f <= t);
    CHECK(ct_device_memory(dev, NULL, &t) == CT_OK);

    CHECK(ct_device_get_props(NULL, &props) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_device_get_props: dev is NULL");
    CHECK(ct_device_get_props(dev, NULL) == CT_INVALID_ARGUMENT);
    CHECK(ct_device_name(NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_device_name");
    CHECK(ct_device_memory(NULL, &f, &t) == CT_INVALID_ARGUMENT && f == 0 && t == 0);

    /* the host buffer type */
    CHECK(cpu_buft != NULL && strcmp(ct_buffer_type_name(cpu_buft), "CPU") == 0);
    CHECK(ct_buffer_type_alignment(cpu_buft) == 64);
    CHECK(ct_buffer_type_max_size(cpu_buft) == SIZE_MAX);
    CHECK(ct_buffer_type_is_host(cpu_buft));
    CHECK(ct_buffer_type_device(cpu_buft) == dev);
    CHECK(ct_device_host_buffer_type(dev) == NULL);
    CHECK(ct_device_supports_buft(dev, cpu_buft));
    CHECK(!ct_device_supports_buft(dev, NULL));
    CHECK(!ct_device_supports_buft(NULL, cpu_buft));
    CHECK(!ct_buffer_type_is_host(NULL));
    CHECK(ct_buffer_type_name(NULL) == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_buffer_type_name: buft is NULL");

    /* fake types: a host one is usable by the CPU, a device one is not */
    fake_cfg hc = {.max_size = 1000, .host = true}, dc = {.max_size = SIZE_MAX, .host = false};
    ct_buffer_type host_fake = make_fake(&hc), dev_fake = make_fake(&dc);
    CHECK(ct_device_supports_buft(dev, &host_fake));
    CHECK(!ct_device_supports_buft(dev, &dev_fake));
    CHECK(ct_buffer_type_max_size(&host_fake) == 1000);
}

static void test_backend_objects(void) {
    ct_backend *b = NULL;
    CHECK(ct_backend_cpu_init(&b) == CT_OK && b != NULL);
    CHECK(ct_backend_is_cpu(b));
    CHECK(strcmp(ct_backend_name(b), "CPU") == 0);
    CHECK(ct_backend_get_device(b) == cpu_dev);
    CHECK(ct_backend_buffer_type(b) == cpu_buft);
    CHECK(ct_backend_synchronize(b) == CT_OK);
    CHECK(ct_backend_cpu_set_n_threads(b, 0) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "n_threads=0");
    CHECK(ct_backend_cpu_set_n_threads(b, 100000) == CT_INVALID_ARGUMENT);
    CHECK(ct_backend_cpu_set_n_threads(b, 3) == CT_OK);
    ct_backend_free(b);
    ct_backend_free(NULL);

    b = (ct_backend *)1;
    CHECK(ct_backend_init_by_name("cpu", "n_threads=2", &b) == CT_OK && ct_backend_is_cpu(b));
    ct_backend_free(b);
    CHECK(ct_backend_init_by_name("CPU", " n_threads=5 , ", &b) == CT_OK);
    ct_backend_free(b);
    const char *bad[] = {"n_threads=0", "n_threads=abc", "n_threads=", "n_threads=2x", "threads=2", "n_threads=-1"};
    for (size_t i = 0; i < CT_ARRAY_LEN(bad); i++) {
        b = (ct_backend *)1;
        CHECK(ct_backend_init_by_name("CPU", bad[i], &b) == CT_INVALID_ARGUMENT && b == NULL);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_device_init_backend: CPU params");
    }
    CHECK(ct_backend_init_by_name("no such device", NULL, &b) == CT_INVALID_ARGUMENT && b == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "no device named 'no such device'");
    CHECK(ct_backend_init_by_name(NULL, NULL, &b) == CT_INVALID_ARGUMENT);
    CHECK(ct_backend_init_by_name("CPU", NULL, NULL) == CT_INVALID_ARGUMENT);
    CHECK(ct_device_init_backend(NULL, NULL, &b) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_device_init_backend: dev is NULL");

    /* no GPU registered here: the best is the CPU */
    CHECK(ct_backend_init_best(&b) == CT_OK);
    if (!ct_device_by_type(CT_DEVICE_TYPE_GPU) && !ct_device_by_type(CT_DEVICE_TYPE_ACCEL)) CHECK(ct_backend_is_cpu(b));
    ct_backend_free(b);

    /* another registration's backend is not the CPU's */
    ct_device *ref = ct_device_by_name("REF");
    if (ref) {
        CHECK(ct_device_init_backend(ref, NULL, &b) == CT_OK);
        CHECK(!ct_backend_is_cpu(b));
        CHECK(ct_backend_cpu_set_n_threads(b, 2) == CT_INVALID_ARGUMENT);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "is not the CPU backend");
        ct_backend_free(b);
    }
    CHECK(ct_backend_cpu_set_n_threads(NULL, 2) == CT_INVALID_ARGUMENT);
    CHECK(!ct_backend_is_cpu(NULL));
    CHECK(ct_backend_name(NULL) == NULL);
    CHECK(!ct_backend_supports_op(NULL, NULL));
    CHECK(ct_backend_graph_compute(NULL, NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: backend is NULL");
}

/* ---- buffers ------------------------------------------------------------------ */

static void test_buffers(void) {
    ct_buffer *buf = (ct_buffer *)1;

    /* zero size: a valid, empty buffer */
    CHECK(ct_buffer_type_alloc(cpu_buft, 0, &buf) == CT_OK && buf != NULL);
    CHECK(ct_buffer_base(buf) == NULL && ct_buffer_size(buf) == 0);
    CHECK(ct_buffer_get_type(buf) == cpu_buft && ct_buffer_is_host(buf));
    CHECK(ct_buffer_clear(buf, 7) == CT_OK);
    ct_context *ctx = new_ctx(16);
    ct_tensor *t = ct_tensor_new_1d(ctx, CT_TYPE_F32, 10);
    ct_tensor_set_name(t, "t");
    CHECK(ct_buffer_alloc_tensor(buf, t, NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "the buffer has no memory");
    ct_buffer_free(buf);
    ct_buffer_free(NULL);

    /* too large */
    ct_allocator hooks = {failing_alloc, plain_free, NULL};
    CHECK(ct_set_allocator(&hooks) == CT_OK);
    fail_allocs = 1;
    CHECK(ct_buffer_type_alloc(cpu_buft, 4096, &buf) == CT_OUT_OF_MEMORY && buf == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "cannot allocate 4096 bytes of CPU memory");
    fail_allocs = 0;
    CHECK(ct_set_allocator(NULL) == CT_OK);
    fake_cfg hc = {.max_size = 1000, .host = true};
    ct_buffer_type small = make_fake(&hc);
    CHECK(ct_buffer_type_alloc(&small, 1001, &buf) == CT_OUT_OF_MEMORY && buf == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "size 1001 exceeds the max size 1000 of buffer type FAKE_HOST");
    CHECK(ct_buffer_type_alloc(NULL, 16, &buf) == CT_INVALID_ARGUMENT);
    CHECK(ct_buffer_type_alloc(cpu_buft, 16, NULL) == CT_INVALID_ARGUMENT);

    /* a 128-byte buffer */
    CHECK(ct_buffer_type_alloc(cpu_buft, 128, &buf) == CT_OK);
    unsigned char *base = ct_buffer_base(buf);
    CHECK(base != NULL && (uintptr_t)base % 64 == 0 && ct_buffer_size(buf) == 128);
    CHECK(ct_buffer_clear(buf, 0xAB) == CT_OK);
    bool all = true;
    for (int i = 0; i < 128; i++) all = all && base[i] == 0xAB;
    CHECK(all);
    CHECK(ct_buffer_get_usage(buf) == CT_BUFFER_USAGE_ANY);
    ct_buffer_set_usage(buf, CT_BUFFER_USAGE_WEIGHTS);
    CHECK(ct_buffer_get_usage(buf) == CT_BUFFER_USAGE_WEIGHTS);
    ct_buffer_set_usage(buf, (ct_buffer_usage)7);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "usage 7");
    CHECK(ct_buffer_get_usage(buf) == CT_BUFFER_USAGE_WEIGHTS);

    /* ct_buffer_alloc_tensor bounds: 40 bytes fit in [base, base + 88] */
    size_t as = 0;
    CHECK(ct_buffer_type_alloc_size(cpu_buft, t, &as) == CT_OK && as == 40);
    CHECK(ct_buffer_alloc_tensor(buf, t, base + 89) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_buffer_alloc_tensor: tensor 't' of 40 bytes");
    CHECK(ct_buffer_alloc_tensor(buf, t, base - 4) == CT_INVALID_ARGUMENT);
    CHECK(ct_buffer_alloc_tensor(buf, t, (void *)(uintptr_t)-8) == CT_INVALID_ARGUMENT);
    CHECK(t->buffer == NULL && t->data == NULL);
    ct_tensor *big = ct_tensor_new_1d(ctx, CT_TYPE_F32, 33); /* 132 bytes: bigger than the buffer */
    CHECK(ct_buffer_alloc_tensor(buf, big, base) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "does not fit");
    CHECK(ct_buffer_alloc_tensor(buf, t, base + 88) == CT_OK && t->buffer == buf && t->data == base + 88);
    CHECK(ct_buffer_alloc_tensor(buf, t, base) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "already allocated");
    ct_tensor *v = ct_view_1d(ctx, t, 2, 8);
    CHECK(v != NULL);
    ct_tensor_set_name(v, "v");
    CHECK(ct_buffer_alloc_tensor(buf, v, base) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is a view of 't'");
    CHECK(ct_buffer_alloc_tensor(NULL, t, base) == CT_INVALID_ARGUMENT);
    CHECK(ct_buffer_alloc_tensor(buf, NULL, base) == CT_INVALID_ARGUMENT);

    /* views made after the root was placed, and ct_buffer_init_view */
    CHECK(ct_buffer_init_view(v) == CT_OK && v->buffer == buf && v->data == base + 96);
    CHECK(ct_buffer_init_view(t) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "tensor 't' is not a view");
    CHECK(ct_buffer_init_view(NULL) == CT_INVALID_ARGUMENT);
    ct_tensor *u = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    ct_tensor_set_name(u, "u");
    ct_tensor *uv = ct_view_1d(ctx, u, 2, 4);
    CHECK(ct_buffer_init_view(uv) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "its view_src 'u' is not allocated");
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* caller memory: used in place, not freed with the buffer */
    float host[64];
    for (int i = 0; i < 64; i++) host[i] = (float)i;
    CHECK(ct_device_buffer_from_host_ptr(cpu_dev, host, sizeof host, sizeof host, &buf) == CT_OK);
    CHECK(ct_buffer_base(buf) == (void *)host && ct_buffer_size(buf) == sizeof host);
    CHECK(ct_buffer_get_type(buf) == cpu_buft);
    ctx = new_ctx(4);
    t = ct_tensor_new_1d(ctx, CT_TYPE_F32, 16);
    CHECK(ct_buffer_alloc_tensor(buf, t, host + 8) == CT_OK);
    float vals[16];
    tu_fill_uniform(vals, 16, -1, 1);
    CHECK(ct_tensor_set(t, vals, 0, sizeof vals) == CT_OK);
    CHECK(memcmp(host + 8, vals, sizeof vals) == 0 && host[7] == 7.0f && host[24] == 24.0f);
    ct_buffer_free(buf);
    CHECK(host[63] == 63.0f);
    ct_context_free(ctx);
    CHECK(ct_device_buffer_from_host_ptr(cpu_dev, NULL, 16, 16, &buf) == CT_INVALID_ARGUMENT && buf == NULL);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ptr is NULL but size is 16");
    CHECK(ct_device_buffer_from_host_ptr(cpu_dev, NULL, 0, 0, &buf) == CT_OK && ct_buffer_size(buf) == 0);
    ct_buffer_free(buf);
    CHECK(ct_device_buffer_from_host_ptr(NULL, host, 4, 4, &buf) == CT_INVALID_ARGUMENT);
}

/* ct_tensor_copy between the buffers of every pair of devices (CPU, and OpenCL
 * where present: device to device, host to device, device to host), then its
 * argument checks. */
static void test_tensor_copy(void) {
    size_t nd = ct_device_count();
    for (size_t i = 0; i < nd; i++) {
        for (size_t j = 0; j < nd; j++) {
            ct_device *da = ct_device_get(i), *db = ct_device_get(j);
            ct_context *ctx = new_ctx(8);
            /* an odd byte count, and a copy that starts inside a buffer */
            ct_tensor *pad = ct_tensor_new_1d(ctx, CT_TYPE_I8, 3);
            ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F16, 1001, 3);
            ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F16, 1001, 3);
            (void)pad;
            ct_buffer *ba = NULL, *bb = NULL;
            ct_context *ctx_b = new_ctx(4);
            ct_tensor *b2 = ct_tensor_new_2d(ctx_b, CT_TYPE_F16, 1001, 3);
            ct_tensor_set_name(b2, "b2");
            CHECK(ct_context_alloc_tensors(ctx, ct_device_buffer_type(da), &ba) == CT_OK);
            CHECK(ct_context_alloc_tensors(ctx_b, ct_device_buffer_type(db), &bb) == CT_OK);
            size_t n = ct_nbytes(a);
            uint8_t *x = malloc(n), *y = malloc(n);
            CHECK(x && y);
            if (x && y && ba && bb) {
                tu_fill_bytes(x, n);
                CHECK(ct_tensor_set(a, x, 0, n) == CT_OK);
                CHECK(ct_tensor_copy(a, b2) == CT_OK); /* device i -> device j */
                memset(y, 0, n);
                CHECK(ct_tensor_get(b2, y, 0, n) == CT_OK && memcmp(x, y, n) == 0);
                CHECK(ct_tensor_memset(b, 0, 0, n) == CT_OK);
                CHECK(ct_tensor_copy(b2, b) == CT_OK); /* device j -> device i */
                memset(y, 0, n);
                CHECK(ct_tensor_get(b, y, 0, n) == CT_OK && memcmp(x, y, n) == 0);
                CHECK(ct_tensor_copy(a, a) == CT_OK);
            }
            free(x);
            free(y);
            ct_buffer_free(ba);
            ct_buffer_free(bb);
            ct_context_free(ctx);
            ct_context_free(ctx_b);
        }
    }

    ct_context *ctx = new_ctx(10);
    ct_tensor *a = ct_tensor_new_1d(ctx, CT_TYPE_F32, 16);
    ct_tensor *h = ct_tensor_new_1d(ctx, CT_TYPE_F16, 16);
    ct_tensor *m = ct_tensor_new_2d(ctx, CT_TYPE_F32, 4, 4);
    ct_tensor_set_name(a, "a");
    ct_tensor_set_name(h, "h");
    ct_tensor_set_name(m, "m");
    ct_tensor *col = ct_view_2d(ctx, m, 1, 4, m->nb[1], 0); /* not contiguous */
    ct_tensor *lo = ct_view_1d(ctx, a, 8, 0), *hi = ct_view_1d(ctx, a, 8, 4 * sizeof(float));
    ct_tensor *a2 = ct_tensor_new_1d(ctx, CT_TYPE_F32, 16);
    CHECK(ct_tensor_copy(a, a2) == CT_INVALID_ARGUMENT); /* not allocated yet */
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_copy: tensor 'a' is not in a buffer");
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    CHECK(ct_tensor_copy(NULL, a) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_copy: src is NULL");
    CHECK(ct_tensor_copy(a, NULL) == CT_INVALID_ARGUMENT);
    CHECK(ct_tensor_copy(a, h) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "src 'a' (f32 [16,1,1,1]) and dst 'h' (f16 [16,1,1,1])");
    CHECK(ct_tensor_copy(a, m) == CT_INVALID_ARGUMENT); /* same size, other shape */
    ct_tensor *r = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    CHECK(r != NULL);
    CHECK(ct_tensor_copy(col, r) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "not contiguous");
    CHECK(ct_buffer_init_view(lo) == CT_OK && ct_buffer_init_view(hi) == CT_OK);
    CHECK(ct_tensor_copy(lo, hi) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overlap (32 bytes, 16 apart)");
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Two buffers over one allocation (ct_device_buffer_from_host_ptr on every device that can,
 * in every pair): overlapping ranges are refused by address, as within one buffer, before
 * any memcpy (ASan would report memcpy-param-overlap), and leave the memory as it was; a
 * copy between disjoint ranges of the two gives memmove's bytes; the same address in both
 * is a no-op. And two device buffers (whose tensor addresses may be equal placeholders)
 * still copy. */
static void test_tensor_copy_aliased(void) {
    enum { SZ = 8192, T = 256 }; /* buffers over [0, SZ) and [SZ/4, SZ/4 + SZ/2); tensors of T floats */
    uint8_t *mem = malloc(SZ), *snap = malloc(SZ), *want = malloc(SZ);
    CHECK(mem && snap && want);
    size_t nd = ct_device_count(), pairs = 0;
    for (size_t i = 0; mem && snap && want && i < nd; i++) {
        for (size_t j = 0; j < nd; j++) {
            ct_device *da = ct_device_get(i), *db = ct_device_get(j);
            ct_device_props pa, pb;
            ct_device_get_props(da, &pa);
            ct_device_get_props(db, &pb);
            if (!pa.caps.buffer_from_host_ptr || !pb.caps.buffer_from_host_ptr) continue;
            ct_buffer *ba = NULL, *bb = NULL;
            CHECK(ct_device_buffer_from_host_ptr(da, mem, SZ, SZ, &ba) == CT_OK);
            CHECK(ct_device_buffer_from_host_ptr(db, mem + SZ / 4, SZ / 2, SZ / 2, &bb) == CT_OK);
            ct_context *ctx = new_ctx(8);
            /* three placements (byte offsets into mem): overlapping by 3/4 of the tensor, disjoint,
             * and the same address */
            static const size_t s_at[3] = {SZ / 4 + 256, 4096 + 1024, SZ / 4 + 512};
            static const size_t d_at[3] = {SZ / 4 + 512, SZ / 4 + 64, SZ / 4 + 512};
            for (int k = 0; ba && bb && k < 3; k++) {
                pairs++;
                ct_tensor *src = ct_tensor_new_1d(ctx, CT_TYPE_F32, T), *dst = ct_tensor_new_1d(ctx, CT_TYPE_F32, T);
                ct_tensor_set_name(src, "src");
                ct_tensor_set_name(dst, "dst");
                CHECK(ct_buffer_alloc_tensor(ba, src, mem + s_at[k]) == CT_OK);
                CHECK(ct_buffer_alloc_tensor(bb, dst, mem + d_at[k]) == CT_OK);
                tu_fill_bytes(mem, SZ);
                memcpy(snap, mem, SZ);
                memcpy(want, mem, SZ);
                if (k == 1) memmove(want + d_at[k], want + s_at[k], T * sizeof(float));
                const ct_status st = ct_tensor_copy(src, dst);
                if (k == 0) {
                    CHECK_MSG(st == CT_INVALID_ARGUMENT, "%s -> %s: overlapping copy gave %s", ct_device_name(da),
                              ct_device_name(db), ct_status_str(st));
                    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_copy: src 'src'");
                    CHECK_ERROR(CT_INVALID_ARGUMENT, "overlap (1024 bytes, 256 apart)");
                } else {
                    CHECK_MSG(st == CT_OK, "%s -> %s: placement %d: %s", ct_device_name(da), ct_device_name(db), k,
                              ct_last_error());
                }
                CHECK_MSG(memcmp(mem, want, SZ) == 0, "%s -> %s: placement %d: memory is not memmove's (%s)",
                          ct_device_name(da), ct_device_name(db), k, k == 1 ? "copied" : "untouched");
            }
            ct_context_free(ctx);
            ct_buffer_free(ba);
            ct_buffer_free(bb);
        }
    }
    CHECK_MSG(pairs > 0, "no device wraps host memory");
    printf("ct_tensor_copy over shared host memory: %zu placements in device pairs\n", pairs);
    free(mem);
    free(snap);
    free(want);

    /* device buffers: a tensor at the start of each of two buffers of one device type */
    for (size_t i = 0; i < nd; i++) {
        ct_device *dev = ct_device_get(i);
        ct_context *ca = new_ctx(2), *cb = new_ctx(2);
        ct_tensor *a = ct_tensor_new_1d(ca, CT_TYPE_F32, T), *b = ct_tensor_new_1d(cb, CT_TYPE_F32, T);
        ct_buffer *ba = NULL, *bb = NULL;
        CHECK(ct_context_alloc_tensors(ca, ct_device_buffer_type(dev), &ba) == CT_OK);
        CHECK(ct_context_alloc_tensors(cb, ct_device_buffer_type(dev), &bb) == CT_OK);
        float x[T], y[T];
        tu_fill_uniform(x, T, -1, 1);
        memset(y, 0, sizeof y);
        if (ba && bb) {
            CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK && ct_tensor_memset(b, 0, 0, sizeof y) == CT_OK);
            CHECK(ct_tensor_copy(a, b) == CT_OK);
            CHECK(ct_tensor_get(b, y, 0, sizeof y) == CT_OK);
            CHECK_MSG(memcmp(x, y, sizeof x) == 0, "%s: a copy between two buffers was not made",
                      ct_device_name(dev));
        }
        ct_buffer_free(ba);
        ct_buffer_free(bb);
        ct_context_free(ca);
        ct_context_free(cb);
    }
}

/* ---- tensor transfers ---------------------------------------------------------- */

static void test_transfers(void) {
    ct_context *ctx = new_ctx(16);
    ct_tensor *m = ct_tensor_new_2d(ctx, CT_TYPE_F32, 7, 5);
    ct_tensor_set_name(m, "m");
    /* a 3x2 window at column 2, row 1 */
    ct_tensor *w = ct_view_2d(ctx, m, 3, 2, m->nb[1], 1 * m->nb[1] + 2 * sizeof(float));
    ct_tensor_set_name(w, "w");
    ct_tensor *loose = ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    ct_tensor_set_name(loose, "loose");

    /* nothing allocated yet */
    float x[35], y[35];
    CHECK(ct_tensor_set(m, x, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_set: tensor 'm' is not in a buffer");
    CHECK(ct_tensor_get(w, x, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_get: tensor 'w' is not in a buffer (view_src->buffer == NULL)");
    CHECK(ct_tensor_set(m, x, 0, 0) == CT_OK); /* zero size: nothing to check */
    CHECK(ct_tensor_memset(NULL, 0, 0, 0) == CT_INVALID_ARGUMENT);

    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK && buf != NULL);
    CHECK(w->buffer == buf && w->data == (char *)m->data + w->view_offs);

    tu_fill_uniform(x, 35, -10, 10);
    CHECK(ct_tensor_set(m, x, 0, sizeof x) == CT_OK);
    CHECK(ct_tensor_get(m, y, 0, sizeof y) == CT_OK && memcmp(x, y, sizeof x) == 0);
    /* partial get at an offset */
    CHECK(ct_tensor_get(m, y, 12, 8) == CT_OK && memcmp(y, x + 3, 8) == 0);

    /* a view: its bytes span row 1 col 2 .. row 2 col 4 of m */
    size_t wbytes = ct_nbytes(w);
    CHECK(wbytes == m->nb[1] + 3 * sizeof(float));
    float z[10];
    tu_fill_uniform(z, 10, 100, 200);
    CHECK(ct_tensor_set(w, z, 0, wbytes) == CT_OK);
    CHECK(ct_tensor_get(m, y, 0, sizeof y) == CT_OK);
    bool ok = true;
    for (int i = 0; i < 35; i++) {
        bool inside = i >= 9 && i < 9 + 10;
        ok = ok && y[i] == (inside ? z[i - 9] : x[i]);
    }
    CHECK(ok);
    CHECK(ct_tensor_memset(w, 0, sizeof(float), 2 * sizeof(float)) == CT_OK);
    CHECK(ct_tensor_get(m, y, 0, sizeof y) == CT_OK);
    CHECK(y[9] == z[0] && y[10] == 0.0f && y[11] == 0.0f && y[12] == z[3]);
    float wz[10];
    CHECK(ct_tensor_get(w, wz, 0, wbytes) == CT_OK && wz[1] == 0.0f && wz[9] == z[9]);
    CHECK(ct_tensor_memset(m, 0xFF, 0, sizeof y) == CT_OK);
    CHECK(ct_tensor_get(m, y, 0, sizeof y) == CT_OK);
    CHECK(isnan(y[0]) && isnan(y[34]));

    /* bounds */
    CHECK(ct_tensor_set(m, x, 4, sizeof x) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_set: tensor 'm': offset 4 + size 140 > 140 bytes");
    CHECK(ct_tensor_get(w, x, wbytes, 1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_tensor_get: tensor 'w'");
    CHECK(ct_tensor_memset(m, 0, SIZE_MAX - 2, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows");
    CHECK(ct_tensor_get(m, x, 4, SIZE_MAX) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows");
    CHECK(ct_tensor_set(m, NULL, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "data is NULL");
    CHECK(ct_tensor_get(NULL, x, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK(ct_tensor_set(m, x, sizeof x, 0) == CT_OK);

    /* a tensor whose pointer left its buffer is refused, not written */
    void *saved = m->data;
    m->data = (char *)ct_buffer_base(buf) + ct_buffer_size(buf) - 8;
    CHECK(ct_tensor_set(m, x, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is not inside its buffer");
    m->data = saved;

    /* a view created after allocation is usable at once */
    ct_tensor *row = ct_view_1d(ctx, m, 7, 4 * m->nb[1]);
    CHECK(row != NULL);
    CHECK(ct_tensor_set(row, x, 0, 28) == CT_OK);
    CHECK(ct_tensor_get(m, y, 4 * m->nb[1], 28) == CT_OK && memcmp(x, y, 28) == 0);
    CHECK(ct_buffer_init_view(row) == CT_OK);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- ct_context_alloc_tensors --------------------------------------------------- */

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

static void test_alloc_split(void) {
    fake_cfg cfg = {.max_size = 1000, .host = true};
    ct_buffer_type small = make_fake(&cfg);

    enum { N = 40 };
    ct_context *ctx = new_ctx(N + 8);
    ct_tensor *ts[N];
    for (int i = 0; i < N; i++) {
        switch (i == 0 ? 0 : tu_rand_below(5)) {
        case 0: ts[i] = ct_tensor_new_1d(ctx, CT_TYPE_F32, 1 + tu_rand_below(250)); break;
        case 1: ts[i] = ct_tensor_new_2d(ctx, CT_TYPE_F16, 1 + tu_rand_below(31), 1 + tu_rand_below(15)); break;
        case 2: ts[i] = ct_tensor_new_1d(ctx, CT_TYPE_I8, 1 + tu_rand_below(100)); break;
        case 3: ts[i] = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, 32, 1 + tu_rand_below(20)); break;
        default: ts[i] = ct_tensor_new_1d(ctx, CT_TYPE_F32, tu_rand_below(3)); break; /* 0..2 elements */
        }
        CHECK(ts[i] != NULL);
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        ct_tensor_set_name(ts[i], name);
    }
    /* a view between the tensors it does not own */
    ct_tensor *view = ct_view_1d(ctx, ts[0], 1, 0);
    CHECK(view != NULL);
    if (!view) return;

    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_OK && buf != NULL);
    CHECK(buf->n_children >= 2);
    CHECK(ct_buffer_base(buf) == NULL);
    size_t sum = 0;
    for (size_t c = 0; c < buf->n_children; c++) {
        CHECK(buf->children[c]->size <= 1000);
        CHECK(buf->children[c]->buft == &small);
        sum += buf->children[c]->size;
    }
    CHECK(ct_buffer_size(buf) == sum);
    CHECK((int)buf->n_children == cfg.alloc_calls);

    /* the exact layout: creation order, 64-aligned, a new buffer when the next one would pass 1000 */
    size_t idx = 0, cur = 0;
    bool ok = true;
    for (int i = 0; i < N; i++) {
        size_t n = ct_nbytes(ts[i]);
        size_t start = align64(cur);
        if (i > 0 && start + n > 1000) {
            idx++;
            start = 0;
        }
        cur = start + n;
        ct_buffer *child = idx < buf->n_children ? buf->children[idx] : NULL;
        ok = ok && child && ts[i]->buffer == child;
        ok = ok && child && ts[i]->data == (char *)ct_buffer_base(child) + start;
        ok = ok && (uintptr_t)ts[i]->data % 64 == 0;
        ok = ok && child && within(ts[i]->data, n, ct_buffer_base(child), child->size);
        if (!ok) {
            fprintf(stderr, "tensor %d (%zu bytes): buffer %zu offset %zu\n", i, n, idx, start);
            break;
        }
    }
    CHECK(ok);
    CHECK(idx + 1 == buf->n_children);
    CHECK(view->buffer == ts[0]->buffer && view->data == ts[0]->data);

    /* no overlap: write every tensor, read every one back */
    unsigned char *copies[N];
    for (int i = 0; i < N; i++) {
        size_t n = ct_nbytes(ts[i]);
        copies[i] = malloc(n ? n : 1);
        tu_fill_bytes(copies[i], n);
        CHECK(ct_tensor_set(ts[i], copies[i], 0, n) == CT_OK);
    }
    for (int i = 0; i < N; i++) {
        size_t n = ct_nbytes(ts[i]);
        unsigned char *back = malloc(n ? n : 1);
        CHECK(ct_tensor_get(ts[i], back, 0, n) == CT_OK);
        CHECK_MSG(memcmp(back, copies[i], n) == 0, "tensor %d", i);
        free(back);
        free(copies[i]);
    }

    /* clear and usage reach the children */
    CHECK(ct_buffer_clear(buf, 0x5A) == CT_OK);
    for (int i = 0; i < N; i++) {
        size_t n = ct_nbytes(ts[i]);
        const unsigned char *p = ts[i]->data;
        bool same = true;
        for (size_t k = 0; k < n; k++) same = same && p[k] == 0x5A;
        CHECK(same);
    }
    ct_buffer_set_usage(buf, CT_BUFFER_USAGE_COMPUTE);
    for (size_t c = 0; c < buf->n_children; c++) CHECK(ct_buffer_get_usage(buf->children[c]) == CT_BUFFER_USAGE_COMPUTE);
    CHECK(ct_buffer_alloc_tensor(buf, ct_tensor_new_1d(ctx, CT_TYPE_F32, 1), NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "multi-buffer");

    ct_buffer *again = (ct_buffer *)1;
    ct_buffer_free(buf); /* frees every child */
    ct_context_free(ctx);

    /* the one-buffer case on the CPU type, and "nothing to allocate" */
    ctx = new_ctx(8);
    ct_tensor *a = ct_tensor_new_1d(ctx, CT_TYPE_F32, 3);   /* 12 bytes at 0 */
    ct_tensor *b = ct_tensor_new_1d(ctx, CT_TYPE_I8, 65);   /* at 64 */
    ct_tensor *c = ct_tensor_new_1d(ctx, CT_TYPE_F32, 0);   /* empty, at 192 */
    ct_tensor *d = ct_tensor_new_1d(ctx, CT_TYPE_F16, 1);   /* at 192 */
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK && buf && buf->n_children == 0);
    char *base = ct_buffer_base(buf);
    CHECK(a->data == base && b->data == base + 64 && c->data == base + 192 && d->data == base + 192);
    CHECK(ct_buffer_size(buf) == 194);
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &again) == CT_OK && again == NULL);
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* only empty tensors: they still get a (1-byte) buffer and a pointer */
    ctx = new_ctx(4);
    a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 0, 3);
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK && buf != NULL);
    CHECK(a->data != NULL && a->buffer == buf);
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* an empty context */
    ctx = new_ctx(4);
    again = (ct_buffer *)1;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &again) == CT_OK && again == NULL);
    CHECK(ct_context_alloc_tensors(NULL, cpu_buft, &again) == CT_INVALID_ARGUMENT);
    CHECK(ct_context_alloc_tensors(ctx, NULL, &again) == CT_INVALID_ARGUMENT);
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, NULL) == CT_INVALID_ARGUMENT);
    ct_context_free(ctx);

    /* a context with its own memory is refused */
    ct_context_params p = {.mem_size = 4096, .mem_buffer = NULL, .no_alloc = false};
    ctx = ct_context_new(p);
    ct_tensor_new_1d(ctx, CT_TYPE_F32, 4);
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &again) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "no_alloc");
    ct_context_free(ctx);
}

static bool all_unallocated(ct_context *ctx) {
    bool ok = true;
    for (ct_tensor *t = ct_context_first_tensor(ctx); t; t = ct_context_next_tensor(ctx, t)) {
        ok = ok && t->buffer == NULL && t->data == NULL;
    }
    return ok;
}

static void test_alloc_failures(void) {
    fake_cfg cfg = {.max_size = 1000, .host = true};
    ct_buffer_type small = make_fake(&cfg);
    ct_buffer *buf = (ct_buffer *)1;

    /* one tensor larger than the max size: nothing allocated */
    ct_context *ctx = new_ctx(8);
    ct_tensor_new_1d(ctx, CT_TYPE_F32, 100);
    ct_tensor *huge = ct_tensor_new_1d(ctx, CT_TYPE_F32, 251); /* 1004 bytes */
    ct_tensor_set_name(huge, "huge");
    ct_view_1d(ctx, huge, 4, 0);
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_OUT_OF_MEMORY && buf == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "tensor 'huge' needs 1004 bytes, more than the max size 1000");
    CHECK(cfg.alloc_calls == 0);
    CHECK(all_unallocated(ctx));
    ct_context_free(ctx);

    /* exactly the max size fits alone */
    ctx = new_ctx(8);
    ct_tensor_new_1d(ctx, CT_TYPE_F32, 250);
    ct_tensor_new_1d(ctx, CT_TYPE_F32, 250);
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_OK && buf->n_children == 2);
    ct_buffer_free(buf);
    ct_context_free(ctx);

    /* the third buffer cannot be had: the first two are freed, no tensor keeps a pointer */
    ctx = new_ctx(8);
    for (int i = 0; i < 5; i++) ct_tensor_new_1d(ctx, CT_TYPE_F32, 200); /* 800 bytes each: one per buffer */
    ct_tensor *v = ct_view_1d(ctx, ct_context_first_tensor(ctx), 2, 8);
    cfg.alloc_calls = 0;
    cfg.fail_alloc_at = 3;
    buf = (ct_buffer *)1;
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_OUT_OF_MEMORY && buf == NULL);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_context_alloc_tensors: buffer 3 of 5 (800 bytes) of type FAKE_HOST: "
                                  "fake_alloc_buffer: call 3 fails");
    CHECK(all_unallocated(ctx) && v->buffer == NULL);
    cfg.fail_alloc_at = 0;

    /* init_tensor refuses the fourth tensor: everything placed so far is undone */
    ct_tensor_set_name(ct_context_next_tensor(ctx, ct_context_next_tensor(ctx, ct_context_next_tensor(ctx,
                       ct_context_first_tensor(ctx)))), "bad");
    cfg.fail_init = "bad";
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_DEVICE_ERROR && buf == NULL);
    CHECK_ERROR(CT_DEVICE_ERROR, "refusing 'bad'");
    CHECK(all_unallocated(ctx));
    cfg.fail_init = NULL;

    /* and the same context then allocates fine */
    CHECK(ct_context_alloc_tensors(ctx, &small, &buf) == CT_OK && buf->n_children == 5);
    CHECK(v->buffer == buf->children[0] && v->data == (char *)ct_context_first_tensor(ctx)->data + 8);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* ---- compute --------------------------------------------------------------------- */

typedef struct abort_state {
    int calls;
    int stop_at; /* return true on this call (1-based) and after */
} abort_state;

static bool abort_cb(void *user) {
    abort_state *s = user;
    return ++s->calls >= s->stop_at;
}

static void read_f32(const ct_tensor *t, float *out) { CHECK(ct_tensor_get(t, out, 0, ct_nbytes(t)) == CT_OK); }

static void test_compute(void) {
    ct_context *ctx = new_ctx(32);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 37, 5);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, 37, 5);
    ct_tensor *c = ct_tensor_new_2d(ctx, CT_TYPE_F32, 37, 5);
    ct_tensor_set_name(a, "a");
    ct_tensor_set_name(b, "b");
    ct_tensor_set_name(c, "c");
    ct_tensor *cb = ct_cpy(ctx, a, b);
    ct_tensor *cc = ct_cpy(ctx, a, c);
    ct_tensor *at = ct_cont(ctx, ct_transpose(ctx, a));
    ct_tensor_set_name(at, "at");
    ct_graph *g = ct_graph_new(ctx, 32);
    CHECK(ct_graph_build_forward(g, cb) == CT_OK);
    CHECK(ct_graph_build_forward(g, cc) == CT_OK);
    CHECK(ct_graph_build_forward(g, at) == CT_OK);

    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    float x[185], y[185], zero[185] = {0};
    tu_fill_uniform(x, 185, -5, 5);
    x[3] = NAN;
    x[4] = -INFINITY;
    x[5] = 1e-42f; /* subnormal */
    x[6] = -0.0f;
    CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK);

    ct_backend *be = NULL;
    CHECK(ct_backend_cpu_init(&be) == CT_OK);
    for (int nth = 1; nth <= 8; nth += (nth < 4 ? 1 : 4)) {
        CHECK(ct_backend_cpu_set_n_threads(be, nth) == CT_OK);
        CHECK(ct_buffer_clear(buf, 0) == CT_OK);
        CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK);
        for (int rep = 0; rep < 2; rep++) CHECK(ct_backend_graph_compute(be, g) == CT_OK);
        read_f32(b, y);
        CHECK_MSG(memcmp(x, y, sizeof x) == 0, "n_threads %d", nth);
        read_f32(c, y);
        CHECK(memcmp(x, y, sizeof x) == 0);
        read_f32(at, y);
        bool ok = true;
        for (int i = 0; i < 37; i++) {
            for (int j = 0; j < 5; j++) ok = ok && tu_same_f32(y[i * 5 + j], x[j * 37 + i]);
        }
        CHECK_MSG(ok, "transpose with n_threads %d", nth);
    }

    /* abort before the first node: nothing computed */
    for (int nth = 1; nth <= 3; nth += 2) {
        CHECK(ct_backend_cpu_set_n_threads(be, nth) == CT_OK);
        CHECK(ct_buffer_clear(buf, 0) == CT_OK);
        CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK);
        abort_state s = {0, 1};
        ct_backend_set_abort_callback(be, abort_cb, &s);
        CHECK(ct_backend_graph_compute(be, g) == CT_ABORTED);
        CHECK_ERROR(CT_ABORTED, "ct_backend_graph_compute: the abort callback stopped the compute before node");
        CHECK(s.calls == 1);
        read_f32(b, y);
        CHECK(memcmp(y, zero, sizeof y) == 0);

        /* abort after the first node: b done, c not */
        s = (abort_state){0, 2};
        CHECK(ct_backend_graph_compute(be, g) == CT_ABORTED);
        CHECK(s.calls == 2);
        read_f32(b, y);
        CHECK(memcmp(y, x, sizeof y) == 0);
        read_f32(c, y);
        CHECK(memcmp(y, zero, sizeof y) == 0);

        /* a callback that never stops: called before every computed node */
        s = (abort_state){0, 1000};
        CHECK(ct_backend_graph_compute(be, g) == CT_OK);
        CHECK(s.calls == 3);
        read_f32(c, y);
        CHECK(memcmp(y, x, sizeof y) == 0);
        ct_backend_set_abort_callback(be, NULL, NULL);
    }
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* A long chain on several threads: one barrier per node, and an abort in the
 * middle leaves exactly the nodes before it computed. */
static void test_compute_chain(void) {
    enum { LEN = 40 };
    ct_context *ctx = new_ctx(LEN + 8);
    ct_tensor *x = ct_tensor_new_2d(ctx, CT_TYPE_F32, 50, 3);
    ct_tensor *n[LEN];
    for (int i = 0; i < LEN; i++) n[i] = ct_dup(ctx, i ? n[i - 1] : x);
    ct_graph *g = ct_graph_new(ctx, LEN + 4);
    CHECK(ct_graph_build_forward(g, n[LEN - 1]) == CT_OK && ct_graph_n_nodes(g) == LEN);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    float v[150], w[150], zero[150] = {0};
    ct_backend *be = NULL;
    CHECK(ct_backend_init_by_name("CPU", "n_threads=4", &be) == CT_OK);
    for (int rep = 0; rep < 4; rep++) {
        tu_fill_uniform(v, 150, -1, 1);
        CHECK(ct_buffer_clear(buf, 0) == CT_OK);
        CHECK(ct_tensor_set(x, v, 0, sizeof v) == CT_OK);
        int stop = 1 + (int)tu_rand_below(LEN + 5); /* past LEN: never stops */
        abort_state s = {0, stop};
        ct_backend_set_abort_callback(be, abort_cb, &s);
        ct_status st = ct_backend_graph_compute(be, g);
        CHECK(st == (stop <= LEN ? CT_ABORTED : CT_OK));
        CHECK(s.calls == (stop <= LEN ? stop : LEN));
        bool ok = true;
        for (int i = 0; i < LEN; i++) {
            read_f32(n[i], w);
            ok = ok && memcmp(w, i < stop - 1 ? v : zero, sizeof w) == 0;
        }
        CHECK_MSG(ok, "abort at call %d", stop);
    }
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* Small nodes run on thread 0 alone and large ones on every thread
 * (cpu_backend.c, SOLO_BYTES): a graph that mixes them in every order stops at
 * exactly the node the abort callback names, and an error in either kind stops
 * the nodes after it. */
static void test_compute_mixed(void) {
    enum { LEN = 24, SMALL = 50 * 3, BIG = 4096 * 3 }; /* 1.2 KiB and 96 KiB per DUP node */
    const uint32_t pattern = 0x5A3C96u;                  /* bit i set: node i is a large one */
    ct_context *ctx = new_ctx(LEN + 16);
    ct_tensor *xs = ct_tensor_new_1d(ctx, CT_TYPE_F32, SMALL), *xb = ct_tensor_new_1d(ctx, CT_TYPE_F32, BIG);
    ct_tensor *n[LEN], *last_s = xs, *last_b = xb;
    ct_graph *g = ct_graph_new(ctx, LEN + 4);
    for (int i = 0; i < LEN; i++) {
        const bool big = (pattern >> i) & 1u;
        n[i] = ct_dup(ctx, big ? last_b : last_s);
        *(big ? &last_b : &last_s) = n[i];
        CHECK(ct_graph_build_forward(g, n[i]) == CT_OK);
    }
    CHECK(ct_graph_n_nodes(g) == LEN);
    /* a small GET_ROWS with a bad index before a large node, and the reverse */
    ct_tensor *ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, 2);
    ct_tensor *rows_s = ct_get_rows(ctx, ct_reshape_2d(ctx, xs, 50, 3), ids);
    ct_tensor *rows_b = ct_get_rows(ctx, ct_reshape_2d(ctx, xb, 4096, 3), ids);
    ct_tensor *after_b = ct_dup(ctx, xb), *after_s = ct_dup(ctx, xs);
    ct_tensor_set_name(rows_s, "rows_s");
    ct_tensor_set_name(rows_b, "rows_b");
    ct_graph *g_es = ct_graph_new(ctx, 8), *g_eb = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g_es, rows_s) == CT_OK && ct_graph_build_forward(g_es, after_b) == CT_OK);
    CHECK(ct_graph_build_forward(g_eb, rows_b) == CT_OK && ct_graph_build_forward(g_eb, after_s) == CT_OK);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);

    static float vs[SMALL], vb[BIG], w[BIG];
    tu_fill_uniform(vs, SMALL, -1, 1);
    tu_fill_uniform(vb, BIG, -1, 1);
    ct_backend *be = NULL;
    CHECK(ct_backend_cpu_init(&be) == CT_OK);
    for (int nth = 2; nth <= 3; nth++) {
        CHECK(ct_backend_cpu_set_n_threads(be, nth) == CT_OK);
        for (int stop = 1; stop <= LEN + 1; stop++) { /* LEN + 1: never stops */
            CHECK(ct_buffer_clear(buf, 0) == CT_OK);
            CHECK(ct_tensor_set(xs, vs, 0, sizeof vs) == CT_OK && ct_tensor_set(xb, vb, 0, sizeof vb) == CT_OK);
            abort_state s = {0, stop};
            ct_backend_set_abort_callback(be, abort_cb, &s);
            CHECK(ct_backend_graph_compute(be, g) == (stop <= LEN ? CT_ABORTED : CT_OK));
            CHECK(s.calls == (stop <= LEN ? stop : LEN));
            bool ok = true;
            for (int i = 0; i < LEN; i++) {
                const bool big = (pattern >> i) & 1u;
                const size_t bytes = big ? sizeof vb : sizeof vs;
                read_f32(n[i], w);
                bool zero = true;
                for (size_t e = 0; e < bytes / sizeof(float); e++) zero = zero && w[e] == 0.0f;
                ok = ok && (i < stop - 1 ? memcmp(w, big ? vb : vs, bytes) == 0 : zero);
            }
            CHECK_MSG(ok, "n_threads %d, abort at call %d", nth, stop);
        }
        ct_backend_set_abort_callback(be, NULL, NULL);

        const int32_t bad[2] = {1, 3};
        CHECK(ct_buffer_clear(buf, 0) == CT_OK);
        CHECK(ct_tensor_set(ids, bad, 0, sizeof bad) == CT_OK);
        CHECK(ct_tensor_set(xs, vs, 0, sizeof vs) == CT_OK && ct_tensor_set(xb, vb, 0, sizeof vb) == CT_OK);
        CHECK(ct_backend_graph_compute(be, g_es) == CT_INDEX_OUT_OF_RANGE);
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "ct_backend_graph_compute: node 'rows_s' (GET_ROWS): ");
        read_f32(after_b, w);
        CHECK_MSG(w[0] == 0.0f && w[BIG - 1] == 0.0f, "n_threads %d: the node after the error ran", nth);
        CHECK(ct_backend_graph_compute(be, g_eb) == CT_INDEX_OUT_OF_RANGE);
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "ct_backend_graph_compute: node 'rows_b' (GET_ROWS): ");
        read_f32(after_s, w);
        CHECK_MSG(w[0] == 0.0f && w[SMALL - 1] == 0.0f, "n_threads %d: the node after the error ran", nth);
    }
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

static void test_compute_errors(void) {
    ct_context *ctx = new_ctx(32);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 256, 2);
    ct_tensor *b = ct_tensor_new_2d(ctx, CT_TYPE_F32, 256, 2);
    ct_tensor_set_name(a, "a");
    ct_tensor *cb = ct_cpy(ctx, a, b);
    ct_tensor *q = ct_cast(ctx, a, CT_TYPE_IQ2_XXS); /* a valid graph op the CPU cannot quantize */
    ct_tensor_set_name(q, "q");
    ct_tensor *table = ct_tensor_new_2d(ctx, CT_TYPE_F32, 8, 4);
    ct_tensor *ids = ct_tensor_new_1d(ctx, CT_TYPE_I32, 3);
    ct_tensor *rows = ct_get_rows(ctx, table, ids);
    ct_tensor_set_name(rows, "rows");
    CHECK(q != NULL && rows != NULL);
    ct_graph *g_bad = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g_bad, cb) == CT_OK);
    CHECK(ct_graph_build_forward(g_bad, q) == CT_OK);
    ct_graph *g_rows = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g_rows, rows) == CT_OK);
    ct_tensor *w = ct_tensor_new_2d(ctx, CT_TYPE_IQ2_XXS, 256, 2); /* no CPU MUL_MAT kernel */
    ct_tensor *mm = ct_mul_mat(ctx, w, a);
    ct_tensor_set_name(mm, "mm");
    CHECK(mm != NULL);
    ct_graph *g_mm = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g_mm, mm) == CT_OK);

    ct_backend *be = NULL;
    CHECK(ct_backend_cpu_init(&be) == CT_OK);

    /* nothing allocated yet */
    CHECK(ct_backend_graph_compute(be, g_rows) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_graph_compute: node 'rows' (GET_ROWS): result 'rows' is not allocated");
    CHECK(ct_backend_graph_compute(be, NULL) == CT_INVALID_ARGUMENT);

    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    float x[512], y[512], zero[512] = {0};
    tu_fill_uniform(x, 512, -1, 1);
    CHECK(ct_buffer_clear(buf, 0) == CT_OK);
    CHECK(ct_tensor_set(a, x, 0, sizeof x) == CT_OK);

    /* unsupported: refused before anything runs */
    CHECK(!ct_backend_supports_op(be, q) && !ct_device_supports_op(cpu_dev, q));
    CHECK(ct_backend_supports_op(be, cb));
    CHECK(ct_backend_graph_compute(be, g_bad) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "ct_backend_graph_compute: node 'q' (CPY) is not supported by device CPU");
    read_f32(b, y);
    CHECK(memcmp(y, zero, sizeof y) == 0);
    /* the op functions rely on this check (they assert it) */
    CHECK(!ct_backend_supports_op(be, mm));
    CHECK(ct_backend_graph_compute(be, g_mm) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "ct_backend_graph_compute: node 'mm' (MUL_MAT) is not supported by device CPU");
    float mm_out[4];
    read_f32(mm, mm_out);
    CHECK(memcmp(mm_out, zero, sizeof mm_out) == 0);

    /* an index out of range: reported with the node, on every thread count */
    float tab[32];
    tu_fill_uniform(tab, 32, -3, 3);
    CHECK(ct_tensor_set(table, tab, 0, sizeof tab) == CT_OK);
    for (int nth = 1; nth <= 4; nth++) {
        CHECK(ct_backend_cpu_set_n_threads(be, nth) == CT_OK);
        int32_t bad_ids[3] = {0, 4, 1};
        CHECK(ct_tensor_set(ids, bad_ids, 0, sizeof bad_ids) == CT_OK);
        CHECK(ct_backend_graph_compute(be, g_rows) == CT_INDEX_OUT_OF_RANGE);
        CHECK_ERROR(CT_INDEX_OUT_OF_RANGE, "ct_backend_graph_compute: node 'rows' (GET_ROWS): ");
        int32_t good_ids[3] = {3, 0, 3};
        CHECK(ct_tensor_set(ids, good_ids, 0, sizeof good_ids) == CT_OK);
        CHECK(ct_backend_graph_compute(be, g_rows) == CT_OK);
        float r[24];
        read_f32(rows, r);
        CHECK(memcmp(r, tab + 24, 32) == 0 && memcmp(r + 8, tab, 32) == 0 && memcmp(r + 16, tab + 24, 32) == 0);
    }

    /* a buffer the device cannot use */
    fake_cfg dc = {.max_size = SIZE_MAX, .host = false};
    ct_buffer_type devbuft = make_fake(&dc);
    ct_context *ctx2 = new_ctx(8);
    ct_tensor *a2 = ct_tensor_new_1d(ctx2, CT_TYPE_F32, 16);
    ct_tensor_set_name(a2, "a2");
    ct_tensor *d2 = ct_dup(ctx2, a2);
    ct_graph *g2 = ct_graph_new(ctx2, 4);
    CHECK(ct_graph_build_forward(g2, d2) == CT_OK);
    ct_buffer *buf2 = NULL;
    CHECK(ct_context_alloc_tensors(ctx2, &devbuft, &buf2) == CT_OK && !ct_buffer_is_host(buf2));
    CHECK(ct_tensor_set(a2, x, 0, 64) == CT_OK); /* set/get go through its own vtable */
    CHECK(ct_tensor_get(a2, y, 0, 64) == CT_OK && memcmp(x, y, 64) == 0);
    CHECK(ct_backend_graph_compute(be, g2) == CT_UNSUPPORTED);
    CHECK_ERROR(CT_UNSUPPORTED, "is in a buffer of type FAKE_DEVICE, which device CPU cannot use");
    ct_buffer_free(buf2);
    ct_context_free(ctx2);

    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}


static void test_compute_oom(void) {
    ct_context *ctx = new_ctx(16);
    ct_tensor *a = ct_tensor_new_2d(ctx, CT_TYPE_F32, 64, 8);
    ct_tensor *d = ct_dup(ctx, a);
    ct_graph *g = ct_graph_new(ctx, 8);
    CHECK(ct_graph_build_forward(g, d) == CT_OK);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    fill_random(a);
    ct_backend *be = NULL;
    CHECK(ct_backend_cpu_init(&be) == CT_OK);
    CHECK(ct_backend_cpu_set_n_threads(be, 3) == CT_OK);

    ct_allocator hooks = {failing_alloc, plain_free, NULL};
    CHECK(ct_set_allocator(&hooks) == CT_OK);
    fail_allocs = 1;
    CHECK(ct_backend_graph_compute(be, g) == CT_OUT_OF_MEMORY);
    CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_backend_graph_compute: cannot allocate a thread pool of 3 threads");
    fail_allocs = 0;
    CHECK(ct_backend_graph_compute(be, g) == CT_OK);
    CHECK(memcmp(a->data, d->data, ct_nbytes(a)) == 0);
    CHECK(ct_set_allocator(NULL) == CT_OK);
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

/* MUL_MAT on several threads against a plain double sum: exercises the pool's
 * barriers and the scratch of a node that needs one. */
static void test_compute_mul_mat(void) {
    ct_context *ctx = new_ctx(16);
    const int K = 96, M = 13, N = 7;
    ct_tensor *wt = ct_tensor_new_2d(ctx, CT_TYPE_Q8_0, K, M);
    ct_tensor *xs = ct_tensor_new_2d(ctx, CT_TYPE_F32, K, N);
    ct_tensor *mm = ct_mul_mat(ctx, wt, xs);
    ct_graph *g = ct_graph_new(ctx, 8);
    CHECK(mm != NULL && ct_graph_build_forward(g, mm) == CT_OK);
    ct_buffer *buf = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf) == CT_OK);
    static unsigned char wq[3 * 34 * 13];
    static float wf[96 * 13], xf[96 * 7], out[13 * 7];
    tu_fill_uniform(wf, (size_t)(K * M), -1, 1);
    CHECK(ct_quantize_row(CT_TYPE_Q8_0, wf, wq, K * M) == CT_OK);
    CHECK(ct_dequantize_row(CT_TYPE_Q8_0, wq, wf, K * M) == CT_OK);
    tu_fill_uniform(xf, (size_t)(K * N), -1, 1);
    CHECK(ct_tensor_set(wt, wq, 0, sizeof wq) == CT_OK);
    CHECK(ct_tensor_set(xs, xf, 0, sizeof xf) == CT_OK);
    ct_backend *be = NULL;
    CHECK(ct_backend_init_by_name("CPU", "n_threads=1", &be) == CT_OK);
    printf("mul_mat q8_0 x f32 scratch: %zu bytes with 4 threads\n", ct_cpu_work_size(mm, 4));
    for (int nth = 1; nth <= 5; nth += 2) {
        CHECK(ct_backend_cpu_set_n_threads(be, nth) == CT_OK);
        CHECK(ct_tensor_memset(mm, 0, 0, ct_nbytes(mm)) == CT_OK);
        CHECK(ct_backend_graph_compute(be, g) == CT_OK);
        read_f32(mm, out);
        double max_err = 0;
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += (double)wf[i * K + k] * xf[j * K + k];
                double e = fabs(s - out[j * M + i]);
                if (e > max_err) max_err = e;
            }
        }
        CHECK_MSG(max_err < 0.05, "n_threads %d: max error %g", nth, max_err);
    }

    /* the scratch cannot be had: a status naming the node; then it works again */
    ct_tensor *cp = ct_dup(ctx, xs);
    ct_graph *g_cp = ct_graph_new(ctx, 4);
    CHECK(ct_graph_build_forward(g_cp, cp) == CT_OK);
    ct_buffer *buf2 = NULL;
    CHECK(ct_context_alloc_tensors(ctx, cpu_buft, &buf2) == CT_OK);
    CHECK(ct_cpu_work_size(mm, 2) > 0);
    if (ct_cpu_work_size(mm, 2) > 0) {
        ct_backend *be2 = NULL;
        CHECK(ct_backend_init_by_name("CPU", "n_threads=2", &be2) == CT_OK);
        CHECK(ct_backend_graph_compute(be2, g_cp) == CT_OK); /* starts the pool, needs no scratch */
        ct_tensor_set_name(mm, "mm");
        ct_allocator hooks = {failing_alloc, plain_free, NULL};
        CHECK(ct_set_allocator(&hooks) == CT_OK);
        fail_allocs = 1;
        CHECK(ct_backend_graph_compute(be2, g) == CT_OUT_OF_MEMORY);
        CHECK_ERROR(CT_OUT_OF_MEMORY, "ct_backend_graph_compute: node 'mm' (MUL_MAT): cannot allocate");
        fail_allocs = 0;
        CHECK(ct_set_allocator(NULL) == CT_OK);
        CHECK(ct_backend_graph_compute(be2, g) == CT_OK);
        ct_backend_free(be2);
    }
    ct_buffer_free(buf2);
    ct_backend_free(be);
    ct_buffer_free(buf);
    ct_context_free(ctx);
}

int main(void) {
    tu_init("test_backend");
    cpu_dev = ct_device_by_name("CPU");
    CHECK(cpu_dev != NULL);
    if (!cpu_dev) return tu_finish();
    cpu_buft = ct_device_buffer_type(cpu_dev);
    test_registry();
    test_backend_objects();
    test_buffers();
    test_transfers();
    test_tensor_copy();
    test_tensor_copy_aliased();
    test_alloc_split();
    test_alloc_failures();
    test_compute();
    test_compute_chain();
    test_compute_mixed();
    test_compute_errors();
    test_compute_oom();
    test_compute_mul_mat();
    return tu_finish();
}
