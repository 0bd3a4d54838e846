/* SQR, SQRT, SIN, COS, LOG, CLAMP, LEAKY_RELU and FILL on OpenCL (kernels/math.cl): the
 * element-wise engine of UNARY (ct_ocl_encode_elementwise, encoders/unary.c) with the
 * math kernels, op a CT_MATH_* and p[0], p[1] the node's op_params. */
#include "opencl/encoder.h"
#include "opencl/kernels/kernel_args.h"

#include <string.h>

static int32_t math_op(ct_op op) {
    switch (op) {
    case CT_OP_SQR: return CT_MATH_SQR;
    case CT_OP_SQRT: return CT_MATH_SQRT;
    case CT_OP_SIN: return CT_MATH_SIN;
    case CT_OP_COS: return CT_MATH_COS;
    case CT_OP_LOG: return CT_MATH_LOG;
    case CT_OP_CLAMP: return CT_MATH_CLAMP;
    case CT_OP_LEAKY_RELU: return CT_MATH_LEAKY_RELU;
    case CT_OP_FILL: return CT_MATH_FILL;
    default: return -1;
    }
}

static ct_ocl_kernel_id kernel_for(const ct_tensor *op) {
    return op->type == CT_TYPE_F32 ? CT_OCL_K_MATH_F32 : CT_OCL_K_MATH_F16;
}

bool ct_ocl_math_supported(const ct_ocl_device *dev, const ct_tensor *op) {
    if (!dev || !op || math_op(op->op) < 0) return false;
    return ct_ocl_elementwise_supported(dev, op, kernel_for(op));
}

ct_status ct_ocl_encode_math(ct_ocl_enc *enc, ct_tensor *node, int *n_nodes) {
    CT_ASSERT(ct_ocl_math_supported(enc->be->dev, node));
    *n_nodes = 1;
    float p[4] = {0};
    memcpy(p, node->op_params, 2 * sizeof(float));
    return ct_ocl_encode_elementwise(enc, node, kernel_for(node), math_op(node->op), p);
}
