"""How well can ONE linear attention over the frozen screen features find the tapped patch?

The score Auto-UI's screen attention gives patch p is q·(W f_p + b): for a fixed query, a linear
function of the patch's features. This probe trains exactly that, with the query a learned bag of
the goal's words (plus step and subset tokens), against the patch nearest each gold tap, and
reports AITW tap matching (within 0.14, or both points in one enlarged annotation box) on the
training and held-out episodes. It bounds what better features can buy, independently of the
T5 around them. Needs Debian's python3-torch and python3-numpy (/usr/bin/python3).

Patches follow each screen's layout as dump_taps.py records it (patchLayout in
src/screen/vision/encoder.ts): the target is the real patch holding the tap, padding patches are
masked out, and a prediction is the centre of its patch's box clipped to the screen.

    node dist/scripts/dump_taps.js runs/demo/synth /tmp/taps
    /usr/bin/python3 scripts/attention_probe.py /tmp/taps [--seeds N]
"""
import json, re, sys
from collections import Counter
import numpy as np
import torch

torch.set_num_threads(1)
d = sys.argv[1]
seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 1
doc = json.load(open(f"{d}/meta.json"))
meta, enc = doc["taps"], doc["encoder"]
R, C = enc["grid"]
N, P = len(meta), R * C
# Memory-mapped: a 20×8×370 set of 6,500 screens is 1.5 GB; batches are copied in as needed.
F = np.memmap(f"{d}/features.f32", dtype=np.float32, mode="r", shape=(N, P, enc["dim"]))

counts = Counter(w for m in meta if m["split"] == "train" for w in re.findall(r"[a-z0-9]+", m["goal"].lower()))
vocab = {}
def tokens(m):
    words = [w if counts[w] >= 5 else "<unk>" for w in re.findall(r"[a-z0-9]+", m["goal"].lower())]
    return [vocab.setdefault(w, len(vocab)) for w in words + [f"<step{min(m['step'], 9)}>", f"<{m['subset']}>"]]
toks = [tokens(m) for m in meta]
L = max(map(len, toks))
ids = torch.zeros(N, L, dtype=torch.long)
mask = torch.zeros(N, L)
for i, t in enumerate(toks):
    ids[i, : len(t)] = torch.tensor(t)
    mask[i, : len(t)] = 1

def layout_of(m):  # stretch encoders (no recorded layout) cover the screen with the whole grid
    return m.get("layout") or {"rows": R, "cols": C, "rowHeight": 1 / R, "colWidth": 1 / C}
rr, cc = np.arange(P) // C, np.arange(P) % C
centres = np.zeros((N, P, 2))
real = np.zeros((N, P), dtype=bool)
target = np.zeros(N, dtype=np.int64)
yx = np.array([m["yx"] for m in meta])
for i, m in enumerate(meta):
    lo = layout_of(m)
    y0, x0 = rr * lo["rowHeight"], cc * lo["colWidth"]  # patchBox: clipped to the screen
    centres[i, :, 0] = y0 + np.minimum(lo["rowHeight"], 1 - y0) / 2
    centres[i, :, 1] = x0 + np.minimum(lo["colWidth"], 1 - x0) / 2
    real[i] = (rr < lo["rows"]) & (cc < lo["cols"])
    r = min(lo["rows"] - 1, int(yx[i, 0] / lo["rowHeight"]))
    c = min(lo["cols"] - 1, int(yx[i, 1] / lo["colWidth"]))
    target[i] = r * C + c
target = torch.tensor(target)
pad = torch.tensor(np.where(real, 0.0, -1e9), dtype=torch.float32)
train = np.array([m["split"] == "train" for m in meta])

def feats(j):
    return torch.from_numpy(np.ascontiguousarray(F[np.sort(j)]))

dm = 128
def fit(seed):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    emb, mix, proj = torch.nn.Embedding(len(vocab), dm), torch.nn.Linear(dm, dm), torch.nn.Linear(enc["dim"], dm)
    params = [*emb.parameters(), *mix.parameters(), *proj.parameters()]
    def scores(j):
        j = np.sort(j)
        t = torch.from_numpy(j)
        q = (emb(ids[t]) * mask[t, :, None]).sum(1) / mask[t].sum(1, keepdim=True)
        q = q + mix(torch.relu(q))
        # q·(W f + b) = (Wᵀq)·f + q·b, and q·b is the same for every patch, so it cancels in the
        # softmax: scoring f against Wᵀq is the same model at dim/dm of the cost of projecting f.
        return torch.einsum("bf,bpf->bp", q @ proj.weight, feats(j)) / dm**0.5 + pad[t]
    opt = torch.optim.Adam(params, 3e-3)
    rows = np.where(train)[0]
    for epoch in range(30):
        rng.shuffle(rows)
        for b in range(0, len(rows), 64):
            j = np.sort(rows[b : b + 64])
            loss = torch.nn.functional.cross_entropy(scores(j), target[torch.from_numpy(j)])
            opt.zero_grad(); loss.backward(); opt.step()
    with torch.no_grad():
        best = torch.cat([scores(np.arange(b, min(N, b + 256))).argmax(1) for b in range(0, N, 256)]).numpy()
    return centres[np.arange(N), best]

def in_box(p, box):  # the reference's 1.4× enlarged box
    y, x, h, w = box
    return abs(p[0] - (y + h / 2)) <= 0.7 * h and abs(p[1] - (x + w / 2)) <= 0.7 * w
def matched(pred):
    return np.array([np.linalg.norm(pred[i] - yx[i]) <= 0.14 or any(in_box(yx[i], b) and in_box(pred[i], b) for b in meta[i]["boxes"]) for i in range(N)])
oks = [matched(fit(seed)) for seed in range(seeds)]
ok = np.mean(oks, axis=0)
spread = " ".join(f"{100 * o[~train].mean():.1f}" for o in oks)
print(f"encoder {enc['id']}: tap matching train {100 * ok[train].mean():.1f} %, held-out {100 * ok[~train].mean():.1f} % ({(~train).sum()} taps; seeds: {spread})")
for s in sorted({m["subset"] for m in meta}):
    sel = np.array([m["subset"] == s for m in meta])
    print(f"  {s:13s} train {100 * ok[train & sel].mean():5.1f}  held-out {100 * ok[~train & sel].mean():5.1f}")
