/* ct_backend_tensor_set_async / get_async / synchronize on every device (CPU, REF,
 * OpenCL<n>), through the public API only:
 *   - async set, compute, async get, synchronize gives the blocking path's bytes, and
 *     transfers at offsets are in order with each other and with the compute;
 *   - bad arguments (NULL backend, tensor or data, bounds, offset + size overflowing,
 *     an unallocated tensor, a buffer the device cannot use) give a status and a message
 *     naming the function, the tensor and the values, and touch neither the tensor nor
 *     the caller's memory;
 *   - the async cap: true exactly on the devices that queue (OpenCL).
 * Whether the OpenCL path really returns before the transfer is done, and mapped
 * buffers across views, are tests/test_opencl_async.c's. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#define NE0 37
#define NE1 5
#define N (NE0 * NE1)

typedef struct setup {
    ct_context *ctx;
    ct_tensor *a, *b, *at;
    ct_graph *g;
    ct_buffer *buf;
} setup;

/* a (F32 37x5, input), b = cpy(a), at = cont(transpose(a)) in buffers of buft. */
static bool make_setup(setup *s, ct_buffer_type *buft) {
    memset(s, 0, sizeof *s);
    s->ctx = ct_context_new((ct_context_params){.mem_size = 64 * ct_tensor_overhead() + ct_graph_overhead(32),
                                                .no_alloc = true});
    if (!s->ctx) return false;
    s->a = ct_tensor_new_2d(s->ctx, CT_TYPE_F32, NE0, NE1);
    s->b = ct_tensor_new_2d(s->ctx, CT_TYPE_F32, NE0, NE1);
    ct_tensor_set_name(s->a, "a");
    ct_tensor_set_name(s->b, "b");
    ct_tensor *cb = ct_cpy(s->ctx, s->a, s->b);
    s->at = ct_cont(s->ctx, ct_transpose(s->ctx, s->a));
    ct_tensor_set_name(s->at, "at");
    s->g = ct_graph_new(s->ctx, 32);
    return s->g && ct_graph_build_forward(s->g, cb) == CT_OK && ct_graph_build_forward(s->g, s->at) == CT_OK &&
           ct_context_alloc_tensors(s->ctx, buft, &s->buf) == CT_OK;
}

static void free_setup(setup *s) {
    ct_buffer_free(s->buf);
    ct_context_free(s->ctx);
}

/* A buffer type of another device that dev cannot use, or NULL. */
static ct_buffer_type *foreign_buft(const ct_device *dev) {
    for (size_t i = 0; i < ct_device_count(); i++) {
        ct_buffer_type *bt = ct_device_buffer_type(ct_device_get(i));
        if (bt && !ct_device_supports_buft(dev, bt)) return bt;
    }
    return NULL;
}

static void test_device(ct_device *dev) {
    const char *dn = ct_device_name(dev);
    printf("-- %s: %s\n", dn, ct_device_description(dev));
    ct_device_props props;
    CHECK(ct_device_get_props(dev, &props) == CT_OK);
    const bool is_opencl = strncmp(dn, "OpenCL", 6) == 0;
    CHECK_MSG(props.caps.async == is_opencl, "%s: caps.async %d", dn, props.caps.async);

    ct_backend *be = NULL;
    CHECK(ct_device_init_backend(dev, NULL, &be) == CT_OK);
    setup s;
    if (!be || !make_setup(&s, ct_device_buffer_type(dev))) {
        CHECK_MSG(false, "%s: setup failed: %s", dn, ct_last_error());
        ct_backend_free(be);
        return;
    }
    float x[N], y_block[N], yt_block[N], y[N], yt[N];
    tu_fill_uniform(x, N, -5, 5);
    const size_t nb = sizeof x;

    /* the blocking path */
    CHECK(ct_buffer_clear(s.buf, 0) == CT_OK);
    CHECK(ct_tensor_set(s.a, x, 0, nb) == CT_OK);
    CHECK(ct_backend_graph_compute(be, s.g) == CT_OK);
    CHECK(ct_tensor_get(s.b, y_block, 0, nb) == CT_OK);
    CHECK(ct_tensor_get(s.at, yt_block, 0, nb) == CT_OK);
    CHECK_MSG(memcmp(y_block, x, nb) == 0, "%s: blocking cpy", dn);

    /* the async path: a in three pieces, the middle one first written wrong and then
     * overwritten (in order), computed, both results read back async */
    CHECK(ct_buffer_clear(s.buf, 0) == CT_OK);
    float junk[N];
    for (int i = 0; i < N; i++) junk[i] = -1000.0f - (float)i;
    const size_t cut1 = 13 * sizeof(float), cut2 = 101 * sizeof(float);
    CHECK(ct_backend_tensor_set_async(be, s.a, x, 0, cut1) == CT_OK);
    CHECK(ct_backend_tensor_set_async(be, s.a, junk, cut1, cut2 - cut1) == CT_OK);
    CHECK(ct_backend_tensor_set_async(be, s.a, (const char *)x + cut1, cut1, cut2 - cut1) == CT_OK);
    CHECK(ct_backend_tensor_set_async(be, s.a, (const char *)x + cut2, cut2, nb - cut2) == CT_OK);
    CHECK(ct_backend_graph_compute(be, s.g) == CT_OK);
    memset(y, 0xAB, nb);
    memset(yt, 0xAB, nb);
    CHECK(ct_backend_tensor_get_async(be, s.b, y, 0, nb) == CT_OK);
    CHECK(ct_backend_tensor_get_async(be, s.at, yt, 0, cut1) == CT_OK);
    CHECK(ct_backend_tensor_get_async(be, s.at, (char *)yt + cut1, cut1, nb - cut1) == CT_OK);
    CHECK(ct_backend_synchronize(be) == CT_OK);
    CHECK_MSG(memcmp(y, y_block, nb) == 0, "%s: async b differs from the blocking path", dn);
    CHECK_MSG(memcmp(yt, yt_block, nb) == 0, "%s: async at differs from the blocking path", dn);

    /* set then get of the same bytes, no compute between: in order */
    float z[8] = {1, 2, 3, 4, 5, 6, 7, 8}, zr[8];
    memset(zr, 0, sizeof zr);
    CHECK(ct_backend_tensor_set_async(be, s.b, z, 40, sizeof z) == CT_OK);
    CHECK(ct_backend_tensor_get_async(be, s.b, zr, 40, sizeof zr) == CT_OK);
    CHECK(ct_backend_synchronize(be) == CT_OK);
    CHECK_MSG(memcmp(z, zr, sizeof z) == 0, "%s: set_async then get_async", dn);
    CHECK(ct_backend_synchronize(be) == CT_OK); /* nothing pending */

    /* argument errors: a status, a message, nothing touched */
    memset(y, 0xAB, nb);
    float sentinel[N];
    memset(sentinel, 0xAB, nb);
    CHECK(ct_backend_tensor_set_async(NULL, s.a, x, 0, nb) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: backend is NULL");
    CHECK(ct_backend_tensor_get_async(NULL, s.a, y, 0, nb) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_get_async: backend is NULL");
    CHECK(ct_backend_tensor_set_async(be, NULL, x, 0, nb) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: tensor is NULL");
    CHECK(ct_backend_tensor_set_async(be, s.a, NULL, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: data is NULL (size 4)");
    CHECK(ct_backend_tensor_get_async(be, s.a, NULL, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_get_async: data is NULL (size 4)");
    CHECK(ct_backend_tensor_set_async(be, s.a, junk, 4, nb) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: tensor 'a': offset 4 + size 740 > 740 bytes");
    CHECK(ct_backend_tensor_get_async(be, s.b, y, nb, 1) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_get_async: tensor 'b': offset 740 + size 1 > 740 bytes");
    CHECK(ct_backend_tensor_set_async(be, s.a, junk, SIZE_MAX - 2, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: tensor 'a': offset");
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows");
    CHECK(ct_backend_tensor_get_async(be, s.a, y, 4, SIZE_MAX) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "overflows");
    /* zero bytes: nothing to check or do, as ct_tensor_set */
    CHECK(ct_backend_tensor_set_async(be, s.a, NULL, nb, 0) == CT_OK);
    CHECK(ct_backend_tensor_get_async(be, s.a, NULL, 0, 0) == CT_OK);
    /* a tensor whose pointer left its buffer is refused, not written */
    void *saved = s.a->data;
    s.a->data = (char *)ct_buffer_base(s.buf) + ct_buffer_size(s.buf) - 8;
    CHECK(ct_backend_tensor_set_async(be, s.a, junk, 0, 4) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "is not inside its buffer");
    s.a->data = saved;

    ct_context *ctx2 = ct_context_new((ct_context_params){.mem_size = 8 * ct_tensor_overhead(), .no_alloc = true});
    ct_tensor *loose = ctx2 ? ct_tensor_new_1d(ctx2, CT_TYPE_F32, 4) : NULL;
    if (loose) {
        ct_tensor_set_name(loose, "loose");
        CHECK(ct_backend_tensor_set_async(be, loose, x, 0, 4) == CT_INVALID_ARGUMENT);
        CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_tensor_set_async: tensor 'loose' is not in a buffer");
        /* a buffer of a type this device cannot use */
        ct_buffer_type *other = foreign_buft(dev);
        ct_buffer *ob = NULL;
        if (other && ct_context_alloc_tensors(ctx2, other, &ob) == CT_OK) {
            float fill[4] = {7, 7, 7, 7}, back[4];
            CHECK(ct_tensor_set(loose, fill, 0, sizeof fill) == CT_OK);
            CHECK(ct_backend_tensor_set_async(be, loose, x, 0, sizeof fill) == CT_UNSUPPORTED);
            char want[160];
            snprintf(want, sizeof want, "ct_backend_tensor_set_async: tensor 'loose' is in a buffer of type %s, which "
                     "device %s cannot use", ct_buffer_type_name(other), dn);
            CHECK_ERROR(CT_UNSUPPORTED, want);
            CHECK(ct_backend_tensor_get_async(be, loose, y, 0, sizeof fill) == CT_UNSUPPORTED);
            CHECK_ERROR(CT_UNSUPPORTED, "ct_backend_tensor_get_async: tensor 'loose' is in a buffer of type");
            CHECK(ct_backend_synchronize(be) == CT_OK);
            CHECK(ct_tensor_get(loose, back, 0, sizeof back) == CT_OK && memcmp(back, fill, sizeof fill) == 0);
            printf("   refused a tensor in %s\n", ct_buffer_type_name(other));
        }
        ct_buffer_free(ob);
    }
    ct_context_free(ctx2);
    CHECK(ct_backend_synchronize(be) == CT_OK);
    CHECK_MSG(memcmp(y, sentinel, nb) == 0, "%s: a refused get wrote the caller's memory", dn);
    float a_now[N];
    CHECK(ct_tensor_get(s.a, a_now, 0, nb) == CT_OK);
    CHECK_MSG(memcmp(a_now, x, nb) == 0, "%s: a refused set wrote the tensor", dn);
    CHECK(ct_backend_synchronize(NULL) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_backend_synchronize: backend is NULL");

    free_setup(&s);
    ct_backend_free(be);
}

int main(void) {
    tu_init("test_async");
    int n = 0;
    for (size_t i = 0; i < ct_device_count(); i++) {
        ct_device *dev = ct_device_get(i);
        if (strncmp(ct_device_name(dev), "OpenCL", 6) == 0 && !tu_opencl_device_selected(dev)) continue;
        test_device(dev);
        n++;
    }
    CHECK(n >= 2); /* CPU and REF at least */
    return tu_finish();
}
