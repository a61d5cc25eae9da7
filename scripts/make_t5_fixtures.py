#!/usr/bin/python3
"""Tiny Hugging Face T5-family checkpoints plus reference outputs from an independent T5.

For each family (T5 v1.0: relu FF, tied head; T5 v1.1 / FLAN-T5: gated-GELU, untied head;
FLAN-Alpaca: the FLAN-T5 architecture with its own config quirks) this writes, in HF layout,
    tests/fixtures/t5/<family>/config.json, model.safetensors, tokenizer.json, tokenizer_config.json
and reference.json: token ids, masks, encoder last hidden states and decoder logits computed by
the T5 forward pass below — written from the T5 paper and the semantics of HF's modeling_t5
(RMS norm, relative position buckets shared from layer 0, no 1/sqrt(d_kv), gelu_new, tied-head
scaling), in float64, without `transformers` (not installable here) and without our TypeScript.

Also: `--verify-ours DIR` loads an autoui checkpoint's model.safetensors, keeps only the tensors
with Hugging Face T5 names, runs them through the same reference and compares with the logits
our TypeScript model stored next to it (DIR/ours_reference.json).

Run with Debian's python3-torch:
    /usr/bin/python3 scripts/make_t5_fixtures.py                # writes tests/fixtures/t5/
    /usr/bin/python3 scripts/make_t5_fixtures.py --verify-ours tests/fixtures/t5/ours
"""
import json
import math
import os
import struct
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "t5")

# --- safetensors by hand (the `safetensors` package is not installed here) -------------------
DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64"}
FROM_DTYPE = {v: k for k, v in DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    header = {"__metadata__": metadata or {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        raw = t.view(torch.uint8).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - (8 + len(js)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        start, end = e["data_offsets"]
        raw = bytearray(data[8 + n + start : 8 + n + end])
        dt = FROM_DTYPE[e["dtype"]]
        if dt == torch.bfloat16:
            t = torch.frombuffer(raw, dtype=torch.int16).view(torch.bfloat16)
        else:
            t = torch.frombuffer(raw, dtype=dt)
        out[name] = t.reshape(e["shape"]).clone()
    return out


# --- the reference T5 (float64) ----------------------------------------------------------------
def rms_norm(x, w, eps):
    # T5LayerNorm: scale only, no mean subtraction, no bias; variance in full precision.
    return w * (x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def position_bucket(rel, bidirectional, num_buckets, max_distance):
    """rel = key position - query position (T5 paper §2.1; HF _relative_position_bucket)."""
    out = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        out = out + (rel > 0).long() * num_buckets
        n = rel.abs()
    else:
        n = (-rel).clamp(min=0)
    max_exact = num_buckets // 2
    # Computed in float32 like PyTorch does in HF, so bucket edges match the checkpoint's training.
    large = max_exact + (
        torch.log(n.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)
    ).to(torch.long)
    large = large.clamp(max=num_buckets - 1)
    return out + torch.where(n < max_exact, n, large)


def position_bias(table, q_len, k_len, bidirectional, max_distance):
    rel = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    buckets = position_bucket(rel, bidirectional, table.shape[0], max_distance)
    return table[buckets].permute(2, 0, 1)[None]  # [1, H, q, k]


def attention(x, kv, W, prefix, heads, bias):
    b, lq, _ = x.shape
    lk = kv.shape[1]
    q = (x @ W[prefix + ".q.weight"].T).view(b, lq, heads, -1).transpose(1, 2)
    k = (kv @ W[prefix + ".k.weight"].T).view(b, lk, heads, -1).transpose(1, 2)
    v = (kv @ W[prefix + ".v.weight"].T).view(b, lk, heads, -1).transpose(1, 2)
    scores = q @ k.transpose(-1, -2) + bias  # no 1/sqrt(d_kv) in T5
    ctx = torch.softmax(scores, dim=-1) @ v
    return ctx.transpose(1, 2).reshape(b, lq, -1) @ W[prefix + ".o.weight"].T


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def feed_forward(x, W, prefix, cfg):
    if cfg["feed_forward_proj"] == "relu":
        h = torch.relu(x @ W[prefix + ".wi.weight"].T)
    else:
        h = gelu_new(x @ W[prefix + ".wi_0.weight"].T) * (x @ W[prefix + ".wi_1.weight"].T)
    return h @ W[prefix + ".wo.weight"].T


def mask_bias(mask):
    return (1.0 - mask[:, None, None, :].double()) * -1e9


def encoder(W, cfg, ids, mask):
    eps, heads = cfg["layer_norm_epsilon"], cfg["num_heads"]
    x = W["shared.weight"][ids]
    L = ids.shape[1]
    bias = position_bias(W["encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], L, L, True,
                         cfg["relative_attention_max_distance"]) + mask_bias(mask)
    for i in range(cfg["num_layers"]):
        p = f"encoder.block.{i}"
        x = x + attention(rms_norm(x, W[p + ".layer.0.layer_norm.weight"], eps), rms_norm(x, W[p + ".layer.0.layer_norm.weight"], eps),
                          W, p + ".layer.0.SelfAttention", heads, bias)
        x = x + feed_forward(rms_norm(x, W[p + ".layer.1.layer_norm.weight"], eps), W, p + ".layer.1.DenseReluDense", cfg)
    return rms_norm(x, W["encoder.final_layer_norm.weight"], eps)


def decoder_logits(W, cfg, dec_ids, memory, mask):
    eps, heads = cfg["layer_norm_epsilon"], cfg["num_heads"]
    x = W["shared.weight"][dec_ids]
    T = dec_ids.shape[1]
    causal = torch.triu(torch.full((T, T), -1e9, dtype=torch.float64), diagonal=1)[None, None]
    self_bias = position_bias(W["decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"], T, T, False,
                              cfg["relative_attention_max_distance"]) + causal
    cross_bias = mask_bias(mask)
    for i in range(cfg["num_decoder_layers"]):
        p = f"decoder.block.{i}"
        h = rms_norm(x, W[p + ".layer.0.layer_norm.weight"], eps)
        x = x + attention(h, h, W, p + ".layer.0.SelfAttention", heads, self_bias)
        x = x + attention(rms_norm(x, W[p + ".layer.1.layer_norm.weight"], eps), memory, W, p + ".layer.1.EncDecAttention", heads, cross_bias)
        x = x + feed_forward(rms_norm(x, W[p + ".layer.2.layer_norm.weight"], eps), W, p + ".layer.2.DenseReluDense", cfg)
    x = rms_norm(x, W["decoder.final_layer_norm.weight"], eps)
    if cfg["tie_word_embeddings"]:
        return (x * cfg["d_model"] ** -0.5) @ W["shared.weight"].T
    return x @ W["lm_head.weight"].T


# --- random tiny checkpoints ---------------------------------------------------------------------
def random_weights(cfg, gen):
    d, inner, ff, V = cfg["d_model"], cfg["num_heads"] * cfg["d_kv"], cfg["d_ff"], cfg["vocab_size"]
    W = {}

    def normal(name, shape, std):
        W[name] = torch.randn(*shape, generator=gen) * std

    def norm(name):  # not all ones, so a mix-up of norm weights shows in the outputs
        W[name] = 1.0 + 0.2 * torch.randn(d, generator=gen)

    normal("shared.weight", (V, d), 1.0)
    gated = cfg["feed_forward_proj"] == "gated-gelu"
    for stack, n in (("encoder", cfg["num_layers"]), ("decoder", cfg["num_decoder_layers"])):
        for i in range(n):
            p = f"{stack}.block.{i}"
            atts = [p + ".layer.0.SelfAttention"] + ([p + ".layer.1.EncDecAttention"] if stack == "decoder" else [])
            for a in atts:
                normal(a + ".q.weight", (inner, d), (d * cfg["d_kv"]) ** -0.5)
                normal(a + ".k.weight", (inner, d), d ** -0.5)
                normal(a + ".v.weight", (inner, d), d ** -0.5)
                normal(a + ".o.weight", (d, inner), inner ** -0.5)
            if i == 0:
                normal(p + ".layer.0.SelfAttention.relative_attention_bias.weight", (cfg["relative_attention_num_buckets"], cfg["num_heads"]), 0.5)
            ffl = 1 if stack == "encoder" else 2
            for k in range(ffl + 1):
                norm(f"{p}.layer.{k}.layer_norm.weight")
            f = f"{p}.layer.{ffl}.DenseReluDense"
            for wi in (["wi_0", "wi_1"] if gated else ["wi"]):
                normal(f"{f}.{wi}.weight", (ff, d), d ** -0.5)
            normal(f"{f}.wo.weight", (d, ff), ff ** -0.5)
        norm(f"{stack}.final_layer_norm.weight")
    if not cfg["tie_word_embeddings"]:
        normal("lm_head.weight", (V, d), d ** -0.5)
    return W


# A Unigram vocabulary in T5's tokenizer.json layout: <pad> 0, </s> 1, <unk> 2, then pieces.
PIECES = [
    ("▁", -2.0), ("▁open", -3.0), ("▁the", -3.0), ("▁app", -3.5), ("▁search", -3.5), ("▁for", -3.5),
    ("▁coffee", -4.0), ("▁near", -4.0), ("▁me", -4.0), ("▁a", -4.0), ("▁s", -4.5), ("▁c", -4.5),
    ("e", -5.0), ("a", -5.0), ("o", -5.0), ("p", -5.0), ("n", -5.0), ("t", -5.0), ("h", -5.0), ("r", -5.0),
    ("c", -5.0), ("f", -5.0), ("m", -5.0), ("i", -5.0), ("l", -5.0), ("s", -5.0), ("d", -5.0), ("g", -5.0),
    ("u", -5.0), ("y", -5.0), ("b", -5.0), ("w", -5.0), ("k", -5.0), (".", -5.0), (",", -5.0), ("?", -5.5),
    ("x", -6.0), ("v", -6.0), ("z", -6.0), ("j", -6.0), ("q", -6.0),
]
SPECIALS = [("<pad>", 0), ("</s>", 1), ("<unk>", 2)]


def tokenizer_files():
    metaspace = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}
    tok = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
            for c, i in SPECIALS
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, metaspace]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
            "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}},
        },
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": 2, "byte_fallback": False,
                  "vocab": [[c, 0.0] for c, _ in SPECIALS] + [[p, s] for p, s in PIECES]},
    }
    conf = {"tokenizer_class": "T5Tokenizer", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
            "extra_ids": 0, "additional_special_tokens": [], "model_max_length": 512}
    return tok, conf


def base_config(**kw):
    cfg = {
        "architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
        "vocab_size": 48,  # > the tokenizer's 44 entries, as T5's 32128 > 32100
        "d_model": 16, "d_kv": 4, "d_ff": 24, "num_layers": 2, "num_decoder_layers": 2, "num_heads": 4,
        "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128,
        "dropout_rate": 0.1, "layer_norm_epsilon": 1e-6, "initializer_factor": 1.0,
        "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0, "use_cache": True,
    }
    cfg.update(kw)
    return cfg


FAMILIES = {
    # T5 v1.0 (t5-small style): relu, tied head; old configs have no relative_attention_max_distance
    # and no num_decoder_layers.
    "t5-v1_0": base_config(feed_forward_proj="relu", tie_word_embeddings=True, num_decoder_layers=None,
                           relative_attention_max_distance=None, relative_attention_num_buckets=8, d_ff=32),
    # T5 v1.1 / FLAN-T5: gated-gelu, untied head, inner width != d_model, deeper decoder.
    "flan-t5": base_config(feed_forward_proj="gated-gelu", tie_word_embeddings=False, num_heads=3, d_kv=6,
                           num_decoder_layers=3, relative_attention_num_buckets=8, relative_attention_max_distance=12,
                           dense_act_fn="gelu_new", is_gated_act=True),
    # FLAN-Alpaca (declare-lab): FLAN-T5 weights fine-tuned; its config names the architecture the same
    # way, ships num_decoder_layers explicitly and keeps the tokenizer's extra ids.
    "flan-alpaca": base_config(feed_forward_proj="gated-gelu", tie_word_embeddings=False, d_model=24, d_kv=8,
                               num_heads=2, d_ff=40, num_layers=3, num_decoder_layers=2, torch_dtype="float32",
                               _name_or_path="declare-lab/flan-alpaca-base"),
}


def effective(cfg):
    """The values HF's T5Config derives for missing or null fields."""
    c = dict(cfg)
    if c.get("num_decoder_layers") is None:
        c["num_decoder_layers"] = c["num_layers"]
    if c.get("relative_attention_max_distance") is None:
        c["relative_attention_max_distance"] = 128
    return c


def clean(cfg):
    return {k: v for k, v in cfg.items() if v is not None}


def make_family(name, cfg, seed):
    out = os.path.join(ROOT, name)
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(seed)
    eff = effective(cfg)
    W = random_weights(eff, gen)
    stored = dict(W)
    if name == "t5-v1_0":
        # Original T5 checkpoints carry a never-used cross-attention bias table and the tied
        # embedding copies; a loader must accept (and ignore) them.
        stored["decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight"] = torch.zeros(
            eff["relative_attention_num_buckets"], eff["num_heads"])
        stored["encoder.embed_tokens.weight"] = W["shared.weight"].clone()
        stored["decoder.embed_tokens.weight"] = W["shared.weight"].clone()
    if name == "flan-alpaca":
        stored = {k: v.to(torch.bfloat16) if k == "shared.weight" else v for k, v in stored.items()}
        W["shared.weight"] = stored["shared.weight"].float()  # the reference sees what the file holds
    write_safetensors(os.path.join(out, "model.safetensors"), stored)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(clean(cfg), f, indent=2)
    tok, tok_conf = tokenizer_files()
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False, indent=1)
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok_conf, f, indent=2)

    # Inputs: a padded batch long enough to reach the logarithmic buckets.
    V = eff["vocab_size"]
    L, T = 21, 9
    ids = torch.randint(3, V, (2, L), generator=gen)
    mask = torch.ones(2, L, dtype=torch.long)
    mask[1, 14:] = 0
    ids[1, 14:] = 0
    ids[:, -1] = torch.where(mask[:, -1] == 1, torch.tensor(1), torch.tensor(0))
    dec = torch.randint(2, V, (2, T), generator=gen)
    dec[:, 0] = eff["decoder_start_token_id"]
    W64 = {k: v.double() for k, v in W.items()}
    with torch.no_grad():
        enc = encoder(W64, eff, ids, mask)
        logits = decoder_logits(W64, eff, dec, enc, mask)
    ref = {
        "input_ids": ids.tolist(), "attention_mask": mask.tolist(), "decoder_input_ids": dec.tolist(),
        "encoder_last_hidden_state": enc.flatten().tolist(), "encoder_shape": list(enc.shape),
        "logits": logits.flatten().tolist(), "logits_shape": list(logits.shape),
    }
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    sizes = {fn: os.path.getsize(os.path.join(out, fn)) for fn in os.listdir(out)}
    print(name, sizes)


def write_spiece(out):
    """The same vocabulary as a SentencePiece model (spiece.model, as the original T5 releases ship),
    encoded with python3-protobuf from the public sentencepiece_model.proto field numbers."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="fixture_spm.proto", package="sentencepiece", syntax="proto2")
    sp = fdp.message_type.add(name="SentencePiece")
    sp.field.add(name="piece", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    sp.field.add(name="score", number=2, type=F.TYPE_FLOAT, label=F.LABEL_OPTIONAL)
    sp.field.add(name="type", number=3, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    ts = fdp.message_type.add(name="TrainerSpec")
    ts.field.add(name="model_type", number=3, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    ts.field.add(name="unk_id", number=40, type=F.TYPE_INT32, label=F.LABEL_OPTIONAL)
    ns = fdp.message_type.add(name="NormalizerSpec")
    ns.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    mp = fdp.message_type.add(name="ModelProto")
    mp.field.add(name="pieces", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".sentencepiece.SentencePiece")
    mp.field.add(name="trainer_spec", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".sentencepiece.TrainerSpec")
    mp.field.add(name="normalizer_spec", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".sentencepiece.NormalizerSpec")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("sentencepiece.ModelProto")) \
        if hasattr(message_factory, "GetMessageClass") else \
        message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("sentencepiece.ModelProto"))
    m = cls()
    m.trainer_spec.model_type = 1  # UNIGRAM
    m.trainer_spec.unk_id = 2
    m.normalizer_spec.name = "identity"
    for piece, kind in (("<pad>", 3), ("</s>", 3), ("<unk>", 2)):  # CONTROL, CONTROL, UNKNOWN
        m.pieces.add(piece=piece, score=0.0, type=kind)
    for piece, score in PIECES:
        m.pieces.add(piece=piece, score=score, type=1)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "spiece.model"), "wb") as f:
        f.write(m.SerializeToString())
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "T5Tokenizer", "extra_ids": 2, "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>"}, f, indent=2)


HF_PREFIXES = ("shared.", "encoder.", "decoder.", "lm_head.")


def verify_ours(d):
    """Loads an autoui checkpoint's language tensors (HF names) into the reference T5."""
    with open(os.path.join(d, "ours_reference.json")) as f:
        ref = json.load(f)
    tensors = read_safetensors(os.path.join(d, "model.safetensors"))
    lang = {k: v.double() for k, v in tensors.items() if k.startswith(HF_PREFIXES)}
    extra = sorted(k for k in tensors if not k.startswith(HF_PREFIXES))
    cfg = ref["hf_config"]
    ids = torch.tensor(ref["input_ids"])
    mask = torch.tensor(ref["attention_mask"])
    dec = torch.tensor(ref["decoder_input_ids"])
    with torch.no_grad():
        enc = encoder(lang, cfg, ids, mask)
        logits = decoder_logits(lang, cfg, dec, enc, mask)
    want_enc = torch.tensor(ref["encoder_last_hidden_state"], dtype=torch.float64).reshape(enc.shape)
    want = torch.tensor(ref["logits"], dtype=torch.float64).reshape(logits.shape)
    e1 = (enc - want_enc).abs().max().item()
    e2 = (logits - want).abs().max().item()
    print(f"autoui checkpoint {d}: {len(lang)} T5 tensors, extra tensors {extra}")
    print(f"max |encoder - ours| = {e1:.2e}, max |logits - ours| = {e2:.2e}")
    if max(e1, e2) > 1e-4:
        sys.exit(1)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--verify-ours":
        verify_ours(sys.argv[2])
        return
    torch.manual_seed(0)
    for i, (name, cfg) in enumerate(FAMILIES.items()):
        make_family(name, cfg, 1234 + i)
    write_spiece(os.path.join(ROOT, "spiece-only"))


if __name__ == "__main__":
    main()
