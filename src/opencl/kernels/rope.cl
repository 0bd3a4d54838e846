/* ROPE (NORMAL, NEOX, MROPE, IMROPE, VISION) of F32 or F16 rows, as the CPU computes
 * it: one work-item per element of a row (dim 0), rows over dims 1 and 2 (ne1, then
 * ne2·ne3). The first element of a rotated pair rotates the pair; elements outside
 * the rotated window are copied; the second element of a pair does nothing. A pair's
 * angle repeats the CPU's running product theta·theta_scale pair by pair (the
 * multi-section modes: four running thetas, VISION's restarting at each section), so
 * it is the CPU's float to the bit; YaRN's constants come from the host. */

/* The unscaled angle of pair k for positions p0..p3 (ct_rope_args says the mode). */
float rp_theta(const ct_rope_args a, const int k, const float p0, const float p1, const float p2, const float p3) {
    if ((a.mode & 8) == 0) {
        float th = p0;
        for (int i = 0; i < k; i++) th *= a.theta_scale;
        return th;
    }
    const int sect_dims = a.s0 + a.s1 + a.s2 + a.s3, sec_w = a.s0 + a.s1, sec_e = sec_w + a.s2;
    const bool vision = a.mode == 24, imrope = a.mode == 40;
    float t = p0, h = p1, w = p2, e = p3;
    for (int i = 0;; i++) {
        const int sector = i % sect_dims;
        if (vision) {
            if (sector == 0) t = p0;
            else if (sector == a.s0) h = p1;
            else if (sector == sec_w) w = p2;
            else if (sector == sec_e) e = p3;
        }
        if (i == k) {
            if (imrope) {
                if (sector % 3 == 1 && sector < 3 * a.s1) return h;
                if (sector % 3 == 2 && sector < 3 * a.s2) return w;
                if (sector % 3 == 0 && sector < 3 * a.s0) return t;
                return e;
            }
            if (sector >= a.s0 && sector < sec_w) return h;
            if (sector >= sec_w && sector < sec_w + a.s2) return w;
            if (sector >= sec_w + a.s2) return e;
            return t;
        }
        t *= a.theta_scale;
        h *= a.theta_scale;
        w *= a.theta_scale;
        e *= a.theta_scale;
    }
}

float rp_load(const __global uchar *p, const bool f16) {
    return f16 ? ct_half_to_float(*(const __global ushort *)p) : *(const __global float *)p;
}

void rp_store(__global uchar *p, const float v, const bool f16) {
    if (f16) *(__global ushort *)p = ct_float_to_half(v);
    else *(__global float *)p = v;
}

#define RP_ARGS                                                                                               \
    __global const uchar *src, ulong offs, __global uchar *dst, ulong offsd, __global const uchar *pos,       \
        ulong offp, __global const uchar *ff, ulong offf, const ct_rope_args a

void rp_elem(const bool f16, RP_ARGS) {
    const int i0 = get_global_id(0), i1 = get_global_id(1), i23 = get_global_id(2);
    if (i0 >= a.ne0 || i1 >= a.ne1) return;
    const int i2 = i23 % a.ne2, i3 = i23 / a.ne2;
    const __global uchar *x = src + offs + (ulong)i1 * a.nb01 + (ulong)i2 * a.nb02 + (ulong)i3 * a.nb03;
    __global uchar *y = dst + offsd + (ulong)i1 * a.nb1 + (ulong)i2 * a.nb2 + (ulong)i3 * a.nb3;
    const bool vision = a.mode == 24;
    const int w0 = vision ? 0 : a.n_offs, w1 = vision ? a.ne0 : a.n_offs + a.n_dims;
    if (i0 < w0 || i0 >= w1) { /* outside the rotated window: the bytes as they are */
        if (f16) *(__global ushort *)(y + (ulong)i0 * a.nb0) = *(const __global ushort *)(x + (ulong)i0 * a.nb00);
        else *(__global uint *)(y + (ulong)i0 * a.nb0) = *(const __global uint *)(x + (ulong)i0 * a.nb00);
        return;
    }
    const int r = i0 - w0;
    int k, dist;
    if (a.mode == 0) {
        if (r & 1) return;
        k = r / 2, dist = 1;
    } else {
        dist = vision ? a.n_dims : a.n_dims / 2;
        if (r >= dist) return;
        k = r;
    }
    const bool multi = (a.mode & 8) != 0;
    const __global uchar *pp = pos + offp;
    const float p0 = (float)*(const __global int *)(pp + (ulong)i2 * a.nbp);
    const float p1 = multi ? (float)*(const __global int *)(pp + (ulong)(i2 + a.ne2) * a.nbp) : 0.0f;
    const float p2 = multi ? (float)*(const __global int *)(pp + (ulong)(i2 + 2 * a.ne2) * a.nbp) : 0.0f;
    const float p3 = multi ? (float)*(const __global int *)(pp + (ulong)(i2 + 3 * a.ne2) * a.nbp) : 0.0f;
    const float fac = a.has_ff ? *(const __global float *)(ff + offf + (ulong)k * a.nbf) : 1.0f;

    const float theta_extrap = rp_theta(a, k, p0, p1, p2, p3) / fac;
    const float theta_interp = a.freq_scale * theta_extrap;
    float theta = theta_interp;
    if (a.ext_factor != 0.0f) {
        const float yr = ((float)k - a.corr0) / fmax(0.001f, a.corr1 - a.corr0);
        const float ramp_mix = (1 - fmin(1.0f, fmax(0.0f, yr))) * a.ext_factor;
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
    }
    const float c = cos(theta) * a.mscale, s = sin(theta) * a.mscale;
    const int j1 = i0 + dist;
    const float x0 = rp_load(x + (ulong)i0 * a.nb00, f16), x1 = rp_load(x + (ulong)j1 * a.nb00, f16);
    rp_store(y + (ulong)i0 * a.nb0, x0 * c - x1 * s, f16);
    rp_store(y + (ulong)j1 * a.nb0, x0 * s + x1 * c, f16);
}

__kernel void ct_rope_f32(RP_ARGS) { rp_elem(false, src, offs, dst, offsd, pos, offp, ff, offf, a); }

__kernel void ct_rope_f16(RP_ARGS) { rp_elem(true, src, offs, dst, offsd, pos, offp, ff, offf, a); }
