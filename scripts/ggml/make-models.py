#!/usr/bin/env python3
"""Write GGUF models with random weights for tests and benchmarks (ggml/README.md).

    make-models.py --out DIR [--only NAME ...] [--gguf-py DIR] [--check]

The models are real llama.cpp architectures with made-up weights, written with gguf-py from
the pinned llama.cpp tree (scripts/ggml/build-ggml.sh; the tree's gguf-py directory goes on
sys.path, found through CT_GGML_SOURCE_DIR or --gguf-py). Every file is a function of this
script alone: each tensor's values come from a generator seeded by the model's seed and the
tensor's name, so two runs write the same bytes (--check prints their sha256).

  llama         Llama architecture (RoPE NORMAL, GQA), n_embd 256, 4 layers, 4 heads of 64,
                2 KV heads, n_ff 768; F32 norms, F16, Q8_0 and Q4_0 matrices (a fixed mix).
  moe           qwen3moe (RoPE NEOX, Q/K norms, 8 experts, 2 used per token: MUL_MAT_ID,
                ARGSORT/TOP_K, GET_ROWS of the router weights, SUM_ROWS, DIV), n_embd 256,
                2 layers, 4 heads of 64, 2 KV heads, expert n_ff 128.
  llama8b-q4_0  Llama-3-8B shapes (n_embd 4096, 32 layers, 32 heads, 8 KV heads, n_ff 14336,
  llama8b-q4_k_m  vocab 128256) for speed only: quantized blocks are random bytes with small
                finite fp16 scales. q4_0: Q4_0 matrices, Q6_K output (as llama-quantize's Q4_0);
                q4_k_m: Q4_K, with Q6_K for the output and for attn_v and ffn_down in the
                layers that Q4_K_M gives more bits (the first and last eighth, every third
                between). About 4.5 GB each: written tensor by tensor, never held whole.

The tiny models share one SentencePiece-style ('llama') vocabulary: <unk>, <s>, </s>, the 256
byte tokens <0x00>..<0xFF>, printable ASCII, and some English words with their prefixes, so
llama.cpp tokenizes any text (unknown characters fall back to bytes). The 8B files have a
synthetic vocabulary of the same kind padded to 128256 pieces.

Greedy decoding of a random model is as deterministic as any other; what matters for a test
that compares two backends token for token is that no greedy choice is a near-tie: ctensor and
ggml-cpu round differently (most of it in the Q8_0/Q4_0 matmuls), and with purely random
weights their logits differed by 0.4-1.5 at the worst token of a step (spread: 8) while 32
greedy choices nearly always had a smaller lead somewhere. So the tiny models' output
projections carry a random bigram chain: output row perm[t] is 0.4 (llama) or 0.2 (moe) times
token t's embedding row, plus noise, which makes each token favour one successor by a wide
lead, while the layers (whose outputs join the embedding in the residual stream) still move
the hidden state enough to decide some choices (3-5 of the 31 in the test depart from the
chain). The seeds (MODELS) are the best of eight; scripts/ggml/test-model.sh prints the
smallest lead of each run.
"""

import argparse
import hashlib
import os
import sys
import time

import numpy as np

TINY_VOCAB_WORDS = (
    "the of and to in is was for that on as with by he at from his an were are which this be or "
    "has had not but first one their its new after who they have her she two been other when there "
    "all during into school time may years more most only over city some world would where later up "
    "such used many can state about national out known university united then made capital France "
    "Paris water color red green blue once upon three primary what how why hello"
).split()


def import_gguf(path):
    """gguf-py from the pinned tree: --gguf-py, else $CT_GGML_SOURCE_DIR/gguf-py."""
    if path is None:
        src = os.environ.get("CT_GGML_SOURCE_DIR")
        if not src:
            sys.exit("make-models.py: pass --gguf-py DIR (the pinned tree's gguf-py: "
                     "$CT_GGML_SOURCE_DIR/gguf-py after eval \"$(scripts/ggml/build-ggml.sh | tail -1)\") "
                     "or export CT_GGML_SOURCE_DIR")
        path = os.path.join(src, "gguf-py")
    if not os.path.isfile(os.path.join(path, "gguf", "gguf_writer.py")):
        sys.exit("make-models.py: no gguf-py in %s" % path)
    sys.path.insert(0, path)
    try:
        import yaml  # noqa: F401 (gguf-py's metadata module imports it; nothing here uses it)
    except ImportError:
        # A machine with numpy alone (the GPU machines): an empty stand-in is enough, as
        # only model-card parsing, which this script never calls, touches yaml.
        import types

        sys.modules["yaml"] = types.ModuleType("yaml")
    import gguf  # noqa: E402 (the path above)

    return gguf


# ---------------------------------------------------------------------------------------------
# vocabulary


def spm_vocab(gguf, n_vocab=None):
    """A SentencePiece-style vocabulary: tokens, scores, types; padded with synthetic pieces
    to n_vocab when given. Scores grow with length, so the tokenizer prefers longer pieces."""
    T = gguf.TokenType
    tokens, scores, types = ["<unk>", "<s>", "</s>"], [0.0, 0.0, 0.0], [T.UNKNOWN, T.CONTROL, T.CONTROL]
    for b in range(256):
        tokens.append("<0x%02X>" % b)
        scores.append(0.0)
        types.append(T.BYTE)
    pieces = ["\u2581"] + [chr(c) for c in range(33, 127)]
    pieces += ["\u2581" + chr(c) for c in range(33, 127)]
    for w in TINY_VOCAB_WORDS:
        for n in range(2, len(w) + 1):
            pieces.append("\u2581" + w[:n])
            pieces.append(w[:n])
    seen = set()
    for p in pieces:
        if p not in seen:
            seen.add(p)
            tokens.append(p)
            scores.append(-1000.0 + 10.0 * len(p))
            types.append(T.NORMAL)
    if n_vocab is not None:
        i = 0
        while len(tokens) < n_vocab:
            p = "\u2581x%05d" % i
            i += 1
            tokens.append(p)
            scores.append(-2000.0)
            types.append(T.NORMAL)
        assert len(tokens) == n_vocab
    return tokens, scores, types


def add_vocab(w, gguf, n_vocab=None):
    tokens, scores, types = spm_vocab(gguf, n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_space_prefix(True)
    return len(tokens)


# ---------------------------------------------------------------------------------------------
# tensors: each is (name, numpy shape, ggml type, maker); maker(rng) returns the array that
# gguf-py writes (float32/float16 values, or the uint8 blocks of a quantized type).


def rng_for(seed, name):
    h = hashlib.sha256(("%d/%s" % (seed, name)).encode()).digest()
    return np.random.default_rng(int.from_bytes(h[:8], "little"))


def values(gguf, shape, qtype, std, mean=0.0, base=None):
    """Random normal values, plus base() when given, stored as qtype (F32, F16, or quantized by
    gguf-py)."""
    Q = gguf.GGMLQuantizationType

    def make(rng):
        a = (mean + std * rng.standard_normal(shape)).astype(np.float32)
        if base is not None:
            a += base()
        if qtype == Q.F32:
            return a
        if qtype == Q.F16:
            return a.astype(np.float16)
        return gguf.quants.quantize(a, qtype)

    return make


# The fp16 scale fields of each block (byte offset, value): small, so no product overflows.
RAW_SCALES = {
    "Q4_0": [(0, 2.0e-3)],
    "Q8_0": [(0, 2.0e-4)],
    "Q4_K": [(0, 1.0e-4), (2, 1.0e-4)],
    "Q6_K": [(208, 6.1e-5)],
}


def raw_blocks(gguf, shape, qtype):
    """Random block bytes with the fp16 scales set to small finite values (speed tests only)."""
    Q = gguf.GGMLQuantizationType
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    byte_shape = gguf.quant_shape_to_byte_shape(shape, qtype)

    def make(rng):
        a = np.frombuffer(rng.bytes(int(np.prod(byte_shape))), dtype=np.uint8).copy()
        blocks = a.reshape(-1, size)
        for off, v in RAW_SCALES[Q(qtype).name]:
            blocks[:, off:off + 2] = np.frombuffer(np.float16(v).tobytes(), dtype=np.uint8)
        return a.reshape(byte_shape)

    return make


def tensor(gguf, name, shape, qtype, std, mean=0.0, base=None):
    """One tensor of random normal values: (name, shape, type, maker)."""
    return (name, shape, qtype, values(gguf, shape, qtype, std, mean, base))


def successor_rows(seed, model, embd_name, shape, std, scale):
    """scale * the token embedding's rows (as values() drew them, std) in a fixed random
    order: an output projection with these rows makes the token whose embedding is row p
    favour token perm[p] next, by a lead that grows with n_embd (a random bigram chain)."""

    def base():
        e = std * rng_for(seed, model + "/" + embd_name).standard_normal(shape)
        perm = rng_for(seed, model + "/successors").permutation(shape[0])
        out = np.empty(shape, dtype=np.float32)
        out[perm] = e
        out[:3] = 0  # <unk>, <s>, </s> succeed no token
        return scale * out

    return base


def nbytes_of(gguf, shape, qtype):
    Q = gguf.GGMLQuantizationType
    if qtype == Q.F32:
        return int(np.prod(shape)) * 4
    if qtype == Q.F16:
        return int(np.prod(shape)) * 2
    return int(np.prod(gguf.quant_shape_to_byte_shape(shape, qtype)))


def tname(gguf, t, bid=None):
    return gguf.TENSOR_NAMES[t].format(bid=bid) + ".weight"


# ---------------------------------------------------------------------------------------------
# models


def tiny_llama(gguf, w, seed):
    """Llama, 4 layers; the matrix types vary by layer so F16, Q8_0 and Q4_0 all appear."""
    Q, T = gguf.GGMLQuantizationType, gguf.MODEL_TENSOR
    n_embd, n_layer, n_head, n_head_kv, n_ff = 256, 4, 4, 2, 768
    head = n_embd // n_head
    n_vocab = add_vocab(w, gguf)
    w.add_context_length(2048)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_dimension_count(head)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    s = 1.0 / np.sqrt(n_embd)
    mix = [  # per layer: q, k, v, o, gate, up, down
        (Q.Q4_0, Q.Q4_0, Q.Q8_0, Q.F16, Q.Q4_0, Q.Q4_0, Q.Q8_0),
        (Q.F16, Q.F16, Q.F16, Q.Q8_0, Q.Q8_0, Q.Q8_0, Q.Q4_0),
        (Q.Q8_0, Q.Q8_0, Q.Q4_0, Q.Q4_0, Q.F16, Q.F16, Q.F16),
        (Q.Q4_0, Q.Q8_0, Q.Q8_0, Q.Q4_0, Q.Q4_0, Q.Q8_0, Q.Q4_0),
    ]
    ts = [
        tensor(gguf, tname(gguf, T.TOKEN_EMBD), (n_vocab, n_embd), Q.Q8_0, 1.0),
        tensor(gguf, tname(gguf, T.OUTPUT_NORM), (n_embd,), Q.F32, 0.1, 1.0),
        tensor(gguf, tname(gguf, T.OUTPUT), (n_vocab, n_embd), Q.Q4_0, 0.5,
               base=successor_rows(seed, "llama", tname(gguf, T.TOKEN_EMBD), (n_vocab, n_embd), 1.0, 0.4)),
    ]
    for i in range(n_layer):
        q, k, v, o, g, u, d = mix[i]
        ts += [
            tensor(gguf, tname(gguf, T.ATTN_NORM, i), (n_embd,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.ATTN_Q, i), (n_embd, n_embd), q, 2 * s),
            tensor(gguf, tname(gguf, T.ATTN_K, i), (n_head_kv * head, n_embd), k, 2 * s),
            tensor(gguf, tname(gguf, T.ATTN_V, i), (n_head_kv * head, n_embd), v, s),
            tensor(gguf, tname(gguf, T.ATTN_OUT, i), (n_embd, n_embd), o, s),
            tensor(gguf, tname(gguf, T.FFN_NORM, i), (n_embd,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.FFN_GATE, i), (n_ff, n_embd), g, s),
            tensor(gguf, tname(gguf, T.FFN_UP, i), (n_ff, n_embd), u, s),
            tensor(gguf, tname(gguf, T.FFN_DOWN, i), (n_embd, n_ff), d, 1.0 / np.sqrt(n_ff)),
        ]
    return ts


def tiny_moe(gguf, w, seed):
    """qwen3moe, 2 layers, 8 experts of which 2 per token; the router (ffn_gate_inp) F32."""
    Q, T = gguf.GGMLQuantizationType, gguf.MODEL_TENSOR
    n_embd, n_layer, n_head, n_head_kv, head, n_exp, n_used, n_ff_exp = 256, 2, 4, 2, 64, 8, 2, 128
    n_vocab = add_vocab(w, gguf)
    w.add_context_length(2048)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff_exp * n_used)
    w.add_expert_feed_forward_length(n_ff_exp)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(n_used)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_key_length(head)
    w.add_value_length(head)
    w.add_rope_dimension_count(head)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    s = 1.0 / np.sqrt(n_embd)
    ts = [
        tensor(gguf, tname(gguf, T.TOKEN_EMBD), (n_vocab, n_embd), Q.F16, 1.0),
        tensor(gguf, tname(gguf, T.OUTPUT_NORM), (n_embd,), Q.F32, 0.1, 1.0),
        tensor(gguf, tname(gguf, T.OUTPUT), (n_vocab, n_embd), Q.Q8_0, 0.5,
               base=successor_rows(seed, "moe", tname(gguf, T.TOKEN_EMBD), (n_vocab, n_embd), 1.0, 0.2)),
    ]
    for i in range(n_layer):
        # layer 0: Q8_0 experts, F16 attention; layer 1: Q4_0 experts, Q8_0/Q4_0 attention
        a, e = (Q.F16, Q.Q8_0) if i == 0 else (Q.Q8_0, Q.Q4_0)
        ts += [
            tensor(gguf, tname(gguf, T.ATTN_NORM, i), (n_embd,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.ATTN_Q, i), (n_head * head, n_embd), a, s),
            tensor(gguf, tname(gguf, T.ATTN_K, i), (n_head_kv * head, n_embd), a, s),
            tensor(gguf, tname(gguf, T.ATTN_V, i), (n_head_kv * head, n_embd), Q.Q4_0 if i else a, s),
            tensor(gguf, tname(gguf, T.ATTN_Q_NORM, i), (head,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.ATTN_K_NORM, i), (head,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.ATTN_OUT, i), (n_embd, n_head * head), a, 1.0 / np.sqrt(n_head * head)),
            tensor(gguf, tname(gguf, T.FFN_NORM, i), (n_embd,), Q.F32, 0.1, 1.0),
            tensor(gguf, tname(gguf, T.FFN_GATE_INP, i), (n_exp, n_embd), Q.F32, 4 * s),
            tensor(gguf, tname(gguf, T.FFN_GATE_EXP, i), (n_exp, n_ff_exp, n_embd), e, s),
            tensor(gguf, tname(gguf, T.FFN_UP_EXP, i), (n_exp, n_ff_exp, n_embd), e, s),
            tensor(gguf, tname(gguf, T.FFN_DOWN_EXP, i), (n_exp, n_embd, n_ff_exp), e, 1.0 / np.sqrt(n_ff_exp)),
        ]
    return ts


def llama8b(gguf, w, seed, kind):
    """Llama-3-8B shapes, random blocks; kind 'q4_0' or 'q4_k_m'."""
    Q, T = gguf.GGMLQuantizationType, gguf.MODEL_TENSOR
    n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab = 4096, 32, 32, 8, 14336, 128256
    head = n_embd // n_head
    add_vocab(w, gguf, n_vocab)
    w.add_context_length(8192)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_dimension_count(head)
    w.add_rope_freq_base(500000.0)
    w.add_layer_norm_rms_eps(1e-5)
    if kind == "q4_0":
        w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
        base, embd = Q.Q4_0, Q.Q4_0

        def more_bits(i):
            return False
    else:
        w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
        base, embd = Q.Q4_K, Q.Q4_K

        def more_bits(i):
            return i < n_layer // 8 or i >= 7 * n_layer // 8 or (i - n_layer // 8) % 3 == 2

    def mat(name, shape, qtype):
        return (name, shape, qtype, raw_blocks(gguf, shape, qtype))

    def ones(name, n):
        return (name, (n,), Q.F32, lambda rng: np.ones(n, dtype=np.float32))

    ts = [
        mat(tname(gguf, T.TOKEN_EMBD), (n_vocab, n_embd), embd),
        ones(tname(gguf, T.OUTPUT_NORM), n_embd),
        mat(tname(gguf, T.OUTPUT), (n_vocab, n_embd), Q.Q6_K),
    ]
    kv = n_head_kv * head
    for i in range(n_layer):
        big = Q.Q6_K if more_bits(i) else base
        ts += [
            ones(tname(gguf, T.ATTN_NORM, i), n_embd),
            mat(tname(gguf, T.ATTN_Q, i), (n_embd, n_embd), base),
            mat(tname(gguf, T.ATTN_K, i), (kv, n_embd), base),
            mat(tname(gguf, T.ATTN_V, i), (kv, n_embd), big),
            mat(tname(gguf, T.ATTN_OUT, i), (n_embd, n_embd), base),
            ones(tname(gguf, T.FFN_NORM, i), n_embd),
            mat(tname(gguf, T.FFN_GATE, i), (n_ff, n_embd), base),
            mat(tname(gguf, T.FFN_UP, i), (n_ff, n_embd), base),
            mat(tname(gguf, T.FFN_DOWN, i), (n_embd, n_ff), big),
        ]
    return ts


# name: (architecture, builder, seed). The tiny models' seeds were chosen among 8 (20260, 1..7)
# as the ones whose 32 greedy tokens after "The capital of France is" have the largest
# smallest lead, flash attention on and off (ggml/README.md has the numbers).
MODELS = {
    "llama": ("llama", tiny_llama, 4),
    "moe": ("qwen3moe", tiny_moe, 6),
    "llama8b-q4_0": ("llama", lambda g, w, seed: llama8b(g, w, seed, "q4_0"), 8),
    "llama8b-q4_k_m": ("llama", lambda g, w, seed: llama8b(g, w, seed, "q4_k_m"), 8),
}
DEFAULT = ["llama", "moe"]  # the tiny ones; the 8B files only when named


def write_model(gguf, name, path):
    """Writes one model: header, metadata and tensor infos first, then each tensor's data as
    it is made (gguf-py's add_tensor_info / write_tensor_data), so memory stays at one tensor."""
    arch, build, seed = MODELS[name]
    tmp = path + ".tmp"
    w = gguf.GGUFWriter(tmp, arch)
    w.add_name("ctensor random " + name)
    tensors = build(gguf, w, seed)
    Q = gguf.GGMLQuantizationType
    for tn_, shape, qtype, _ in tensors:
        # an element shape: any dtype but uint8 keeps gguf-py from reading it as a byte shape
        w.add_tensor_info(tn_, shape, np.dtype(np.float32), nbytes_of(gguf, shape, qtype),
                          raw_dtype=None if qtype == Q.F32 else qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for tn_, shape, qtype, make in tensors:
        w.write_tensor_data(make(rng_for(seed, name + "/" + tn_)))
    w.close()
    os.replace(tmp, path)


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(1 << 24)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for NAME.gguf")
    ap.add_argument("--only", nargs="+", choices=sorted(MODELS),
                    help="models to write (default: %s)" % " ".join(DEFAULT))
    ap.add_argument("--check", action="store_true", help="print size and sha256 of each file (writing none)")
    ap.add_argument("--gguf-py", help="gguf-py directory (default: $CT_GGML_SOURCE_DIR/gguf-py)")
    args = ap.parse_args()
    names = args.only or DEFAULT
    os.makedirs(args.out, exist_ok=True)
    if args.check:
        for name in names:
            path = os.path.join(args.out, name + ".gguf")
            if not os.path.exists(path):
                print("%s: missing" % path)
                continue
            print("%s  %d bytes  sha256 %s" % (path, os.path.getsize(path), sha256_of(path)))
        return
    gguf = import_gguf(args.gguf_py)
    import logging

    logging.getLogger("gguf").setLevel(logging.WARNING)  # gguf-py's per-file chatter
    for name in names:
        path = os.path.join(args.out, name + ".gguf")
        t0 = time.time()
        write_model(gguf, name, path)
        print(path, flush=True)
        print("  %s: %.1f MB in %.1f s" % (name, os.path.getsize(path) / 1e6, time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
