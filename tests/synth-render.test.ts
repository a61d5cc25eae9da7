import { describe, expect, it } from 'vitest';
import { APPS } from '../src/data/synth/apps.js';
import { rasterizeScreen, rasterizeSvg } from '../src/data/synth/raster.js';
import { renderScreen } from '../src/data/synth/render.js';
import { Rng } from '../src/util/rng.js';
import { applyEvent, initialState, type UiState } from '../src/data/synth/state.js';
import { makeWorld } from '../src/data/synth/world.js';

const size = { width: 160, height: 320 };

function states(seed: number): UiState[] {
  const rng = Rng.from('render-test', seed);
  let s = initialState(makeWorld(rng.fork('w'), size), rng);
  const out = [s];
  for (const ev of [
    { kind: 'swipe', dir: 'up' },
    { kind: 'tap', target: 'app:settings' },
    { kind: 'home' },
    { kind: 'tap', target: 'home_search' },
    { kind: 'type', text: 'weather in paris' },
    { kind: 'enter' },
  ] as const) {
    s = applyEvent(s, ev, rng);
    out.push(s);
  }
  return out;
}

describe('synthetic screen rendering', () => {
  it('has at least 40 apps, each with its own icon (shape, background, glyph colour)', () => {
    expect(APPS.length).toBeGreaterThanOrEqual(40);
    const looks = new Set(APPS.map((a) => `${a.icon.shape}|${a.icon.background}|${a.icon.glyph}`));
    expect(looks.size).toBe(APPS.length);
    // Stronger: shape + background alone already tell every app apart.
    expect(new Set(APPS.map((a) => `${a.icon.shape}|${a.icon.background}`)).size).toBe(APPS.length);
    expect(new Set(APPS.map((a) => a.name)).size).toBe(APPS.length);
  });

  it('renderScreen is pure and gives well-formed AITW annotations', () => {
    for (const s of states(1)) {
      const a = renderScreen(s, size);
      const b = renderScreen(s, size);
      expect(a).toEqual(b);
      expect(a.svg.startsWith('<svg')).toBe(true);
      const { positions, text, types } = a.annotations;
      expect(positions.length).toBeGreaterThan(5);
      expect(text.length).toBe(positions.length);
      expect(types.length).toBe(positions.length);
      for (const [y, x, h, w] of positions) {
        for (const v of [y, x, h, w]) expect(v).toBeGreaterThanOrEqual(0);
        expect(y + h).toBeLessThanOrEqual(1.0001);
        expect(x + w).toBeLessThanOrEqual(1.0001);
      }
      for (const t of types) expect(t).toMatch(/^(TEXT|ICON_[A-Z_]+)$/);
    }
  });

  it('the home screen annotates app labels and icons', () => {
    const home = states(2)[0]!;
    const { annotations } = renderScreen(home, size);
    const labels = home.world.home.filter((x) => x !== null).map((id) => APPS.find((a) => a.id === id)!.name);
    for (const l of labels) expect(annotations.text.some((t) => l.startsWith(t.replace('…', '')))).toBe(true);
    expect(annotations.types.filter((t) => t.startsWith('ICON_')).length).toBeGreaterThanOrEqual(labels.length);
  });

  it('rasterises to raw RGB; the cached keyboard matches drawing it in place', async () => {
    const withKeyboard = states(3)[5]!;
    const fast = await rasterizeScreen(withKeyboard, size);
    expect(fast.image).toMatchObject({ width: 160, height: 320, channels: 3 });
    expect(fast.image.data.length).toBe(160 * 320 * 3);
    const slow = await rasterizeSvg(renderScreen(withKeyboard, size).svg, size);
    let diff = 0;
    for (let i = 0; i < slow.data.length; i++) diff += Math.abs(slow.data[i]! - fast.image.data[i]!);
    expect(diff / slow.data.length).toBeLessThan(0.5);
    // Not blank: many colours.
    const colours = new Set<number>();
    for (let i = 0; i < fast.image.data.length; i += 3) colours.add((fast.image.data[i]! << 16) | (fast.image.data[i + 1]! << 8) | fast.image.data[i + 2]!);
    expect(colours.size).toBeGreaterThan(20);
  });
});
