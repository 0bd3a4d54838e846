/* Loads the OpenCL ICD loader at run time (see cl_api.h). The library stays
 * open for the life of the process: drivers do not expect to be unloaded while
 * their objects may still be referenced at exit. */
#define CT_CL_API_NO_MACROS
#include "cl_api.h"

#include "core/internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each pointer type must be exactly the CL headers' prototype, or a call through
 * it would be undefined behaviour that no compiler diagnoses. */
#define CHECK_TYPE(ret, name, params)                                                      \
    _Static_assert(_Generic(&cl##name, ret(CL_API_CALL *) params : 1, default : 0),     \
                   "cl_api.h: the type of cl" #name " differs from the CL headers");
CT_CL_FUNCS(CHECK_TYPE)
#undef CHECK_TYPE

/* dlsym returns an object pointer; POSIX guarantees it can hold a function's address. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers must fit in void *");

struct ct_cl_api ct_cl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool loaded;

/* Fills api from handle; false (with the missing name logged) if any is absent. */
static bool resolve(void *handle, const char *lib, struct ct_cl_api *api) {
#define RESOLVE(ret, name, params)                                                                        \
    {                                                                                                     \
        void *sym = dlsym(handle, "cl" #name);                                                            \
        if (!sym) {                                                                                       \
            ct_log(CT_LOG_WARN, "opencl: %s lacks cl" #name ", so it is not an OpenCL 1.2 library; "    \
                   "the OpenCL backend has no devices", lib);                                             \
            return false;                                                                                 \
        }                                                                                                 \
        memcpy(&api->name, &sym, sizeof sym);                                                             \
    }
    CT_CL_FUNCS(RESOLVE)
#undef RESOLVE
    return true;
}

static void load(void) {
    const char *env = getenv("CT_OPENCL_LIBRARY");
#ifdef __APPLE__
    static const char *const defaults[] = {"/System/Library/Frameworks/OpenCL.framework/OpenCL"};
#else
    static const char *const defaults[] = {"libOpenCL.so.1", "libOpenCL.so"};
#endif
    const char *const *names = defaults;
    size_t n_names = sizeof defaults / sizeof defaults[0];
    if (env && *env) {
        names = &env;
        n_names = 1;
    }

    char tried[512] = "";
    char why[256] = "";
    for (size_t i = 0; i < n_names; i++) {
        void *handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *e = dlerror();
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", names[i]);
            snprintf(why, sizeof why, "%s", e ? e : "unknown error");
            continue;
        }
        struct ct_cl_api api;
        memset(&api, 0, sizeof api);
        if (!resolve(handle, names[i], &api)) {
            dlclose(handle);
            return;
        }
        ct_cl = api;
        loaded = true;
        ct_log(CT_LOG_DEBUG, "opencl: using %s", names[i]);
        return;
    }
    ct_log(CT_LOG_INFO, "opencl: no OpenCL library (tried %s%s: %s); the OpenCL backend has no devices", tried,
           env && *env ? ", from CT_OPENCL_LIBRARY" : "", why);
}

bool ct_cl_load(void) {
    /* pthread_once's return is only an error for an invalid once object. */
    if (pthread_once(&load_once, load) != 0) return false;
    return loaded;
}
