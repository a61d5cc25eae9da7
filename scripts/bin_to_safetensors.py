#!/usr/bin/python3
"""Converts a Hugging Face folder's pytorch_model.bin to model.safetensors (what autoui reads).

Many T5 / FLAN-Alpaca repositories ship only the pickle. Run once, with Debian's python3-torch:
    /usr/bin/python3 scripts/bin_to_safetensors.py <model dir>
Tied duplicates are written once each under their own names; autoui accepts and ignores them.
The safetensors writer is the one in make_t5_fixtures.py (no `safetensors` package needed).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_t5_fixtures import write_safetensors  # noqa: E402

if len(sys.argv) != 2:
    sys.exit(__doc__)
d = sys.argv[1]
src = os.path.join(d, "pytorch_model.bin")
dst = os.path.join(d, "model.safetensors")
state = torch.load(src, map_location="cpu")
tensors = {k: v.detach().to(torch.float32) if v.is_floating_point() else v for k, v in state.items()}
tmp = dst + ".tmp"
write_safetensors(tmp, tensors)
os.replace(tmp, dst)
print(f"wrote {dst}: {len(tensors)} tensors")
