/* fp16/bf16 conversion in integer arithmetic (bit for bit as src/types, NaN
 * included), or the device's own where its probe found it exact (CT_FP16_CONVERT,
 * CT_HALF_BY_SCALE). Needs common.cl. */

/* ---- fp16 / bf16 ------------------------------------------------------------------ */

/* Exact; NaN keeps its payload shifted left by 13 with the quiet bit set (as the CPU).
 * Round to nearest even; overflow gives inf; NaN gives sign | 0x7E00 (as the CPU).
 * Where the device's conversions are exact (CT_FP16_CONVERT: cl_khr_fp16's, else the
 * core vload_half / vstore_half_rte), they do every value but NaN, which a select fixes up to the CPU's
 * bits: the integer arithmetic below took ~15 operations an element and bound the fp16
 * row kernels on the H200 (CPY F32 -> F16 74 -> 85% of copy with the device's). The
 * integer versions compute every case and select one (no branch between a kernel's
 * loads). */
#if CT_FP16_CONVERT
#if CT_HAS_FP16
float ct_half_hw(ushort h) { return (float)as_half(h); }
ushort ct_half_hw_rte(float f) { return as_ushort(convert_half_rte(f)); }
#else /* the core vload_half / vstore_half_rte */
float ct_half_hw(ushort h) { return vload_half(0, (const __private half *)&h); }
ushort ct_half_hw_rte(float f) {
    ushort h;
    vstore_half_rte(f, 0, (__private half *)&h);
    return h;
}
#endif

ushort ct_float_to_half(float f) {
    const uint x = as_uint(f);
    const ushort nan = (ushort)(((x >> 16) & 0x8000u) | 0x7E00u);
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? nan : ct_half_hw_rte(f);
}
#else
ushort ct_float_to_half(float f) {
    const uint x = as_uint(f);
    const uint sign = (x >> 16) & 0x8000u;
    const uint ax = x & 0x7FFFFFFFu;
    const uint v = ax - (112u << 23); /* wraps below the normal range; not selected there */
    const uint normal = (v + 0x0FFFu + ((v >> 13) & 1u)) >> 13;
    /* |x|*2^24 is exact; adding 2^23 rounds it to an integer (RTNE) */
    const uint sub = as_uint(as_float(ax) * 0x1p24f + 0x1p23f) & 0x7FFu;
    const uint r = ax > 0x7F800000u ? 0x7E00u : ax >= 0x477FF000u ? 0x7C00u : ax >= 0x38800000u ? normal : sub;
    return (ushort)(sign | r);
}
#endif

/* Half to float: the bits scaled by 2^112 where the library chose that (CT_HALF_BY_SCALE:
 * exact where a float multiply keeps subnormal operands, and faster than PoCL's vload_half;
 * device.c says where), else the device's conversion where exact, else integer arithmetic. */
#if CT_HALF_BY_SCALE
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu, o = em << 13;
    const uint special = o | 0x7F800000u | (em > 0x7C00u ? 0x400000u : 0u);
    const uint finite = as_uint(as_float(o) * 0x1p112f);
    return as_float(((uint)(h & 0x8000u) << 16) | (em >= 0x7C00u ? special : finite));
}
#elif CT_FP16_CONVERT
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu;
    const uint nan = ((uint)(h & 0x8000u) << 16) | 0x7FC00000u | (em << 13);
    return em > 0x7C00u ? as_float(nan) : ct_half_hw(h);
}
#else
float ct_half_to_float(ushort h) {
    const uint em = h & 0x7FFFu, o = em << 13;
    const uint special = o | 0x7F800000u | (em > 0x7C00u ? 0x400000u : 0u);
    const uint normal = o + (112u << 23);
    /* m * 2^-24 exactly: 2^-14 * (1 + m / 1024) less 2^-14 */
    const uint sub = as_uint(as_float(o + (113u << 23)) - 0x1p-14f);
    const uint r = em >= 0x7C00u ? special : em >= 0x0400u ? normal : sub;
    return as_float(((uint)(h & 0x8000u) << 16) | r);
}
#endif

float ct_bf16_to_float(ushort h) { return as_float((uint)h << 16); }

ushort ct_float_to_bf16(float f) {
    const uint u = as_uint(f);
    const uint rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    return (ushort)((u & 0x7FFFFFFFu) > 0x7F800000u ? (u >> 16) | 0x0040u : rounded);
}

float ct_ld_f16(const __global uchar *p) { return ct_half_to_float(ct_ld_u16(p)); }

/* Loads from an address known to be 2-byte aligned: one or two 16-bit loads, not byte loads. */
uint ct_lda_u16(const __global uchar *p) { return *(const __global ushort *)p; }
uint ct_lda_u32(const __global uchar *p) { return ct_lda_u16(p) | (ct_lda_u16(p + 2) << 16); }
float ct_lda_f16(const __global uchar *p) { return ct_half_to_float((ushort)ct_lda_u16(p)); }
