#!/usr/bin/env python3
"""Generates reference vectors for tests/action_matching.test.ts and tests/normalize.test.ts
by running the *reference* Python code itself (never committed here).

Usage:
  python3 scripts/gen_action_matching_vectors.py REF_DIR [OUT_DIR]

REF_DIR (outside this repo, e.g. /tmp/amref) must hold, fetched by hand:
  action_matching.py  google-research android_in_the_wild/action_matching.py
                      (Auto-UI's copy is identical apart from its import line)
  action_type.py      the matching action_type.py
  utils_data.py       optional: cooelf/Auto-UI utils_data.py, for its coordinate
                      normalisation helpers (is_tap_action, scroll direction)

jax is not installable here, so jax.numpy is replaced by an in-process shim over
numpy that keeps JAX's default dtype rules (x64 disabled: float arrays are float32;
python scalars are weakly typed, which numpy>=2 NEP 50 reproduces).
"""
import ast
import json
import math
import os
import random
import sys
import types

import numpy as np

assert int(np.__version__.split('.')[0]) >= 2, 'numpy>=2 needed (NEP 50 promotion matches JAX weak types)'


def _f32(x):
    a = np.asarray(x)
    if a.dtype.kind == 'f' and a.dtype != np.float32:
        a = a.astype(np.float32)
    if a.dtype == np.int64:
        a = a.astype(np.int32)
    return a


def _weak(x):
    return x if isinstance(x, (bool, int, float)) else _f32(x)


def _norm(x):
    x = _f32(x)
    # jnp.linalg.norm(ord=None) is sqrt(sum(x * conj(x))) in the array's dtype
    return np.sqrt(np.sum(x * x, dtype=np.float32), dtype=np.float32)


def install_jax_shim():
    jnp = types.ModuleType('jax.numpy')
    jnp.asarray = _f32
    jnp.array = _f32
    jnp.squeeze = lambda v, axis=None: np.squeeze(_f32(v), axis=axis)
    jnp.split = lambda a, n, axis=0: np.split(_f32(a), n, axis=axis)
    jnp.logical_and = lambda a, b: np.logical_and(_weak(a), _weak(b))
    jnp.logical_or = lambda a, b: np.logical_or(_weak(a), _weak(b))
    jnp.logical_xor = lambda a, b: np.logical_xor(_weak(a), _weak(b))
    jnp.maximum = lambda a, b: _f32(np.maximum(_weak(a), _weak(b)))
    jnp.minimum = lambda a, b: _f32(np.minimum(_weak(a), _weak(b)))
    jnp.stack = lambda xs, axis=0: _f32(np.stack([_f32(x) for x in xs], axis=axis))
    jnp.not_equal = lambda a, b: np.not_equal(_weak(a), _weak(b))
    jnp.equal = lambda a, b: np.equal(_weak(a), _weak(b))
    jnp.abs = lambda a: np.abs(_f32(a))
    jnp.max = lambda a: np.max(_f32(a))  # raises on an empty array, as jnp.max does
    jnp.where = np.where
    jnp.linalg = types.SimpleNamespace(norm=_norm)
    jax = types.ModuleType('jax')
    jax.numpy = jnp
    sys.modules['jax'] = jax
    sys.modules['jax.numpy'] = jnp
    return jnp


def load_reference(ref_dir):
    jnp = install_jax_shim()
    sys.path.insert(0, ref_dir)
    import action_type  # noqa: E402
    pkg = types.ModuleType('android_in_the_wild')
    pkg.action_type = action_type
    sys.modules['android_in_the_wild'] = pkg
    sys.modules['android_in_the_wild.action_type'] = action_type
    import action_matching  # noqa: E402
    norm_fns = None
    path = os.path.join(ref_dir, 'utils_data.py')
    if os.path.exists(path):
        # Only the two pure helpers are taken from utils_data (it imports torch at top level).
        tree = ast.parse(open(path).read())
        keep = [n for n in tree.body if (isinstance(n, ast.FunctionDef) and n.name in ('is_tap_action', '_check_drag_actions_match'))
                or (isinstance(n, ast.Assign) and any(getattr(t, 'id', '') == '_SWIPE_DISTANCE_THRESHOLD' for t in n.targets))]
        ns = {'jnp': jnp, 'np': np}
        exec(compile(ast.Module(body=keep, type_ignores=[]), path, 'exec'), ns)
        norm_fns = ns
    return action_matching, norm_fns


DUAL = 4
TYPES = [3, 4, 5, 6, 7, 10, 11]
NONE = [-1.0, -1.0]
rng = random.Random(20231)


def f32(x):
    return float(np.float32(x))


def maybe_f32(p, prob=0.5):
    return [f32(v) for v in p] if rng.random() < prob else [float(v) for v in p]


def rand_box(tiny=False, big=False):
    if tiny:
        h, w = 10 ** rng.uniform(-6, -2), 10 ** rng.uniform(-6, -2)
    elif big:
        h, w = rng.uniform(0.3, 1.0), rng.uniform(0.3, 1.0)
    else:
        h, w = rng.uniform(0.005, 0.3), rng.uniform(0.005, 0.5)
    y, x = rng.uniform(-0.02, 1.0), rng.uniform(-0.02, 1.0)
    return [f32(y), f32(x), f32(h), f32(w)]


def rand_boxes(n=None, **kw):
    n = rng.randint(1, 5) if n is None else n
    return [rand_box(**kw) for _ in range(n)]


def enlarged(ref, box):
    return [float(v) for v in ref._resize_annotation_bounding_boxes(np.array([box], dtype=np.float64), 1.4, 1.4)[0]]


def near(v):
    """A value at, or a hair either side of, v (in float32 ulps and in decimals)."""
    k = rng.randrange(7)
    if k == 0:
        return v
    if k in (1, 2):
        return float(np.nextafter(np.float32(v), np.float32(np.inf if k == 1 else -np.inf)))
    if k in (3, 4):
        return v + (1e-7 if k == 3 else -1e-7)
    return v + rng.choice([-1, 1]) * 10 ** rng.uniform(-6, -2)


def tap(p):
    return {'action_type': DUAL, 'touch_yx': p, 'lift_yx': list(p)}


def at_distance(p, d):
    a = rng.uniform(0, 2 * math.pi)
    return [p[0] + d * math.sin(a), p[1] + d * math.cos(a)]


def rand_point(lo=0.0, hi=1.0):
    return [rng.uniform(lo, hi), rng.uniform(lo, hi)]


def swipe():
    t = rand_point()
    l = rand_point()
    return {'action_type': DUAL, 'touch_yx': maybe_f32(t), 'lift_yx': maybe_f32(l)}


def gen_match_cases(ref):
    cases = []
    add = lambda kind, pred, gold, boxes: cases.append((kind, pred, gold, boxes))

    for _ in range(300):  # at least one side not a dual point: only types count
        ta, tb = rng.choice(TYPES), rng.choice(TYPES)
        if rng.random() < 0.3:
            tb = ta
        pa = rand_point() if ta == DUAL or rng.random() < 0.2 else NONE
        pb = rand_point() if tb == DUAL or rng.random() < 0.2 else NONE
        add('non_dual_point', {'action_type': ta, 'touch_yx': pa, 'lift_yx': list(pa)},
            {'action_type': tb, 'touch_yx': pb, 'lift_yx': list(pb)}, rand_boxes())

    for _ in range(600):  # taps around the 0.14 distance threshold
        g = maybe_f32(rand_point(0.05, 0.95))
        d = near(0.14) if rng.random() < 0.7 else rng.uniform(0, 0.3)
        p = at_distance(g, d)
        if rng.random() < 0.3:  # axis-aligned offsets hit exact float patterns
            p = [g[0] + d, g[1]] if rng.random() < 0.5 else [g[0], g[1] - d]
        boxes = rand_boxes() if rng.random() < 0.7 else rand_boxes(tiny=True)
        add('tap_distance', tap(p), tap(g), boxes)

    for _ in range(1200):  # taps on the edges of the enlarged boxes, far apart otherwise
        boxes = rand_boxes(rng.randint(1, 4), tiny=rng.random() < 0.25, big=rng.random() < 0.2)
        b = enlarged(ref, rng.choice(boxes))
        top, left, h, w = b
        bottom, right = f32(np.float32(top) + np.float32(h)), f32(np.float32(left) + np.float32(w))
        def edge_point():
            side = rng.randrange(4)
            y = rng.uniform(top, bottom)
            x = rng.uniform(left, right)
            if side == 0:
                y = near(top)
            elif side == 1:
                y = near(bottom)
            elif side == 2:
                x = near(left)
            else:
                x = near(right)
            if rng.random() < 0.2:
                y, x = near(rng.choice([top, bottom])), near(rng.choice([left, right]))
            return [y, x]
        a = edge_point()
        o = edge_point() if rng.random() < 0.6 else [rng.uniform(top, bottom), rng.uniform(left, right)]
        add('tap_box_edge', tap(a), tap(o), boxes)

    for _ in range(500):  # dual points around the 0.04 tap/swipe threshold
        def near_tap():
            t = maybe_f32(rand_point(0.1, 0.9))
            d = near(0.04) if rng.random() < 0.8 else rng.uniform(0, 0.08)
            l = at_distance(t, d)
            if rng.random() < 0.3:
                l = [t[0] + d, t[1]] if rng.random() < 0.5 else [t[0], t[1] + d]
            return {'action_type': DUAL, 'touch_yx': t, 'lift_yx': l}
        a = near_tap()
        b = near_tap() if rng.random() < 0.6 else tap(at_distance(a['touch_yx'], rng.uniform(0, 0.2)))
        if rng.random() < 0.5:
            a, b = b, a
        add('tap_swipe_threshold', a, b, rand_boxes())

    for _ in range(700):  # swipes: main axis, including near and exact ties
        a, b = swipe(), swipe()
        for s in (a, b):
            if rng.random() < 0.4:
                t = s['touch_yx']
                m = rng.uniform(0.05, 0.5)
                dy = m * rng.choice([-1, 1])
                dx = (m if rng.random() < 0.5 else near(m)) * rng.choice([-1, 1])
                s['lift_yx'] = [t[0] + dy, t[1] + dx]
        add('swipe_axis', a, b, rand_boxes())

    for _ in range(500):  # boxes clamped at the screen's top/left, oversized boxes, tiny boxes
        kind = rng.randrange(3)
        if kind == 0:
            boxes = [[f32(rng.uniform(0, 0.05)), f32(rng.uniform(0, 0.05)), f32(rng.uniform(0.01, 0.2)), f32(rng.uniform(0.01, 0.3))]]
        elif kind == 1:
            boxes = rand_boxes(rng.randint(1, 3), big=True)
        else:
            boxes = rand_boxes(rng.randint(1, 3), tiny=True)
        b = rng.choice(boxes)
        g = [b[0] + rng.uniform(-1.5, 3.0) * b[2], b[1] + rng.uniform(-1.5, 3.0) * b[3]]
        p = [b[0] + rng.uniform(-1.5, 3.0) * b[2], b[1] + rng.uniform(-1.5, 3.0) * b[3]]
        if rng.random() < 0.5:  # far apart so only the box can match them
            p = [min(1.0, p[0] + 0.2), p[1]]
        add('box_clamp_size', tap(p), tap(g), boxes)

    for _ in range(300):  # model-like output (4 decimals) against float32 gold
        g = [f32(v) for v in rand_point()]
        p = [round(v + rng.uniform(-0.2, 0.2), 4) for v in g]
        add('decimal_vs_float32', tap(p), tap(g), rand_boxes())

    for _ in range(100):  # out-of-range and sentinel points on dual points
        p = rng.choice([NONE, rand_point(-1.5, 1.5)])
        g = rng.choice([NONE, rand_point(-0.5, 1.5)])
        a = {'action_type': DUAL, 'touch_yx': p, 'lift_yx': rng.choice([list(p), rand_point(-1.5, 1.5)])}
        b = {'action_type': DUAL, 'touch_yx': g, 'lift_yx': rng.choice([list(g), rand_point(-1.5, 1.5)])}
        add('out_of_range', a, b, rand_boxes())

    for _ in range(60):  # no annotations at all: the reference raises
        ta, tb = rng.choice(TYPES), rng.choice(TYPES)
        g = rand_point()
        add('empty_annotations', {'action_type': ta, 'touch_yx': g, 'lift_yx': list(g)},
            {'action_type': tb if rng.random() < 0.5 else ta, 'touch_yx': g, 'lift_yx': list(g)}, [])
    return cases


def run_match(ref, cases, out):
    n_true = 0
    with open(out, 'w') as fh:
        for kind, pred, gold, boxes in cases:
            rec = {'kind': kind, 'pred': pred, 'gold': gold, 'annotations': boxes}
            try:
                m = bool(ref.check_actions_match(pred['touch_yx'], pred['lift_yx'], pred['action_type'],
                                                 gold['touch_yx'], gold['lift_yx'], gold['action_type'],
                                                 np.array(boxes, dtype=np.float64).reshape(-1, 4)))
            except Exception as exc:  # Auto-UI's evaluation catches this and counts a miss
                m = False
                rec['reference_raised'] = type(exc).__name__
            rec['match'] = m
            n_true += m
            fh.write(json.dumps(rec, separators=(',', ':')) + '\n')
    print(f'{out}: {len(cases)} cases, {n_true} matches')


def run_normalize(fns, out):
    is_tap, direction = fns['is_tap_action'], fns['_check_drag_actions_match']
    n = 0
    with open(out, 'w') as fh:
        for i in range(1500):
            t = rand_point()
            k = i % 5
            if k == 0:  # near the 0.04 threshold
                l = at_distance(t, near(0.04))
            elif k == 1:  # exact or near main-axis ties
                m = rng.uniform(0.03, 0.5)
                l = [t[0] + m * rng.choice([-1, 1]), t[1] + (m if rng.random() < 0.5 else near(m)) * rng.choice([-1, 1])]
            elif k == 2:  # halfway cases for 4-decimal rounding (odd multiples of 1/32 are exact ties)
                t = [rng.randrange(1, 32, 2) / 32, rng.randrange(1, 32, 2) / 32] if rng.random() < 0.5 else [round(v, 5) for v in t]
                l = at_distance(t, rng.uniform(0, 0.039))
            else:
                l = rand_point() if rng.random() < 0.5 else at_distance(t, rng.uniform(0, 0.1))
            t, l = maybe_f32(t), maybe_f32(l)
            rec = {'touch_yx': t, 'lift_yx': l}
            tp = bool(is_tap(np.asarray(t), np.asarray(l)))
            rec['is_tap'] = tp
            if tp:
                rec['touch_rounded'] = [round(v, 4) for v in t]
            else:
                rec['direction'] = direction(_f32(t), _f32(l))
            fh.write(json.dumps(rec, separators=(',', ':')) + '\n')
            n += 1
    print(f'{out}: {n} cases')


def main():
    ref_dir = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), '..', 'tests', 'fixtures', 'action_matching')
    ref, norm_fns = load_reference(os.path.abspath(ref_dir))
    os.makedirs(out_dir, exist_ok=True)
    run_match(ref, gen_match_cases(ref), os.path.join(out_dir, 'check_actions_match.jsonl'))
    if norm_fns:
        run_normalize(norm_fns, os.path.join(out_dir, 'autoui_normalize.jsonl'))


if __name__ == '__main__':
    main()
