/* what a local pointer cast to an integer is on this device: out rows = its low and high
 * words, isspacep.shared of it, cvta.to.shared of it, the high word of cvta.shared of it */
__kernel void ct_probe(__global const uint *in, __global uint *out, __local uint *pad, __local uint *l) {
    const int i = get_local_id(0), n = get_local_size(0);
    pad[i] = in[i];
    l[i] = in[i];
    const ulong a = (ulong)(size_t)(l + i);
    ulong c, g;
    uint sp;
    asm("{ .reg .pred p; isspacep.shared p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(sp) : "l"(a));
    asm("cvta.to.shared.u64 %0, %1;" : "=l"(c) : "l"(a));
    asm("cvta.shared.u64 %0, %1;" : "=l"(g) : "l"(a));
    out[i] = (uint)a;
    out[n + i] = (uint)(a >> 32);
    out[2 * n + i] = sp;
    out[3 * n + i] = (uint)c;
    out[4 * n + i] = (uint)(g >> 32);
}
