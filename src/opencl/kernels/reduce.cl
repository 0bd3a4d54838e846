/* Work-group reductions: used by the mat-vec kernels (mul_mat.cl), norm.cl,
 * sum_rows.cl and soft_max.cl. Needs nothing but the prelude. */


/* Sum of v over the work-items of one local row (dim 0) of the work-group, returned
 * to every work-item of that row; scratch holds get_local_size(0)*get_local_size(1)
 * floats. Every work-item of the group must call it. */
float ct_red_sum(float v, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous call's readers are done with scratch */
#if CT_HAS_SUBGROUPS
    if (get_local_size(1) == 1 && get_local_size(2) == 1) {
        const float s = sub_group_reduce_add(v);
        if (get_sub_group_local_id() == 0) scratch[get_sub_group_id()] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int nsg = get_num_sub_groups();
        float t = 0.0f;
        for (int i = 0; i < nsg; i++) t += scratch[i];
        return t;
    }
#endif
    __local float *row = scratch + get_local_id(1) * nx;
    row[lx] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int n = nx; n > 1;) {
        const int h = (n + 1) >> 1;
        if (lx < n - h) row[lx] += row[lx + h];
        n = h;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return row[0];
}

/* Sums each of vals[0..nv) over a 1-D work-group; the total of value v is left in
 * scratch[v * stride] (the return value) for every work-item to read. scratch holds
 * nv * get_local_size(0) floats. */
int ct_red_sum_n(const float *vals, const int nv, __local float *scratch) {
    const int tid = get_local_id(0), wg = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
#if CT_HAS_SUBGROUPS
    {
        const int nsg = get_num_sub_groups(), sg = get_sub_group_id();
        for (int v = 0; v < nv; v++) {
            const float s = sub_group_reduce_add(vals[v]);
            if (get_sub_group_local_id() == 0) scratch[v * nsg + sg] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int v = tid; v < nv; v += wg) {
            float t = scratch[v * nsg];
            for (int i = 1; i < nsg; i++) t += scratch[v * nsg + i];
            scratch[v * nsg] = t;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        return nsg;
    }
#else
    for (int v = 0; v < nv; v++) scratch[v * wg + tid] = vals[v];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int n = wg; n > 1;) {
        const int h = (n + 1) >> 1;
        if (tid < n - h)
            for (int v = 0; v < nv; v++) scratch[v * wg + tid] += scratch[v * wg + tid + h];
        n = h;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return wg;
#endif
}

/* Max of v over a 1-D work-group, returned to every work-item; scratch holds
 * get_local_size(0) floats. A NaN may be dropped: it makes its row NaN anyway. */
float ct_red_max(float v, __local float *scratch) {
    const int lx = get_local_id(0), nx = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
#if CT_HAS_SUBGROUPS
    const float s = sub_group_reduce_max(v);
    if (get_sub_group_local_id() == 0) scratch[get_sub_group_id()] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    const int nsg = get_num_sub_groups();
    float t = scratch[0];
    for (int i = 1; i < nsg; i++) t = fmax(t, scratch[i]);
    return t;
#else
    scratch[lx] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int n = nx; n > 1;) {
        const int h = (n + 1) >> 1;
        if (lx < n - h) scratch[lx] = fmax(scratch[lx], scratch[lx + h]);
        n = h;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return scratch[0];
#endif
}
