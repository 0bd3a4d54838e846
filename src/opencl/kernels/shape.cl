/* REPEAT, CONCAT, PAD, ARANGE and ACC (ct_shape_args): one unit of dst a work-item (a 2-d
 * launch: dim 0, and the rows, at most 65535 of them at once), its
 * source unit found from its indices and copied as bytes (PAD's zeros, ARANGE's values and
 * ACC's sums in float). */

/* es bytes from s to d: one load where vec says the addresses allow it. */
void sh_copy(__global uchar *d, __global const uchar *s, const int es, const int vec) {
    if (vec) {
        switch (es) {
        case 1: *d = *s; return;
        case 2: *(__global ushort *)d = *(__global const ushort *)s; return;
        case 4: *(__global uint *)d = *(__global const uint *)s; return;
        case 8: *(__global ulong *)d = *(__global const ulong *)s; return;
        default: break;
        }
    }
    for (int k = 0; k < es; k++) d[k] = s[k];
}

long sh_wrap(const long i, const long n) { return ((i % n) + n) % n; }

__kernel void ct_shape(__global const uchar *src0, ulong offs0, __global const uchar *src1, ulong offs1,
                       __global uchar *dst, ulong offsd, const ct_shape_args a) {
    /* a 2-d launch: dim 0 of the tensor, and its rows (dims 1-3) strided by the launch's rows */
    const long i0 = (long)get_global_id(0);
    if (i0 >= a.ne0) return;
    const long nrows = a.ne1 * a.ne2 * a.ne3;
    for (long row = (long)get_global_id(1); row < nrows; row += (long)get_global_size(1)) {
        const long i1 = row % a.ne1, i23 = row / a.ne1;
        long j[4] = {i0, i1, i23 % a.ne2, i23 / a.ne2};
        __global uchar *d = dst + offsd + (ulong)j[0] * a.nb0 + (ulong)j[1] * a.nb1 + (ulong)j[2] * a.nb2 + (ulong)j[3] * a.nb3;
        switch (a.op) {
        case CT_SHAPE_REPEAT: {
            const ulong s = (ulong)(j[0] % a.ne00) * a.nb00 + (ulong)(j[1] % a.ne01) * a.nb01 +
                            (ulong)(j[2] % a.ne02) * a.nb02 + (ulong)(j[3] % a.ne03) * a.nb03;
            sh_copy(d, src0 + offs0 + s, a.es, a.vec);
            break;
        }
        case CT_SHAPE_CONCAT: {
            const int dim = a.p[0];
            const long na = dim == 0 ? a.ne00 : dim == 1 ? a.ne01 : dim == 2 ? a.ne02 : a.ne03;
            if (j[dim] < na) {
                const ulong s = (ulong)j[0] * a.nb00 + (ulong)j[1] * a.nb01 + (ulong)j[2] * a.nb02 + (ulong)j[3] * a.nb03;
                sh_copy(d, src0 + offs0 + s, a.es, a.vec);
            } else {
                j[dim] -= na;
                const ulong s = (ulong)j[0] * a.nb10 + (ulong)j[1] * a.nb11 + (ulong)j[2] * a.nb12 + (ulong)j[3] * a.nb13;
                sh_copy(d, src1 + offs1 + s, a.es, a.vec);
            }
            break;
        }
        case CT_SHAPE_PAD: {
            const long ne[4] = {a.ne00, a.ne01, a.ne02, a.ne03};
            bool inside = true;
            for (int k = 0; k < 4; k++) {
                j[k] -= a.p[2 * k];
                if (a.p[8]) j[k] = sh_wrap(j[k], ne[k]);
                else inside = inside && j[k] >= 0 && j[k] < ne[k];
            }
            float v = 0.0f;
            if (inside) {
                const ulong s = (ulong)j[0] * a.nb00 + (ulong)j[1] * a.nb01 + (ulong)j[2] * a.nb02 + (ulong)j[3] * a.nb03;
                v = *(__global const float *)(src0 + offs0 + s);
            }
            *(__global float *)d = v;
            break;
        }
        case CT_SHAPE_ARANGE: *(__global float *)d = a.f[0] + a.f[2] * (float)j[0]; break;
        case CT_SHAPE_ACC: {
            /* j indexes b; the window element of a and dst is at the same byte offset */
            const ulong w = (ulong)a.p[3] + (ulong)j[0] * 4 + (ulong)j[1] * (ulong)a.p[0] + (ulong)j[2] * (ulong)a.p[1] +
                            (ulong)j[3] * (ulong)a.p[2];
            const ulong s = (ulong)j[0] * a.nb10 + (ulong)j[1] * a.nb11 + (ulong)j[2] * a.nb12 + (ulong)j[3] * a.nb13;
            const float x = *(__global const float *)(src0 + offs0 + w);
            *(__global float *)(dst + offsd + w) = x + *(__global const float *)(src1 + offs1 + s);
            break;
        }
        default: break;
        }
    }
}
