/* The registry: a static list of built-in registrations, enumerated once on first
 * use (pthread_once) and torn down at exit. It allocates nothing, so its
 * initialization cannot fail and leaves nothing to free. */
#include "backend_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

/* In registry order; devices are listed in this order too, so CPU comes first. */
static ct_backend_reg *(*const builtin_regs[])(void) = {
    ct_backend_cpu_reg,
    ct_backend_ref_reg,
#ifdef CT_HAVE_OPENCL
    ct_backend_opencl_reg,
#endif
};

enum { MAX_REGS = 8, MAX_DEVICES = 256 };

static pthread_once_t registry_once = PTHREAD_ONCE_INIT;
static ct_backend_reg *regs[MAX_REGS];
static size_t n_regs;
static ct_device *devices[MAX_DEVICES];
static size_t n_devices;
/* Set at exit: from then on the registry lists nothing. */
static atomic_bool torn_down;

static void registry_teardown(void) {
    atomic_store(&torn_down, true);
    for (size_t i = n_regs; i-- > 0;) {
        ct_backend_reg *reg = regs[i];
        if (!reg->iface.get_proc_address) continue;
        ct_backend_reg_release_fn release =
            (ct_backend_reg_release_fn)(uintptr_t)reg->iface.get_proc_address(reg, CT_BACKEND_REG_RELEASE_PROC);
        if (release) release(reg);
    }
}

static void registry_init(void) {
    for (size_t i = 0; i < CT_ARRAY_LEN(builtin_regs) && n_regs < MAX_REGS; i++) {
        ct_backend_reg *reg = builtin_regs[i]();
        if (!reg) continue;
        if (reg->api_version != CT_BACKEND_API_VERSION || !reg->iface.get_name || !reg->iface.get_device_count ||
            !reg->iface.get_device) {
            ct_log(CT_LOG_WARN, "registry: skipping a registration with api_version %d (expected %d) or an "
                   "incomplete interface", reg->api_version, CT_BACKEND_API_VERSION);
            continue;
        }
        regs[n_regs++] = reg;
        size_t count = reg->iface.get_device_count(reg);
        for (size_t d = 0; d < count; d++) {
            ct_device *dev = reg->iface.get_device(reg, d);
            if (!dev) continue;
            if (n_devices == MAX_DEVICES) {
                ct_log(CT_LOG_WARN, "registry: more than %d devices; device %zu of %s ignored", MAX_DEVICES, d,
                       reg->iface.get_name(reg));
                continue;
            }
            devices[n_devices++] = dev;
        }
    }
    atexit(registry_teardown);
}

/* Registry contents after initialization, or none once torn down. */
static size_t live_regs(void) {
    pthread_once(&registry_once, registry_init);
    return atomic_load(&torn_down) ? 0 : n_regs;
}

static size_t live_devices(void) {
    pthread_once(&registry_once, registry_init);
    return atomic_load(&torn_down) ? 0 : n_devices;
}

const char *ct_device_type_name(ct_device_type type) {
    switch (type) {
    case CT_DEVICE_TYPE_CPU: return "CPU";
    case CT_DEVICE_TYPE_GPU: return "GPU";
    case CT_DEVICE_TYPE_ACCEL: return "ACCEL";
    }
    return "unknown";
}

size_t ct_backend_reg_count(void) { return live_regs(); }

ct_backend_reg *ct_backend_reg_get(size_t index) {
    size_t count = live_regs();
    if (index >= count) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_get: index %zu out of range (%zu registrations)",
                            index, count);
    }
    return regs[index];
}

ct_backend_reg *ct_backend_reg_by_name(const char *name) {
    if (!name) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_by_name: name is NULL");
    size_t count = live_regs();
    for (size_t i = 0; i < count; i++) {
        if (strcasecmp(regs[i]->iface.get_name(regs[i]), name) == 0) return regs[i];
    }
    return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_by_name: no registration named '%s'", name);
}

const char *ct_backend_reg_name(const ct_backend_reg *reg) {
    if (!reg) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_name: reg is NULL");
    return reg->iface.get_name(reg);
}

size_t ct_backend_reg_dev_count(const ct_backend_reg *reg) {
    if (!reg) {
        ct_fail(CT_INVALID_ARGUMENT, "ct_backend_reg_dev_count: reg is NULL");
        return 0;
    }
    return reg->iface.get_device_count(reg);
}

ct_device *ct_backend_reg_dev_get(const ct_backend_reg *reg, size_t index) {
    if (!reg) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_dev_get: reg is NULL");
    size_t count = reg->iface.get_device_count(reg);
    if (index >= count) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_backend_reg_dev_get: index %zu out of range (%s has %zu devices)",
                            index, reg->iface.get_name(reg), count);
    }
    return reg->iface.get_device(reg, index);
}

size_t ct_device_count(void) { return live_devices(); }

ct_device *ct_device_get(size_t index) {
    size_t count = live_devices();
    if (index >= count) {
        return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_get: index %zu out of range (%zu devices)", index, count);
    }
    return devices[index];
}

ct_device *ct_device_by_name(const char *name) {
    if (!name) return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_by_name: name is NULL");
    size_t count = live_devices();
    for (size_t i = 0; i < count; i++) {
        if (strcasecmp(devices[i]->iface.get_name(devices[i]), name) == 0) return devices[i];
    }
    return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_by_name: no device named '%s'", name);
}

ct_device *ct_device_by_type(ct_device_type type) {
    size_t count = live_devices();
    for (size_t i = 0; i < count; i++) {
        if (devices[i]->iface.get_type(devices[i]) == type) return devices[i];
    }
    return CT_FAIL_NULL(CT_INVALID_ARGUMENT, "ct_device_by_type: no device of type %s (%d)", ct_device_type_name(type),
                        (int)type);
}

ct_status ct_backend_init_by_name(const char *device_name, const char *params, ct_backend **backend) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_init_by_name: backend is NULL");
    *backend = NULL;
    if (!device_name) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_init_by_name: device_name is NULL");
    ct_device *dev = ct_device_by_name(device_name);
    if (!dev) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_init_by_name: no device named '%s'", device_name);
    return ct_device_init_backend(dev, params, backend);
}

ct_status ct_backend_init_best(ct_backend **backend) {
    if (!backend) return ct_fail(CT_INVALID_ARGUMENT, "ct_backend_init_best: backend is NULL");
    *backend = NULL;
    static const ct_device_type order[] = {CT_DEVICE_TYPE_GPU, CT_DEVICE_TYPE_ACCEL, CT_DEVICE_TYPE_CPU};
    size_t count = live_devices();
    for (size_t k = 0; k < CT_ARRAY_LEN(order); k++) {
        for (size_t i = 0; i < count; i++) {
            if (devices[i]->iface.get_type(devices[i]) == order[k]) {
                return ct_device_init_backend(devices[i], NULL, backend);
            }
        }
    }
    return ct_fail(CT_UNSUPPORTED, "ct_backend_init_best: no device registered (%zu devices)", count);
}
