/* Status model: strings, per-thread messages, log callback, allocator hooks,
 * version. */
#include "testutil.h"
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>

static int log_calls;
static ct_log_level last_level;
static char last_line[256];

static void capture_log(ct_log_level level, const char *message, void *user_data) {
    CHECK(user_data == &log_calls);
    log_calls++;
    last_level = level;
    snprintf(last_line, sizeof last_line, "%s", message);
}

static void *thread_error(void *arg) {
    /* A fresh thread starts with no error and its failure does not leak out. */
    int *ok = arg;
    *ok = ct_last_status() == CT_OK && ct_last_error()[0] == '\0';
    ct_fail(CT_DEVICE_ERROR, "thread: %d", 7);
    *ok = *ok && ct_last_status() == CT_DEVICE_ERROR && strcmp(ct_last_error(), "thread: 7") == 0;
    return NULL;
}

static size_t hook_allocs, hook_frees;
static void *counting_alloc(size_t size, size_t alignment, void *user) {
    CHECK(user == &hook_allocs);
    hook_allocs++;
    void *p = NULL;
    return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}
static void counting_free(void *p, void *user) {
    CHECK(user == &hook_allocs);
    hook_frees++;
    free(p);
}
static void *failing_alloc(size_t size, size_t alignment, void *user) {
    (void)size; (void)alignment; (void)user;
    return NULL;
}

int main(void) {
    tu_init("test_status");

    CHECK(strcmp(ct_version(), CT_VERSION_STRING) == 0);
    CHECK(ct_version_number() == CT_VERSION_NUMBER);

    const ct_status all[] = {CT_OK, CT_INVALID_ARGUMENT, CT_UNSUPPORTED, CT_OUT_OF_MEMORY,
                             CT_INDEX_OUT_OF_RANGE, CT_DEVICE_ERROR, CT_ABORTED};
    for (size_t i = 0; i < CT_ARRAY_LEN(all); i++) {
        CHECK(strcmp(ct_status_str(all[i]), "unknown status") != 0);
        for (size_t j = 0; j < i; j++) CHECK(strcmp(ct_status_str(all[i]), ct_status_str(all[j])) != 0);
    }
    CHECK(strcmp(ct_status_str((ct_status)99), "unknown status") == 0);

    /* last error */
    ct_clear_error();
    CHECK(ct_last_status() == CT_OK && ct_last_error()[0] == '\0');
    CHECK(ct_fail(CT_INVALID_ARGUMENT, "ct_x: tensor '%s' ne[0]=%d", "a", 5) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_x: tensor 'a' ne[0]=5");
    pthread_t th;
    int thread_ok = 0;
    CHECK(pthread_create(&th, NULL, thread_error, &thread_ok) == 0);
    pthread_join(th, NULL);
    CHECK(thread_ok);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_x: tensor 'a' ne[0]=5"); /* untouched by the other thread */
    /* a message longer than the buffer is truncated, not overflowed */
    char longname[2000];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ct_fail(CT_INVALID_ARGUMENT, "ct_y: %s", longname);
    CHECK(strlen(ct_last_error()) < 1024 && strncmp(ct_last_error(), "ct_y: xxx", 9) == 0);

    /* logging: levels and the callback */
    CHECK(ct_log_get_level() == CT_LOG_WARN);
    ct_log_set_callback(capture_log, &log_calls);
    ct_log(CT_LOG_INFO, "dropped %d", 1);
    CHECK(log_calls == 0);
    ct_log(CT_LOG_ERROR, "kept %d", 2);
    CHECK(log_calls == 1 && last_level == CT_LOG_ERROR && strcmp(last_line, "kept 2") == 0);
    ct_log_set_level(CT_LOG_DEBUG);
    ct_fail(CT_UNSUPPORTED, "ct_z: failed");
    CHECK(log_calls == 2 && last_level == CT_LOG_DEBUG && strstr(last_line, "ct_z: failed"));
    ct_log_set_level(CT_LOG_NONE);
    ct_log(CT_LOG_ERROR, "silenced");
    CHECK(log_calls == 2);
    ct_log_set_level(CT_LOG_WARN);
    ct_log_set_callback(NULL, NULL);

    /* allocator hooks */
    CHECK(ct_set_allocator(&(ct_allocator){counting_alloc, NULL, NULL}) == CT_INVALID_ARGUMENT);
    CHECK_ERROR(CT_INVALID_ARGUMENT, "ct_set_allocator");
    CHECK(ct_set_allocator(&(ct_allocator){counting_alloc, counting_free, &hook_allocs}) == CT_OK);
    void *p = ct_aligned_alloc(256, 100);
    CHECK(p && ((uintptr_t)p % 256) == 0);
    ct_free(p);
    CHECK(hook_allocs == 1 && hook_frees == 1);
    CHECK(ct_calloc(SIZE_MAX / 2, 4) == NULL); /* overflowing count*size is refused before allocating */
    CHECK(hook_allocs == 1);
    CHECK(ct_set_allocator(&(ct_allocator){failing_alloc, counting_free, NULL}) == CT_OK);
    CHECK(ct_malloc(10) == NULL);
    CHECK(ct_set_allocator(NULL) == CT_OK);
    p = ct_malloc(0);
    CHECK(p != NULL);
    ct_free(p);

    /* checked arithmetic */
    size_t s;
    CHECK(!ct_mul_size(SIZE_MAX / 2 + 1, 2, &s));
    CHECK(ct_mul_size(3, 4, &s) && s == 12);
    CHECK(!ct_add_size(SIZE_MAX, 1, &s));
    CHECK(ct_align_up(65, 64, &s) && s == 128);
    CHECK(!ct_align_up(SIZE_MAX - 3, 64, &s));
    int64_t v;
    CHECK(!ct_mul_i64(INT64_MAX / 2 + 1, 2, &v));

    return tu_finish();
}
