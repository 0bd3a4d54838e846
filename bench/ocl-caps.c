/* Prints the library's debug log while it enumerates the devices and starts a backend
 * on the one named: the OpenCL capabilities it probed (PTX dp4a, warp, cp.async).
 * cc -Iinclude bench/ocl-caps.c build/libctensor.a -lm -lpthread -ldl -lOpenCL -o caps && ./caps OpenCL1 */
#include <ctensor.h>
#include <stdio.h>

int main(int argc, char **argv) {
    ct_log_set_level(CT_LOG_DEBUG);
    ct_device *dev = ct_device_by_name(argc > 1 ? argv[1] : "OpenCL0");
    ct_backend *be = NULL;
    if (!dev || ct_device_init_backend(dev, NULL, &be) != CT_OK) {
        fprintf(stderr, "no backend on %s\n", argc > 1 ? argv[1] : "OpenCL0");
        return 1;
    }
    ct_backend_free(be);
    return 0;
}
