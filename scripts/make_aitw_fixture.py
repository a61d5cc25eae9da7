#!/usr/bin/python3
"""Builds the AITW test fixture independently of the TypeScript code.

tf.train.Example is defined here from a FileDescriptorProto (field numbers of the public
tensorflow/core/example/{feature,example}.proto), TFRecord framing and masked CRC-32C are
written by hand, gzip by Python's gzip module. Expected decoded values go to expected.jsonl
in the `autoui data inspect --json` format, computed by re-parsing the serialized records.

Run with Debian's python3 (python3-protobuf, python3-pil):
    /usr/bin/python3 scripts/make_aitw_fixture.py [OUT_DIR]
"""
import gzip
import hashlib
import io
import json
import os
import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from PIL import Image

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "aitw")

# --- tf.train.Example from a hand-built descriptor -------------------------------------------
F = descriptor_pb2.FieldDescriptorProto


def _field(msg, name, number, ftype, label=F.LABEL_OPTIONAL, type_name=None, packed=None):
    f = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    return f


fdp = descriptor_pb2.FileDescriptorProto(name="fixture_example.proto", package="tensorflow", syntax="proto3")
m = fdp.message_type.add(name="BytesList")
_field(m, "value", 1, F.TYPE_BYTES, F.LABEL_REPEATED)
m = fdp.message_type.add(name="FloatList")
_field(m, "value", 1, F.TYPE_FLOAT, F.LABEL_REPEATED, packed=True)
m = fdp.message_type.add(name="Int64List")
_field(m, "value", 1, F.TYPE_INT64, F.LABEL_REPEATED, packed=True)
m = fdp.message_type.add(name="Feature")
m.oneof_decl.add(name="kind")
for name, num, tn in (("bytes_list", 1, "BytesList"), ("float_list", 2, "FloatList"), ("int64_list", 3, "Int64List")):
    _field(m, name, num, F.TYPE_MESSAGE, type_name=".tensorflow." + tn).oneof_index = 0
m = fdp.message_type.add(name="Features")
entry = m.nested_type.add(name="FeatureEntry")
entry.options.map_entry = True
_field(entry, "key", 1, F.TYPE_STRING)
_field(entry, "value", 2, F.TYPE_MESSAGE, type_name=".tensorflow.Feature")
_field(m, "feature", 1, F.TYPE_MESSAGE, F.LABEL_REPEATED, type_name=".tensorflow.Features.FeatureEntry")
m = fdp.message_type.add(name="Example")
_field(m, "features", 1, F.TYPE_MESSAGE, type_name=".tensorflow.Features")

pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)


def _cls(name):
    desc = pool.FindMessageTypeByName("tensorflow." + name)
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


Example = _cls("Example")

# --- masked CRC-32C and TFRecord framing ------------------------------------------------------
_TABLE = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _TABLE.append(c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


# --- fixture content --------------------------------------------------------------------------
def pixels(h, w, seed):
    """Deterministic RGB pattern, row-major H×W×3."""
    return bytes((seed * 37 + y * 29 + x * 13 + ch * 71) % 256 for y in range(h) for x in range(w) for ch in range(3))


def png_bytes(h, w, rgb):
    buf = io.BytesIO()
    Image.frombytes("RGB", (w, h), rgb).save(buf, format="PNG")
    return buf.getvalue()


def step(ep_id, ep_len, step_id, goal, h, w, rgb, action, touch, lift, typed, boxes, png=False):
    return dict(
        episode_id=ep_id, episode_length=ep_len, step_id=step_id, goal=goal, h=h, w=w, rgb=rgb, png=png,
        action=action, touch=touch, lift=lift, typed=typed, boxes=boxes,
        activity="com.example.app/.MainActivity", device="Pixel 6", api=33,
    )


NONE = [-1.0, -1.0]
GOAL_A = "Réserve un café ☕ à 東京"
GOAL_B = "Search for \"noise-cancelling headphones\" on ebay"
GOAL_C = "Öffne die Einstellungen — 设置"

episodes_gz = [
    # AITW ids are decimal strings above 2^53.
    step("16150593985172894737", 3, 0, GOAL_A, 6, 4, pixels(6, 4, 1), 4, [0.25, 0.5], [0.25, 0.5], "",
         [([0.1, 0.2, 0.05, 0.3], "Café", "TEXT"), ([0.5, 0.5, 0.1, 0.1], "", "ICON_SEARCH")]),
    step("16150593985172894737", 3, 1, GOAL_A, 6, 4, pixels(6, 4, 2), 3, NONE, NONE, "café ☕ 東京 🍵",
         []),  # a screen with zero annotations
    step("16150593985172894737", 3, 2, GOAL_A, 6, 4, pixels(6, 4, 3), 10, NONE, NONE, "",
         [([0.0, 0.0, 1.0, 1.0], "東京駅", "TEXT")]),
    step("9876543210987654321", 2, 0, GOAL_B, 5, 3, pixels(5, 3, 4), 4, [0.8, 0.5], [0.2, 0.5], "",
         [([0.3, 0.1, 0.2, 0.8], "ebay", "ICON_LOGO")], png=True),  # swipe up, PNG-encoded screen
    step("9876543210987654321", 2, 1, GOAL_B, 6, 4, pixels(6, 4, 5), 5, NONE, NONE, "",
         [([0.7, 0.2, 0.1, 0.3], "Buy It Now", "TEXT"), ([0.7, 0.6, 0.1, 0.3], "🛒", "ICON_CART")]),
]
single_plain = [
    step("42", 1, 0, GOAL_C, 4, 6, pixels(4, 6, 6), 6, NONE, NONE, "", [([0.9, 0.4, 0.05, 0.2], "Home", "ICON_HOME")]),
]


def to_example(s):
    ex = Example()
    feat = ex.features.feature

    def b(name, *vals):
        feat[name].bytes_list.value.extend(vals)

    def i(name, *vals):
        feat[name].int64_list.value.extend(vals)

    def f(name, vals):
        feat[name].float_list.value.extend(vals)

    b("episode_id", s["episode_id"].encode())
    i("episode_length", s["episode_length"])
    i("step_id", s["step_id"])
    b("goal_info", s["goal"].encode())
    b("image/encoded", png_bytes(s["h"], s["w"], s["rgb"]) if s["png"] else s["rgb"])
    i("image/height", s["h"])
    i("image/width", s["w"])
    i("image/channels", 3)
    f("image/ui_annotations_positions", [v for box, _, _ in s["boxes"] for v in box])
    b("image/ui_annotations_text", *[t.encode() for _, t, _ in s["boxes"]])
    b("image/ui_annotations_ui_types", *[u.encode() for _, _, u in s["boxes"]])
    i("results/action_type", s["action"])
    f("results/yx_touch", s["touch"])
    f("results/yx_lift", s["lift"])
    b("results/type_action", s["typed"].encode())
    b("current_activity", s["activity"].encode())
    b("device_type", s["device"].encode())
    i("android_api_level", s["api"])
    # An empty repeated field is still emitted by TF as a present, typed, empty list.
    for name in ("image/ui_annotations_positions",):
        feat[name].float_list.SetInParent()
    for name in ("image/ui_annotations_text", "image/ui_annotations_ui_types"):
        feat[name].bytes_list.SetInParent()
    return ex.SerializeToString(deterministic=True)  # sorted map keys: reproducible bytes


def expected_row(serialized, rgb):
    """What `inspect --json` must print, read back from the serialized bytes."""
    ex = Example()
    ex.ParseFromString(serialized)
    feat = ex.features.feature
    one_b = lambda n: feat[n].bytes_list.value[0].decode("utf-8")
    one_i = lambda n: feat[n].int64_list.value[0]
    pos = list(feat["image/ui_annotations_positions"].float_list.value)
    return {
        "episode_id": one_b("episode_id"),
        "episode_length": one_i("episode_length"),
        "step_id": one_i("step_id"),
        "goal": one_b("goal_info"),
        "height": one_i("image/height"),
        "width": one_i("image/width"),
        "channels": 3,
        "image_sha256": hashlib.sha256(rgb).hexdigest(),
        "action_type": one_i("results/action_type"),
        "touch_yx": list(feat["results/yx_touch"].float_list.value),
        "lift_yx": list(feat["results/yx_lift"].float_list.value),
        "typed_text": one_b("results/type_action"),
        "ui_positions": [pos[k:k + 4] for k in range(0, len(pos), 4)],
        "ui_text": [t.decode("utf-8") for t in feat["image/ui_annotations_text"].bytes_list.value],
        "ui_types": [t.decode("utf-8") for t in feat["image/ui_annotations_ui_types"].bytes_list.value],
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = []
    files = [("episodes.tfrecord.gz", episodes_gz, True), ("single.tfrecord", single_plain, False)]
    for name, steps, gz in sorted(files):
        framed = b""
        for s in steps:
            ser = to_example(s)
            framed += frame(ser)
            rows.append(expected_row(ser, s["rgb"]))
        data = gzip.compress(framed, mtime=0) if gz else framed
        with open(os.path.join(OUT, name), "wb") as fh:
            fh.write(data)
    with open(os.path.join(OUT, "expected.jsonl"), "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} steps to {OUT}")


if __name__ == "__main__":
    main()
