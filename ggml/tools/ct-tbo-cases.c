/* ct-tbo-cases [small|prefill|model FILE]: prints a case set of scripts/ggml/tbo-perf.sh in the
 * format of test-backend-ops --test-file (one generic op a line: op, type, ne[4], op_params,
 * sources with type, ne[4], nb[4], name), with ggml's op and type ids taken from the
 * pinned ggml.h so the file matches the tree it runs against. The shapes are those
 * of one decode step: one 4096-wide row, 32 heads of 128, a 256-token context, and
 * the layers of a small model (640/1024 wide). GET_ROWS and SET_ROWS are missing:
 * test-backend-ops fills I32 tensors with float bits, so their indices would be out
 * of range; ROPE's positions are such values too, which only changes the angles. CPY
 * is missing too: a generic node's result is not the view of its destination that the
 * plugin needs, so the copies are CONT (a contiguous and a strided source). The set
 * `prefill` holds the prompt-sized products that the perf list lacks: 16384 x 16384
 * weights times 512 columns. The set `model` is FILE, the unique ops of a model's prompt
 * and decode graphs as the pinned tree's test-export-graph-ops writes them, less the ops
 * that index rows (GET_ROWS, GET_ROWS_BACK, SET_ROWS: their indices would be float bits),
 * each named after its node and its line so that every case's name is its own. */
#include "ggml.h"

#include <stdio.h>
#include <string.h>

typedef struct src {
    enum ggml_type type;
    long long ne[4];
    int row_step; /* 0 or 1: contiguous; k: row i at the place of row k*i (a strided view) */
} src;

static void print_case(const char *name, enum ggml_op op, enum ggml_type type, const long long ne[4],
                       const int *params, int n_params, const src *srcs, int n_src) {
    printf("%d %d %lld %lld %lld %lld %d", (int)op, (int)type, ne[0], ne[1], ne[2], ne[3], n_params);
    for (int i = 0; i < n_params; i++) printf(" %d", params[i]);
    printf(" %d", n_src);
    for (int i = 0; i < n_src; i++) {
        const src *s = &srcs[i];
        size_t nb[4];
        nb[0] = ggml_type_size(s->type);
        nb[1] = ggml_row_size(s->type, s->ne[0]) * (size_t)(s->row_step > 1 ? s->row_step : 1);
        nb[2] = nb[1] * (size_t)s->ne[1];
        nb[3] = nb[2] * (size_t)s->ne[2];
        printf(" %d %lld %lld %lld %lld %zu %zu %zu %zu", (int)s->type, s->ne[0], s->ne[1], s->ne[2], s->ne[3], nb[0],
               nb[1], nb[2], nb[3]);
    }
    printf(" %s\n", name);
}

static int f32_bits(float f) {
    int i;
    memcpy(&i, &f, sizeof i);
    return i;
}

#define NE(a, b, c, d) ((const long long[4]){a, b, c, d})
#define SRC1(t, a, b, c, d) ((const src[]){{t, {a, b, c, d}, 0}}), 1
#define SRC2(t0, a0, b0, c0, d0, t1, a1, b1, c1, d1) ((const src[]){{t0, {a0, b0, c0, d0}, 0}, {t1, {a1, b1, c1, d1}, 0}}), 2

static void print_prefill(void) {
    static const enum ggml_type types[] = {GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0,
                                           GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "mul_mat_%s_16384x16384_n512", ggml_type_name(types[i]));
        print_case(name, GGML_OP_MUL_MAT, GGML_TYPE_F32, NE(16384, 512, 1, 1), NULL, 0,
                   SRC2(types[i], 16384, 16384, 1, 1, GGML_TYPE_F32, 16384, 512, 1, 1));
    }
}

/* The `model` set from path (see the top): returns 0, or 1 when the file cannot be read or is
 * not such a file. */
static int print_model(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return 1;
    }
    char line[8192];
    for (int n = 1; fgets(line, sizeof line, f); n++) {
        size_t len = strcspn(line, "\r\n");
        if (line[len] == '\0' && !feof(f)) { /* longer than any op's line: not such a file */
            fprintf(stderr, "%s:%d: line longer than %zu bytes\n", path, n, sizeof line - 1);
            fclose(f);
            return 1;
        }
        line[len] = '\0';
        int op;
        char *name = strrchr(line, ' ');
        if (!name || sscanf(line, "%d", &op) != 1) continue; /* blank or not a case */
        if (op == GGML_OP_GET_ROWS || op == GGML_OP_GET_ROWS_BACK || op == GGML_OP_SET_ROWS) continue;
        *name++ = '\0';
        printf("%s %s_%d\n", line, name, n);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    const char *set = argc > 1 ? argv[1] : "small";
    if (!strcmp(set, "prefill")) {
        print_prefill();
        return 0;
    }
    if (!strcmp(set, "model") && argc > 2) return print_model(argv[2]);
    if (strcmp(set, "small") != 0) {
        fprintf(stderr, "usage: ct-tbo-cases [small|prefill|model FILE]\n");
        return 2;
    }
    const enum ggml_type F32 = GGML_TYPE_F32, F16 = GGML_TYPE_F16, I32 = GGML_TYPE_I32;
    int eps[1] = {f32_bits(1e-6f)};
    print_case("rms_norm_4096", GGML_OP_RMS_NORM, F32, NE(4096, 1, 1, 1), eps, 1, SRC1(F32, 4096, 1, 1, 1));
    print_case("rms_norm_64", GGML_OP_RMS_NORM, F32, NE(64, 1, 1, 1), eps, 1, SRC1(F32, 64, 1, 1, 1));
    print_case("add_4096", GGML_OP_ADD, F32, NE(4096, 1, 1, 1), NULL, 0,
               SRC2(F32, 4096, 1, 1, 1, F32, 4096, 1, 1, 1));
    print_case("add_64", GGML_OP_ADD, F32, NE(64, 1, 1, 1), NULL, 0, SRC2(F32, 64, 1, 1, 1, F32, 64, 1, 1, 1));
    print_case("mul_4096", GGML_OP_MUL, F32, NE(4096, 1, 1, 1), NULL, 0,
               SRC2(F32, 4096, 1, 1, 1, F32, 4096, 1, 1, 1));
    print_case("mul_64", GGML_OP_MUL, F32, NE(64, 1, 1, 1), NULL, 0, SRC2(F32, 64, 1, 1, 1, F32, 64, 1, 1, 1));
    int scale[2] = {f32_bits(0.5f), f32_bits(0.0f)};
    print_case("scale_4096", GGML_OP_SCALE, F32, NE(4096, 1, 1, 1), scale, 2, SRC1(F32, 4096, 1, 1, 1));
    int sm[2] = {f32_bits(0.088388f), f32_bits(0.0f)};
    print_case("soft_max_256x32", GGML_OP_SOFT_MAX, F32, NE(256, 1, 32, 1), sm, 2, SRC1(F32, 256, 1, 32, 1));
    int rope[11] = {0, 128, 0, 0, 0, f32_bits(10000.0f), f32_bits(1.0f), f32_bits(0.0f), f32_bits(1.0f),
                    f32_bits(32.0f), f32_bits(1.0f)};
    print_case("rope_128x32", GGML_OP_ROPE, F32, NE(128, 32, 1, 1), rope, 11,
               SRC2(F32, 128, 32, 1, 1, I32, 1, 1, 1, 1));
    print_case("cont_4096", GGML_OP_CONT, F32, NE(4096, 1, 1, 1), NULL, 0, SRC1(F32, 4096, 1, 1, 1));
    print_case("cont_64", GGML_OP_CONT, F32, NE(64, 1, 1, 1), NULL, 0, SRC1(F32, 64, 1, 1, 1));
    print_case("cont_128x8_strided", GGML_OP_CONT, F32, NE(128, 8, 1, 1), NULL, 0,
               ((const src[]){{F32, {128, 8, 1, 1}, 4}}), 1);
    int glu[2] = {(int)GGML_GLU_OP_SWIGLU, 0};
    print_case("swiglu_2048", GGML_OP_GLU, F32, NE(2048, 1, 1, 1), glu, 2, SRC1(F32, 4096, 1, 1, 1));
    print_case("mul_mat_f16_640x2048", GGML_OP_MUL_MAT, F32, NE(2048, 1, 1, 1), NULL, 0,
               SRC2(F16, 640, 2048, 1, 1, F32, 640, 1, 1, 1));
    print_case("mul_mat_q4_0_640x2048", GGML_OP_MUL_MAT, F32, NE(2048, 1, 1, 1), NULL, 0,
               SRC2(GGML_TYPE_Q4_0, 640, 2048, 1, 1, F32, 640, 1, 1, 1));
    print_case("mul_mat_q4_K_1024x1024", GGML_OP_MUL_MAT, F32, NE(1024, 1, 1, 1), NULL, 0,
               SRC2(GGML_TYPE_Q4_K, 1024, 1024, 1, 1, F32, 1024, 1, 1, 1));
    return 0;
}
