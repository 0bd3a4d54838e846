/* Utility kernels of the infrastructure. */

#ifdef CT_TEST_BUILD_ERROR
#error "build error requested by the test hook"
#endif

/* Raises the error flag when an I32 index of idx[0..n) lies outside [0, limit):
 * the error-flag path of graph compute, tested without any op kernel. */
__kernel void ct_flag_test(__global const char *idx_base, ulong idx_offs, int n, int limit,
                           __global int *err, int code) {
    const int i = get_global_id(0);
    if (i >= n) return;
    const int v = ((__global const int *)(idx_base + idx_offs))[i];
    if (v < 0 || v >= limit) CT_RAISE_ERROR(err, code);
}
