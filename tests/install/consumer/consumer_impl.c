/* Built against an installed ctensor with the backend-author header: its vtables
 * must describe the library's objects (the CPU buffer type's name through its
 * iface equals the public accessor's). */
#include <ctensor-backend-impl.h>
#include <stdio.h>
#include <string.h>

static const char *my_name(const ct_buffer_type *buft) {
    (void)buft;
    return "consumer";
}

int main(void) {
    ct_device *cpu = ct_device_by_name("CPU");
    ct_buffer_type *buft = cpu ? ct_device_buffer_type(cpu) : NULL;
    if (!buft) {
        fprintf(stderr, "no CPU buffer type: %s\n", ct_last_error());
        return 1;
    }
    const char *via_iface = buft->iface.get_name(buft), *via_api = ct_buffer_type_name(buft);
    if (strcmp(via_iface, via_api) != 0 || buft->device != cpu) {
        fprintf(stderr, "backend-impl header disagrees with the library: iface name '%s', API name '%s'\n", via_iface,
                via_api);
        return 1;
    }
    ct_buffer_type_i mine = {.get_name = my_name};
    struct ct_buffer_type own = {.iface = mine, .device = NULL, .context = NULL};
    printf("consumer_impl: backend API %d, CPU buffer type '%s', own '%s'\n", CT_BACKEND_API_VERSION, via_iface,
           own.iface.get_name(&own));
    return 0;
}
