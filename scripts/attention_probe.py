"""How well can ONE linear attention over the frozen screen features find the tapped patch?

The score Auto-UI's screen attention gives patch p is q·(W f_p + b): for a fixed query, a linear
function of the patch's features. This probe trains exactly that, with the query a learned bag of
the goal's words (plus step and subset tokens), against the patch nearest each gold tap, and
reports AITW tap matching (within 0.14, or both points in one enlarged annotation box) on the
training and held-out episodes. It bounds what better features can buy, independently of the
T5 around them. Needs Debian's python3-torch and python3-numpy (/usr/bin/python3).

    node dist/scripts/dump_taps.js runs/demo/synth /tmp/taps
    /usr/bin/python3 scripts/attention_probe.py /tmp/taps
"""
import json, re, sys
from collections import Counter
import numpy as np
import torch

torch.manual_seed(0)
np.random.seed(0)
torch.set_num_threads(1)
d = sys.argv[1]
doc = json.load(open(f"{d}/meta.json"))
meta, enc = doc["taps"], doc["encoder"]
R, C = enc["grid"]
N, P = len(meta), R * C
F = torch.tensor(np.fromfile(f"{d}/features.f32", dtype=np.float32).reshape(N, P, enc["dim"]))

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

centres = np.stack(np.meshgrid((np.arange(R) + 0.5) / R, (np.arange(C) + 0.5) / C, indexing="ij"), -1).reshape(P, 2)
yx = np.array([m["yx"] for m in meta])
target = torch.tensor(np.linalg.norm(centres[None] - yx[:, None], axis=-1).argmin(1))
train = np.array([m["split"] == "train" for m in meta])

dm = 128
emb, mix, proj = torch.nn.Embedding(len(vocab), dm), torch.nn.Linear(dm, dm), torch.nn.Linear(enc["dim"], dm)
params = [*emb.parameters(), *mix.parameters(), *proj.parameters()]
def scores(j):
    q = (emb(ids[j]) * mask[j, :, None]).sum(1) / mask[j].sum(1, keepdim=True)
    q = q + mix(torch.relu(q))
    return torch.einsum("bd,bpd->bp", q, proj(F[j])) / dm**0.5

opt = torch.optim.Adam(params, 3e-3)
rows = np.where(train)[0]
for epoch in range(30):
    np.random.shuffle(rows)
    for b in range(0, len(rows), 64):
        j = torch.tensor(rows[b : b + 64])
        loss = torch.nn.functional.cross_entropy(scores(j), target[j])
        opt.zero_grad(); loss.backward(); opt.step()
with torch.no_grad():
    pred = centres[scores(torch.arange(N)).argmax(1).numpy()]

def in_box(p, box):  # the reference's 1.4× enlarged box
    y, x, h, w = box
    return abs(p[0] - (y + h / 2)) <= 0.7 * h and abs(p[1] - (x + w / 2)) <= 0.7 * w
ok = np.array([np.linalg.norm(pred[i] - yx[i]) <= 0.14 or any(in_box(yx[i], b) and in_box(pred[i], b) for b in meta[i]["boxes"]) for i in range(N)])
print(f"encoder {enc['id']}: tap matching train {100 * ok[train].mean():.1f} %, held-out {100 * ok[~train].mean():.1f} % ({(~train).sum()} taps)")
for s in sorted({m["subset"] for m in meta}):
    sel = np.array([m["subset"] == s for m in meta])
    print(f"  {s:13s} train {100 * ok[train & sel].mean():5.1f}  held-out {100 * ok[~train & sel].mean():5.1f}")
