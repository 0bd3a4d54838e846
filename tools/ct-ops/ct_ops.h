/*
 * ct-ops: compares backends op by op (modelled on ggml's test-backend-ops).
 * Uses the public header only. Shared declarations of the tool's files.
 */
#ifndef CT_OPS_H
#define CT_OPS_H

#include "ctensor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CTO_EXIT_OK = 0, CTO_EXIT_FAIL = 1, CTO_EXIT_USAGE = 2 };

/* ---- util.c: random numbers, time, memory, output helpers ---------------- */

typedef struct cto_rng {
    uint64_t s;
} cto_rng;

void cto_rng_seed(cto_rng *r, uint64_t seed);
uint64_t cto_rng_u64(cto_rng *r);
/* Uniform in [lo, hi). */
float cto_rng_float(cto_rng *r, float lo, float hi);
/* Uniform in [0, n); n > 0. */
uint64_t cto_rng_below(cto_rng *r, uint64_t n);

double cto_now(void);
/* malloc that exits the tool on failure (the tool, not the library, may exit). */
void *cto_xmalloc(size_t n);
void *cto_xcalloc(size_t n, size_t size);

/* --json: JSON Lines for every command, one object per line on stdout, each
 * beginning {"schema":CTO_JSON_SCHEMA,"type":TYPE. The first record of every
 * command is {"type":"run","command":...,"ctensor":VERSION}. The schema number
 * changes only when a record loses or renames a field or changes its meaning. */
#define CTO_JSON_SCHEMA 1
/* Starts a record: prints {"schema":1,"type":"TYPE" (no closing brace). */
void cto_json_rec(const char *type);
/* The run record (first line of every command) without its closing brace. */
void cto_json_run(const char *command);

void cto_json_str(FILE *f, const char *s);
/* A number, or null when not finite. */
void cto_json_num(FILE *f, double v);

/* Case-insensitive equality / substring search. */
bool cto_streq_ci(const char *a, const char *b);
bool cto_contains(const char *hay, const char *needle);

/* Renders v with a K/M/G/T suffix into buf. */
const char *cto_fmt_si(char *buf, size_t n, double v);

/* Progress on stderr for long commands (test, perf): the case count up front, then
 * the current case, cases done and an estimate of the time left; redrawn in place
 * (\r) on a terminal, a plain line every few seconds otherwise
 * (CT_OPS_PROGRESS_SECONDS overrides the interval; 0: every case). Nothing under
 * --quiet. */
typedef struct cto_progress {
    bool on, tty, drawn;
    size_t total, done;
    double t_start, t_last, interval;
    const char *cmd;
} cto_progress;

void cto_progress_start(cto_progress *p, bool quiet, const char *cmd, size_t total, const char *what);
/* Case done + 1 of total starts now on device dev. */
void cto_progress_case(cto_progress *p, size_t done, const char *dev, const char *name);
/* Erases a line drawn in place, before something else is written to the terminal. */
void cto_progress_clear(cto_progress *p);
void cto_progress_end(cto_progress *p);

/* ---- cases.c: the case lists and the graphs they build -------------------- */

/* One kind per op of CT_OP_LIST (a view op's kind has no cases), then the tool's own. */
typedef enum cto_kind {
#define CTO_KIND_ENTRY(id, name, is_view, family) CTO_##id,
    CT_OP_LIST(CTO_KIND_ENTRY)
#undef CTO_KIND_ENTRY
    CTO_CAST,  /* CPY cases built by ct_cast */
    CTO_CHAIN, /* perf only: a chain of small nodes */
    CTO_KIND_COUNT,
} cto_kind;

typedef struct cto_case {
    cto_kind kind;
    ct_type ta, tb, ti;    /* main type, second type (src/dst), index type */
    int64_t ne[4];         /* shape (meaning per kind) */
    int64_t m, n, k, r, b; /* op-specific sizes */
    int bs[2], nr[2];      /* MUL_MAT batch and broadcast; SET_ROWS nr23 in nr */
    int per[4], per2[4];   /* permutations of src and dst; identity = {0,1,2,3} */
    bool use_per, use_per2, v;
    float eps;
    int n_groups;
    int uop;               /* UNARY: the ct_unary_op */
    float s, bias;         /* SCALE's op_params */
    int rep[4];            /* binary ops: src0's shape is ne repeated rep times (ne is src1's) */
    bool edge;             /* inputs with edge values (CTO_INIT_EDGE) */
    float lo, hi;          /* input range */
    bool flops;            /* perf: report FLOP/s instead of GB/s */
    /* SOFT_MAX: a [ne0, ne1, ne2*nr0, ne3*nr1], the mask (type tb) [ne0, ne1 + r, ne2, ne3] with
     * -INFINITY per mask_inf (CTO_INIT_MASK's modes), the sinks, scale and max_bias; v: a's rows
     * strided, use_per: a permuted */
    bool mask, sinks;
    int mask_inf;
    float scale, max_bias;
    int fam_i[8];          /* a family file's own parameters (meaning per family, cases_<family>.c) */
    float fam_f[8];
    struct {               /* ROPE: ggml's test_rope fields (view: 0 none, 1 strided, 2 second half of dim 0;
                            * per: the source created permuted 0,2,1,3 and permuted back) */
        int n_dims, mode, n_ctx, view, n_offs;
        float fs, ef, af;
        bool ff, inplace, per;
    } rope;
    char name[560];
} cto_case;

typedef struct cto_case_list {
    cto_case *v;
    size_t n, cap;
} cto_case_list;

/* The op name a case is filtered and reported by ("CAST" for ct_cast cases). */
const char *cto_kind_name(cto_kind kind);
/* False for the view ops' kinds: no cases, not offered by -o. */
bool cto_kind_listed(cto_kind kind);
/* Looks a listed kind up by op name (case-insensitive); false when unknown. */
bool cto_kind_from_name(const char *name, cto_kind *kind);
/* Copies, DUP, CONT, GET_ROWS, SET_ROWS: results that must match byte for byte. */
bool cto_kind_exact(cto_kind kind);
double cto_kind_max_nmse(cto_kind kind);

void cto_cases_test(cto_case_list *l);
/* scale shrinks the big dims (0 < scale <= 1). */
void cto_cases_perf(cto_case_list *l, double scale);
void cto_case_list_free(cto_case_list *l);

/* CTO_INIT_EDGE: uniform floats with about one in eight replaced by an edge value (zeros,
 * infinities, a NaN, subnormals, values past the f16 range); F32 and F16 tensors.
 * CTO_INIT_MASK: uniform, then -INFINITY (F32 or F16) at elements i0 > i1 + ne0/2 (a causal
 * mask; m = 1), and with m = 2 every row i1 % 3 == 2 whole as well. */
enum { CTO_INIT_UNIFORM, CTO_INIT_INDEX_MOD, CTO_INIT_INDEX_PERM, CTO_INIT_SENTINEL, CTO_INIT_EDGE,
       CTO_INIT_MASK };

#define CTO_MAX_LEAF 64

typedef struct cto_leaf {
    ct_tensor *t;
    int init;
    float lo, hi;
    int64_t m; /* index range */
} cto_leaf;

typedef struct cto_builder {
    ct_context *ctx;
    bool sentinels;        /* a 1024-float sentinel after every new tensor */
    cto_leaf leaf[CTO_MAX_LEAF];
    int n_leaf;
    char err[512];         /* first constructor failure */
} cto_builder;

/* A context sized for a case with n_rep op copies; NULL on failure. */
ct_context *cto_case_context(int n_rep);
/* Builds the case's inputs once and its op n_rep times into outs; false (b->err
 * set) when a constructor fails. */
bool cto_case_build(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs);
/* Adds the trailing sentinel. */
bool cto_builder_finish(cto_builder *b);
const cto_leaf *cto_builder_leaf(const cto_builder *b, const ct_tensor *t);

/* ---- building blocks of the case files ------------------------------------ */

#define CTO_N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* F32 everywhere, a 1x1x1x1 shape, identity permutations, inputs in [-1, 1). */
cto_case cto_case_base(cto_kind kind);
/* Names the case (cto_case_name) and appends it. */
void cto_case_add(cto_case_list *l, cto_case c);
void cto_set4(int64_t dst[4], int64_t a, int64_t b, int64_t c, int64_t d);
void cto_setp(int dst[4], int a, int b, int c, int d);
int cto_fmt_ne(char *buf, size_t n, const int64_t ne[4]);
int cto_fmt_per(char *buf, size_t n, const int per[4]);
/* Perf sizes: x scaled by s, rounded down to a multiple of mult, at least lo. */
int64_t cto_scaled(int64_t x, double s, int64_t mult, int64_t lo);
/* t, or NULL with the library's last error kept in b->err (the first one wins). */
ct_tensor *cto_chk(cto_builder *b, ct_tensor *t);
/* A new input tensor, uniform in [lo, hi) (a sentinel after it when b->sentinels). */
ct_tensor *cto_new_tensor(cto_builder *b, ct_type type, const int64_t ne[4], float lo, float hi);
ct_tensor *cto_new4(cto_builder *b, ct_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, float lo,
                    float hi);
/* Changes how an input of this case is filled (CTO_INIT_*, m: the index range or mode). */
void cto_set_init(cto_builder *b, ct_tensor *t, int init, int64_t m);
ct_tensor *cto_permute(cto_builder *b, ct_tensor *t, const int per[4]);
/* An F32 source of shape c->ne, values in [c->lo, c->hi), made as the variant says:
 * plain; created in c->per's order and permuted back; a view with gaps after each row and
 * dim; a transposed tensor; with edge values (CTO_INIT_EDGE); or F16 values cast to F32
 * (few distinct ones in a narrow range: ties). */
enum { CTO_SRC_PLAIN, CTO_SRC_PERMUTED, CTO_SRC_STRIDED, CTO_SRC_TRANSPOSED, CTO_SRC_EDGE, CTO_SRC_TIES };
ct_tensor *cto_new_f32_source(const cto_case *c, cto_builder *b, int variant);

/* ---- case families: one file each (cases_<family>.c) ---------------------- */

/* What a family's file gives cases.c: which kinds it owns, how they are compared
 * (docs/TESTING.md, Thresholds), the parameters in a case's name, its test and perf
 * lists and the graph a case builds. The list of families is families.def. */
typedef struct cto_family {
    bool (*owns)(cto_kind kind);
    bool exact;      /* results must match byte for byte */
    double max_nmse; /* otherwise the largest normalized mean squared error */
    /* The case's parameters, printed between "NAME(" and ")". */
    void (*name)(const cto_case *c, char *buf, size_t n);
    void (*test_cases)(cto_case_list *l);
    void (*perf_cases)(cto_case_list *l, double scale);
    /* Builds the inputs once and the op n_rep times into outs; an out left NULL is a
     * failure (cto_chk keeps its message). */
    void (*build)(const cto_case *c, cto_builder *b, int n_rep, ct_tensor **outs);
} cto_family;

#define CTO_FAMILY(f) extern const cto_family cto_family_##f;
#include "families.def"
#undef CTO_FAMILY

/* ---- init.c: tensor contents ---------------------------------------------- */

/* Fills host bytes for a root tensor as spec says (leaf may be NULL: an op
 * output, filled with 0xFF so that unwritten elements show up as NaN).
 * fast: tile a small random block (perf). */
void cto_fill_tensor(const ct_tensor *t, const cto_leaf *leaf, cto_rng *rng, uint8_t *dst, bool fast);
/* n elements (a whole number of blocks) of type from uniform floats in [lo, hi). */
void cto_fill_uniform(ct_type type, int64_t n, float lo, float hi, cto_rng *rng, uint8_t *dst);
/* Converts a tensor's bytes (ct_nbytes span, from its data start) to floats in
 * logical order; false when the type has no dequantizer. */
bool cto_tensor_to_float(const ct_tensor *t, const uint8_t *bytes, float *out);

/* ---- subcommands ---------------------------------------------------------- */

typedef struct cto_opts {
    const char *cmd;
    bool json, verbose, quick, quiet;
    bool copy_each;        /* perf: the copy reference measured again before each case */
    const char *ops[32];   /* -o filters */
    int n_ops;
    const char *device;    /* -b */
    const char *pattern;   /* -p */
    uint64_t seed;
    bool seed_set;
    int n_threads;         /* 0: backend default */
    double size_scale, min_time;
} cto_opts;

bool cto_case_selected(const cto_opts *o, const cto_case *c);
/* Selected cases of l; when none, says so on stderr (naming the filters). */
size_t cto_count_selected(const cto_opts *o, const cto_case_list *l);
/* Backend for dev with the thread count of the options; NULL + message on failure. */
ct_backend *cto_backend_new(const cto_opts *o, ct_device *dev);

int cto_cmd_devices(const cto_opts *o);
int cto_cmd_selfcheck(const cto_opts *o);
int cto_cmd_support(const cto_opts *o);
int cto_cmd_test(const cto_opts *o);
int cto_cmd_perf(const cto_opts *o);

#endif /* CT_OPS_H */
