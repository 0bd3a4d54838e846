/* Helpers every kernel family may use: type ids, NVIDIA warp primitives, byte-level
 * loads and stores, 64-bit division in 32 bits where it fits, correctly rounded float
 * division and x86's NaN rules. The composed program puts it first (library.c), then
 * fp16.cl, dequant.cl, quant.cl and reduce.cl.
 *
 * Blocks are addressed by bytes (const __global uchar *): blocks are only 2-byte
 * aligned, and views may start anywhere, so multi-byte fields are assembled from
 * byte loads. */

/* Type ids (ct_type). */
#define CT_T_F32 0
#define CT_T_F16 1
#define CT_T_Q4_0 2
#define CT_T_Q4_1 3
#define CT_T_Q5_0 6
#define CT_T_Q5_1 7
#define CT_T_Q8_0 8
#define CT_T_Q2_K 10
#define CT_T_Q3_K 11
#define CT_T_Q4_K 12
#define CT_T_Q5_K 13
#define CT_T_Q6_K 14
#define CT_T_Q8_K 15
#define CT_T_IQ4_NL 20
#define CT_T_IQ4_XS 23
#define CT_T_I8 24
#define CT_T_I16 25
#define CT_T_I32 26
#define CT_T_I64 27
#define CT_T_F64 28
#define CT_T_BF16 30

/* The mat-mul kernels' src0 types (mul_mat.cl, mul_mvq.cl: a compile-time argument of
 * their shared bodies). Here because mul_mvq.cl is also built without mul_mat.cl
 * (library.c: the register-capped program). */
#define MM_F32 0
#define MM_F16 1
#define MM_BF16 2
#define MM_Q4_0 3
#define MM_Q4_1 4
#define MM_Q5_0 5
#define MM_Q5_1 6
#define MM_Q8_0 7
#define MM_IQ4_NL 8
#define MM_Q4_K 9
#define MM_Q5_K 10
#define MM_Q6_K 11
#define MM_Q2_K 12
#define MM_Q3_K 13
#define MM_IQ4_XS 14

/* ---- NVIDIA warps (inline PTX, where the device probes built it) --------------------- */

#if CT_HAS_NV_WARP
/* v of lane ^ m of this warp */
uint ct_nv_shfl_xor(uint v, int m) {
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}
/* the warp's local-memory stores before it are seen by its loads after it */
#define CT_NV_WARP_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
#endif

/* ---- byte-level loads and stores ----------------------------------------------- */

ushort ct_ld_u16(const __global uchar *p) { return (ushort)(p[0] | ((uint)p[1] << 8)); }

uint ct_ld_u32(const __global uchar *p) {
    return (uint)p[0] | ((uint)p[1] << 8) | ((uint)p[2] << 16) | ((uint)p[3] << 24);
}

void ct_st_u16(__global uchar *p, ushort v) {
    p[0] = (uchar)v;
    p[1] = (uchar)(v >> 8);
}

void ct_st_u32(__global uchar *p, uint v) {
    p[0] = (uchar)v;
    p[1] = (uchar)(v >> 8);
    p[2] = (uchar)(v >> 16);
    p[3] = (uchar)(v >> 24);
}

/* a / b and a % b, in 32 bits when both fit (64-bit division is slow on GPUs). */
ulong ct_udivmod(ulong a, ulong b, ulong *rem) {
    if (((a | b) >> 32) == 0) {
        const uint q = (uint)a / (uint)b;
        *rem = (uint)a - q * (uint)b;
        return q;
    }
    const ulong q = a / b;
    *rem = a - q * b;
    return q;
}

/* ---- correctly rounded float division ----------------------------------------- */

/* Without -cl-fp32-correctly-rounded-divide-sqrt, '/' may be 2.5 ulp off. fp64
 * division is correctly rounded, and rounding its quotient to float is too (53 >=
 * 2*24 + 2). Otherwise an integer long division. CT_SOFT_DIV forces the latter (tests). */
#if !defined(CT_SOFT_DIV) && CT_CORRECTLY_ROUNDED_DIV
float ct_div(float a, float b) { return a / b; }
#elif !defined(CT_SOFT_DIV) && CT_HAS_FP64
float ct_div(float a, float b) { return (float)((double)a / (double)b); }
#else
/* Mantissa with the implicit bit and unbiased exponent of a finite non-zero
 * float, normalized so that the mantissa lies in [2^23, 2^24). */
void ct_div_unpack(uint ax, uint *m, int *e) {
    uint mm = ax & 0x7FFFFFu;
    int ee = (int)(ax >> 23);
    if (ee == 0) { /* subnormal */
        ee = 1;
        while (mm < 0x800000u) {
            mm <<= 1;
            ee--;
        }
    } else {
        mm |= 0x800000u;
    }
    *m = mm;
    *e = ee - 127;
}

float ct_div(float a, float b) {
    const uint ua = as_uint(a), ub = as_uint(b);
    const uint sign = (ua ^ ub) & 0x80000000u;
    const uint aa = ua & 0x7FFFFFFFu, ab = ub & 0x7FFFFFFFu;
    if (aa > 0x7F800000u || ab > 0x7F800000u) return a + b; /* NaN operand */
    if (aa == 0x7F800000u) return ab == 0x7F800000u ? as_float(0x7FC00000u) : as_float(sign | 0x7F800000u);
    if (ab == 0x7F800000u) return as_float(sign);
    if (ab == 0u) return aa == 0u ? as_float(0x7FC00000u) : as_float(sign | 0x7F800000u);
    if (aa == 0u) return as_float(sign);
    uint ma, mb;
    int ea, eb;
    ct_div_unpack(aa, &ma, &ea);
    ct_div_unpack(ab, &mb, &eb);
    /* q = floor(ma * 2^26 / mb) has 26 or 27 bits; the remainder is the sticky bit. */
    const ulong num = (ulong)ma << 26;
    ulong q = num / mb;
    const uint sticky = (num % mb) != 0ul;
    int e = ea - eb; /* value = q * 2^(e - 26) */
    if (q < (1ul << 26)) { /* normalize to 27 bits: [2^26, 2^27) */
        q <<= 1;
        e -= 1;
    }
    /* q in [2^26, 2^27): the 24-bit mantissa and 3 more bits (plus the sticky bit). */
    int shift = 3;
    int be = e + 127;
    if (be >= 255) return as_float(sign | 0x7F800000u);
    if (be < 1) { /* a subnormal result: fewer mantissa bits */
        shift += 1 - be;
        be = 1;
    }
    if (shift > 40) return as_float(sign); /* below half the smallest subnormal */
    const ulong keep = q >> shift;
    const ulong rem = q & ((1ul << shift) - 1ul);
    const ulong hb = 1ul << (shift - 1);
    const ulong up = (rem > hb || (rem == hb && (sticky || (keep & 1ul)))) ? 1ul : 0ul;
    /* A carry out of the mantissa moves into the exponent, which is the right result. */
    uint bits = ((uint)(be - 1) << 23) + (uint)(keep + up);
    if (bits >= 0x7F800000u) bits = 0x7F800000u;
    return as_float(sign | bits);
}
#endif

/* ---- x86 NaN rules ------------------------------------------------------------- */

/* r = a op b with x86 SSE's NaN rules, which the CPU reference follows: the first
 * NaN operand, quieted; a NaN made from numbers is the default NaN 0xFFC00000.
 * GPUs return other NaNs (NVIDIA: 0x7FFFFFFF), whose sign and payload would reach
 * the output: a dequantized NaN scale, a quantized block's fp16 scale. */
float ct_xnan(float a, float b, float r) {
    const uint n = isnan(a) ? as_uint(a) | 0x400000u : isnan(b) ? as_uint(b) | 0x400000u : 0xFFC00000u;
    /* NVIDIA's compiler makes branches of this; bit masks instead cost the row kernels
     * more than the branches did */
    return isnan(r) ? as_float(n) : r;
}
float ct_xadd(float a, float b) { return ct_xnan(a, b, a + b); }
float ct_xsub(float a, float b) { return ct_xnan(a, b, a - b); }
float ct_xmul(float a, float b) { return ct_xnan(a, b, a * b); }

/* SWIGLU of an activation x and its gate g, as ggml: silu(x) * g (glu.cl; fused after a
 * pair of mat-vecs in mul_mvq.cl). */
float ct_swiglu(float x, float g) { return x / (1.0f + exp(-x)) * g; }
float ct_xdiv(float a, float b) { return ct_xnan(a, b, ct_div(a, b)); }
