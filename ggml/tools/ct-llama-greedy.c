/*
 * ct-llama-greedy: greedy decoding through libllama on chosen ggml devices, printing the
 * generated token ids, so two runs (ctensor against ggml-cpu, RPC against ggml-cpu) can be
 * compared exactly (scripts/ggml/test-model.sh, ggml/README.md).
 *
 *   ct-llama-greedy -m MODEL [-p PROMPT] [-n 32] [-dev NAME|none] [--rpc HOST:PORT[,...]]
 *                   [-t THREADS] [-fa on|off] [--chat] [--margins] [--quiet]
 *
 * -dev none (the default) runs every layer on ggml's CPU backend; -dev NAME offloads all
 * layers (-ngl 99) to that device; --rpc registers llama.cpp's RPC servers and, without
 * -dev, offloads to the first of them. -fa on|off: flash attention (off by default: then the
 * graph has MUL_MAT/SOFT_MAX attention, with it one FLASH_ATTN_EXT per layer). GGML_BACKEND_PATH
 * loads the plugin (ggml_backend_load_all). Output, one item per line on stdout:
 *   device: NAME
 *   flash attention: on|off
 *   prompt: N tokens
 *   tokens: ID ID ...          (the generated ids, n of them unless an end-of-generation token)
 *   speed: P prompt tokens/s, G generated tokens/s   (llama.cpp's own timings)
 *   margins: G G ...           (with --margins: each choice's lead over the runner-up, in logits)
 *   per token: N nodes on DEV, M on CPU, S splits   (nodes that compute; views excluded)
 *   on the CPU: OP xN, ...     (the ops of those M nodes; with a device, when M > 0)
 *   beyond the input layer: K nodes on the CPU   (with a device: M less the token-embedding
 *                              lookup, which llama.cpp keeps on the CPU whatever the devices)
 *   answer:                    then the generated text
 */
#include "ggml-backend.h"
#include "llama.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVS 8
#define MAX_OPS 64
#define MAX_TOKENS 4096

/* Nodes computed per device name, over one llama_decode, and the ops of those on the CPU. */
typedef struct {
    int n;
    const char *name[MAX_DEVS];
    long count[MAX_DEVS];
    long runs; /* changes of device along the node order: the graph's splits */
    const char *last;
    int n_ops;
    const char *cpu_op[MAX_OPS]; /* ggml_op_desc: the op, or the unary/GLU kind */
    long cpu_op_count[MAX_OPS];
    long cpu_input; /* of the CPU's nodes, the token-embedding lookups (the input layer) */
} node_stats;

/* llama.cpp keeps the input layer, the GET_ROWS of token_embd.weight, on the CPU whatever
 * the devices (llama-model.cpp: "very little benefit to offloading the input layer"). */
static bool is_input_lookup(const struct ggml_tensor *t) {
    return t->op == GGML_OP_GET_ROWS && t->src[0] && !strcmp(t->src[0]->name, "token_embd.weight");
}

static node_stats g_stats;
static char g_splits[64] = "?";
static bool g_quiet;

static bool is_view(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

/* The scheduler asks, node by node, whether we want the node's data; we never do (so each
 * split still runs as one graph_compute), we only note on which device's buffer it lands. */
static bool count_node(struct ggml_tensor *t, bool ask, void *ud) {
    (void)ud;
    if (!ask || is_view(t->op) || ggml_nelements(t) == 0) return false;
    const char *dev = "?";
    if (t->buffer) {
        ggml_backend_dev_t d = ggml_backend_buft_get_device(ggml_backend_buffer_get_type(t->buffer));
        if (d) dev = ggml_backend_dev_name(d);
        else dev = ggml_backend_buffer_name(t->buffer); /* a buffer type without a device */
    }
    node_stats *s = &g_stats;
    int i = 0;
    while (i < s->n && strcmp(s->name[i], dev) != 0) i++;
    if (i == s->n && s->n < MAX_DEVS) s->name[s->n++] = dev;
    if (i < MAX_DEVS) s->count[i]++;
    if (!s->last || strcmp(s->last, dev) != 0) s->runs++;
    s->last = dev;
    if (!strncmp(dev, "CPU", 3)) {
        const char *op = is_input_lookup(t) ? "GET_ROWS(token_embd)" : ggml_op_desc(t);
        if (is_input_lookup(t)) s->cpu_input++;
        int j = 0;
        while (j < s->n_ops && strcmp(s->cpu_op[j], op) != 0) j++;
        if (j == s->n_ops && s->n_ops < MAX_OPS) s->cpu_op[s->n_ops++] = op;
        if (j < MAX_OPS) s->cpu_op_count[j]++;
    }
    return false;
}

/* llama.cpp's log, quiet unless asked; keeps the "graph: nodes = ..., splits = ..." line. */
static void on_log(enum ggml_log_level level, const char *text, void *ud) {
    (void)ud;
    const char *p = strstr(text, "splits = ");
    if (p && strstr(text, "graph")) {
        p += strlen("splits = ");
        size_t n = strcspn(p, ",\n");
        if (n >= sizeof g_splits) n = sizeof g_splits - 1;
        memcpy(g_splits, p, n);
        g_splits[n] = 0;
    }
    if (!g_quiet || level == GGML_LOG_LEVEL_ERROR) fputs(text, stderr);
}

/* How far the greedy choice leads the runner-up, in logits. */
static float top_gap(const float *logits, int n) {
    float a = -1e30f, b = -1e30f;
    for (int i = 0; i < n; i++) {
        if (logits[i] > a) {
            b = a;
            a = logits[i];
        } else if (logits[i] > b) {
            b = logits[i];
        }
    }
    return a - b;
}

static void usage(const char *argv0) {
    fprintf(stderr,
            "usage: %s -m MODEL [-p PROMPT] [-n N] [-dev NAME|none] [--rpc HOST:PORT[,...]] [-t THREADS] [-fa on|off] "
            "[--chat] [--margins] [--quiet]\n",
            argv0);
    exit(2);
}

static int add_rpc_servers(const char *list) {
    ggml_backend_reg_t rpc = ggml_backend_reg_by_name("RPC");
    typedef ggml_backend_reg_t (*add_server_fn)(const char *endpoint);
    add_server_fn add = rpc ? (add_server_fn)ggml_backend_reg_get_proc_address(rpc, "ggml_backend_rpc_add_server") : NULL;
    if (!add) {
        fprintf(stderr, "ct-llama-greedy: this ggml has no RPC backend (GGML_RPC=ON)\n");
        return 1;
    }
    char *copy = strdup(list);
    for (char *save = NULL, *ep = strtok_r(copy, ",", &save); ep; ep = strtok_r(NULL, ",", &save)) {
        ggml_backend_reg_t reg = add(ep);
        if (!reg) {
            fprintf(stderr, "ct-llama-greedy: cannot reach RPC server %s\n", ep);
            free(copy);
            return 1;
        }
        ggml_backend_register(reg);
    }
    free(copy);
    return 0;
}

int main(int argc, char **argv) {
    const char *model_path = NULL, *prompt = "The capital of France is", *dev_name = "none", *rpc = NULL;
    int n_predict = 32, n_threads = 0;
    bool chat = false, margins = false, flash_attn = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "-m") && more) model_path = argv[++i];
        else if (!strcmp(a, "-p") && more) prompt = argv[++i];
        else if (!strcmp(a, "-n") && more) n_predict = atoi(argv[++i]);
        else if (!strcmp(a, "-dev") && more) dev_name = argv[++i];
        else if (!strcmp(a, "--rpc") && more) rpc = argv[++i];
        else if (!strcmp(a, "-t") && more) n_threads = atoi(argv[++i]);
        else if (!strcmp(a, "-fa") && more && (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off")))
            flash_attn = !strcmp(argv[++i], "on");
        else if (!strcmp(a, "--chat")) chat = true;
        else if (!strcmp(a, "--margins")) margins = true;
        else if (!strcmp(a, "--quiet")) g_quiet = true;
        else usage(argv[0]);
    }
    if (!model_path || n_predict <= 0 || n_predict > MAX_TOKENS / 2) usage(argv[0]);

    llama_log_set(on_log, NULL);
    ggml_backend_load_all(); /* reads GGML_BACKEND_PATH */
    llama_backend_init();
    if (rpc && add_rpc_servers(rpc) != 0) return 1;

    /* The device list: none (CPU only), the named one, or the first RPC device. */
    ggml_backend_dev_t devs[2] = {NULL, NULL};
    if (strcmp(dev_name, "none") != 0) {
        devs[0] = ggml_backend_dev_by_name(dev_name);
        if (!devs[0]) {
            fprintf(stderr, "ct-llama-greedy: no device %s; devices:", dev_name);
            for (size_t i = 0; i < ggml_backend_dev_count(); i++)
                fprintf(stderr, " %s", ggml_backend_dev_name(ggml_backend_dev_get(i)));
            fprintf(stderr, "\n");
            return 1;
        }
    } else if (rpc) {
        for (size_t i = 0; i < ggml_backend_dev_count() && !devs[0]; i++) {
            ggml_backend_dev_t d = ggml_backend_dev_get(i);
            if (!strncmp(ggml_backend_dev_name(d), "RPC", 3)) devs[0] = d;
        }
    }

    struct llama_model_params mp = llama_model_default_params();
    mp.devices = devs;
    mp.n_gpu_layers = devs[0] ? 99 : 0;
    struct llama_model *model = llama_model_load_from_file(model_path, mp);
    if (!model) {
        fprintf(stderr, "ct-llama-greedy: cannot load %s\n", model_path);
        return 1;
    }
    const struct llama_vocab *vocab = llama_model_get_vocab(model);

    /* The prompt, in the model's chat template with --chat. */
    char *text = NULL;
    if (chat) {
        struct llama_chat_message msg = {"user", prompt};
        const char *tmpl = llama_model_chat_template(model, NULL);
        int32_t len = llama_chat_apply_template(tmpl, &msg, 1, true, NULL, 0);
        if (len > 0) {
            text = malloc((size_t)len + 1);
            llama_chat_apply_template(tmpl, &msg, 1, true, text, len + 1);
            text[len] = 0;
        }
    }
    if (!text) text = strdup(prompt);
    static llama_token toks[MAX_TOKENS];
    int n_prompt = llama_tokenize(vocab, text, (int32_t)strlen(text), toks, MAX_TOKENS / 2, true, true);
    free(text);
    if (n_prompt <= 0) {
        fprintf(stderr, "ct-llama-greedy: cannot tokenize the prompt\n");
        return 1;
    }

    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)(n_prompt + n_predict + 16);
    cp.n_batch = cp.n_ubatch = (uint32_t)n_prompt;
    if (n_threads > 0) cp.n_threads = cp.n_threads_batch = n_threads;
    /* Explicitly on or off, never llama.cpp's "auto" (which decides by the device). */
    cp.flash_attn_type = flash_attn ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.cb_eval = count_node;
    cp.no_perf = false;
    struct llama_context *ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "ct-llama-greedy: cannot create the context\n");
        return 1;
    }
    struct llama_sampler *smpl = llama_sampler_chain_init(llama_sampler_chain_default_params());
    llama_sampler_chain_add(smpl, llama_sampler_init_greedy());

    printf("device: %s\n", devs[0] ? ggml_backend_dev_name(devs[0]) : "none (ggml-cpu)");
    printf("flash attention: %s\n", flash_attn ? "on" : "off");
    printf("prompt: %d tokens\n", n_prompt);
    fflush(stdout);

    /* Decode the prompt, then one token at a time; the stats of the single-token decodes
     * (all alike) are the per-token counts. */
    node_stats tg = {0};
    static float gap[MAX_TOKENS];
    int n_gen = 0;
    llama_token *gen = toks + n_prompt;
    struct llama_batch batch = llama_batch_get_one(toks, n_prompt);
    for (;;) {
        memset(&g_stats, 0, sizeof g_stats);
        if (llama_decode(ctx, batch) != 0) {
            fprintf(stderr, "ct-llama-greedy: llama_decode failed after %d tokens\n", n_gen);
            return 1;
        }
        if (n_gen > 0) tg = g_stats;
        if (margins) gap[n_gen] = top_gap(llama_get_logits_ith(ctx, -1), llama_vocab_n_tokens(vocab));
        llama_token id = llama_sampler_sample(smpl, ctx, -1);
        if (llama_vocab_is_eog(vocab, id)) break;
        gen[n_gen++] = id;
        if (n_gen == n_predict) break;
        batch = llama_batch_get_one(&gen[n_gen - 1], 1);
    }

    printf("tokens:");
    for (int i = 0; i < n_gen; i++) printf(" %d", gen[i]);
    printf("\n");
    if (margins) {
        printf("margins:");
        for (int i = 0; i < n_gen; i++) printf(" %.3f", gap[i]);
        printf("\n");
    }
    struct llama_perf_context_data perf = llama_perf_context(ctx);
    printf("speed: %.1f prompt tokens/s, %.1f generated tokens/s (llama.cpp timings: %d tokens in %.0f ms, %d in %.0f ms)\n",
           perf.t_p_eval_ms > 0 ? 1e3 * perf.n_p_eval / perf.t_p_eval_ms : 0.0,
           perf.t_eval_ms > 0 ? 1e3 * perf.n_eval / perf.t_eval_ms : 0.0, perf.n_p_eval, perf.t_p_eval_ms,
           perf.n_eval, perf.t_eval_ms);
    printf("per token:");
    const char *sep = " ";
    long on_cpu = 0;
    for (int i = 0; i < tg.n; i++) {
        if (!strncmp(tg.name[i], "CPU", 3)) { /* ggml-cpu's buffers: CPU, CPU_Mapped, ... */
            on_cpu += tg.count[i];
            continue;
        }
        printf("%s%ld nodes on %s", sep, tg.count[i], tg.name[i]);
        sep = ", ";
    }
    printf("%s%ld on the CPU, %ld splits (llama.cpp's graph reserve: %s)\n", sep, on_cpu, tg.runs, g_splits);
    if (devs[0] && tg.n_ops > 0) {
        printf("on the CPU:");
        for (int j = 0; j < tg.n_ops; j++) printf("%s %s x%ld", j ? "," : "", tg.cpu_op[j], tg.cpu_op_count[j]);
        printf("\n");
    }
    if (devs[0]) printf("beyond the input layer: %ld nodes on the CPU\n", on_cpu - tg.cpu_input);
    printf("answer:\n");
    for (int i = 0; i < n_gen; i++) {
        char piece[256];
        int n = llama_token_to_piece(vocab, gen[i], piece, sizeof piece, 0, false);
        if (n > 0) fwrite(piece, 1, (size_t)n, stdout);
    }
    printf("\n");

    llama_sampler_free(smpl);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
