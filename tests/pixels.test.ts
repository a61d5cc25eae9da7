import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rasterizeScreen } from '../src/data/synth/raster.js';
import { applyEvent, initialState, type UiState } from '../src/data/synth/state.js';
import { makeWorld } from '../src/data/synth/world.js';
import type { RawImage } from '../src/screen/types.js';
import { BUILTIN_INFO, NATIVE_LAYOUT, builtinFeatures, builtinGeometry, resizeForBuiltin } from '../src/screen/vision/builtin.js';
import { GRID_COLS } from '../src/screen/vision/builtin/geometry.js';
import { POSITION_FEATURES } from '../src/screen/vision/builtin/position.js';
import { pixelKernels } from '../src/screen/vision/builtin/native.js';
import { reduceLinear } from '../src/screen/vision/builtin/reduce.js';
import { Rng } from '../src/util/rng.js';
import { patternImage } from './helpers/screens.js';

const native = pixelKernels();

const image = (width: number, height: number, kind: 'noise' | 'binary' | 'stripes' | 'ui', seed: number): RawImage => patternImage(width, height, kind, seed, 'pixels-test');

/** Same bits, element by element (NaN and −0 included). */
function sameBits(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  return a.length === b.length && Array.from(a).every((v, k) => Object.is(v, b[k]));
}

async function synthScreens(size: { width: number; height: number }, seed: number): Promise<RawImage[]> {
  const rng = Rng.from('pixels-test-synth', seed);
  let s: UiState = initialState(makeWorld(rng.fork('w'), size), rng);
  const out = [(await rasterizeScreen(s, size)).image];
  for (const ev of [{ kind: 'swipe', dir: 'up' }, { kind: 'tap', target: 'app:settings' }, { kind: 'home' }, { kind: 'tap', target: 'home_search' }, { kind: 'type', text: 'weather in paris' }] as const) {
    s = applyEvent(s, ev, rng);
    out.push((await rasterizeScreen(s, size)).image);
  }
  return out;
}

describe.skipIf(!native)('autoui_pixels: the built-in encoder in C++ gives the JavaScript bits', () => {
  it('shrinks screens to the same bytes', () => {
    fc.assert(
      fc.property(fc.integer({ min: 129, max: 191 }), fc.double({ min: 1.01, max: 2.4, noNaN: true }), fc.integer({ min: 1, max: 1000 }), (w, aspect, seed) => {
        const img = image(w, Math.round(w * aspect), seed % 2 ? 'noise' : 'stripes', seed);
        const g = builtinGeometry(img);
        const js = reduceLinear(img, g.fineWidth, g.fineHeight, null);
        const cpp = reduceLinear(img, g.fineWidth, g.fineHeight, native);
        // null: a shrink left to sharp, by both.
        if (js === null) expect(cpp).toBeNull();
        else expect(cpp !== null && sameBits(cpp, js)).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it('gives the same features for random images of many shapes (cut last rows and columns included)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 40, max: 400 }),
        fc.double({ min: 0.8, max: 2.6, noNaN: true }),
        fc.constantFrom('noise', 'binary', 'stripes', 'ui'),
        fc.integer({ min: 1, max: 10_000 }),
        async (w, aspect, kind, seed) => {
          const { fine, geometry } = await resizeForBuiltin(image(w, Math.round(w * aspect), kind, seed));
          expect(sameBits(builtinFeatures(fine, geometry, native), builtinFeatures(fine, geometry, null))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('gives the same features for rendered synthetic screens of the three shapes', async () => {
    for (const size of [{ width: 160, height: 320 }, { width: 144, height: 320 }, { width: 180, height: 400 }]) {
      for (const img of await synthScreens(size, size.width)) {
        const { fine, geometry } = await resizeForBuiltin(img);
        expect(sameBits(builtinFeatures(fine, geometry, native), builtinFeatures(fine, geometry, null)), `${size.width}×${size.height}`).toBe(true);
      }
    }
  });

  it('refuses arrays that do not cover the sizes given, naming the argument', async () => {
    const { fine, geometry: g } = await resizeForBuiltin(image(160, 320, 'ui', 1));
    const features = (f: Uint8Array, out: Float32Array) =>
      native!.builtinFeatures(f, g.width, g.height, g.rows, g.cols, GRID_COLS, NATIVE_LAYOUT, new Uint8Array(1 << 17), new Float32Array(1 << 17), new Uint8Array(1 << 15), new Int8Array(256), new Float32Array(BUILTIN_INFO.patches * POSITION_FEATURES), out);
    expect(() => features(fine.subarray(3), new Float32Array(BUILTIN_INFO.patches * BUILTIN_INFO.dim))).toThrow(/autoui_pixels\.builtinFeatures.*fine must hold/);
    expect(() => features(fine, new Float32Array(BUILTIN_INFO.dim))).toThrow(/out must hold/);
    expect(() => features(new Float32Array(4) as unknown as Uint8Array, new Float32Array(BUILTIN_INFO.patches * BUILTIN_INFO.dim))).toThrow(/fine must be a Uint8Array/);
    const plan = new Int32Array([0, 1, 400]);
    expect(() => native!.reduceRows(new Uint8Array(300), 3, plan, new Int32Array(3), new Uint8Array(3))).toThrow(/every index must be a row of src/);
  });
});
