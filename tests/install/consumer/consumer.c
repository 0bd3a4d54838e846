/* Built against an installed ctensor: the header and the library must agree. */
#include <ctensor.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    if (strcmp(ct_version(), CT_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s but library %s\n", CT_VERSION_STRING, ct_version());
        return 1;
    }
    size_t size = 0;
    if (ct_row_size(CT_TYPE_Q4_0, 64, &size) != CT_OK || size != 36) {
        fprintf(stderr, "ct_row_size: %s\n", ct_last_error());
        return 1;
    }
    printf("consumer: ctensor %s, %s row of 64 = %zu bytes\n", ct_version(), ct_type_name(CT_TYPE_Q4_0), size);
    return 0;
}
