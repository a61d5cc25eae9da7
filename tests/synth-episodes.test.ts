import { describe, expect, it } from 'vitest';
import { ActionType, SUBSETS, type Subset } from '../src/data/types.js';
import { APPS, inAppSplit } from '../src/data/synth/apps.js';
import { generateTrace, type EpisodeTrace } from '../src/data/synth/episode.js';
import { annotationsOf } from '../src/data/synth/render.js';
import { layoutScreen } from '../src/data/synth/screens.js';

const size = { width: 160, height: 320 };
const N = 80;
const traces = new Map<Subset, EpisodeTrace[]>(
  SUBSETS.map((s) => [s, Array.from({ length: N }, (_, i) => generateTrace(3, s, i, size, SUBSETS))]),
);
const all = [...traces.values()].flat();

/** The "scroll position" a swipe should move: drawer/list page, or home → drawer. */
function position(t: EpisodeTrace['steps'][number]['state']): number {
  const sc = t.screen;
  if (sc.kind === 'home') return -1;
  return 'page' in sc ? sc.page : 0;
}

describe('synthetic episodes (oracle traces)', () => {
  it('has 2–10 steps, a single STATUS_TASK_COMPLETE at the end, and AITW-looking unique ids', () => {
    const ids = new Set<string>();
    for (const t of all) {
      expect(t.steps.length).toBeGreaterThanOrEqual(2);
      expect(t.steps.length).toBeLessThanOrEqual(10);
      const types = t.steps.map((s) => s.action.action_type);
      expect(types[types.length - 1]).toBe(ActionType.STATUS_TASK_COMPLETE);
      expect(types.slice(0, -1)).not.toContain(ActionType.STATUS_TASK_COMPLETE);
      expect(t.episodeId).toMatch(/^[1-9]\d{18,19}$/);
      expect(t.goal.length).toBeGreaterThan(3);
      ids.add(t.episodeId);
    }
    expect(ids.size).toBe(all.length);
  });

  it('taps land inside the tapped element, which is annotated on that screen', () => {
    let taps = 0;
    for (const t of all)
      for (const st of t.steps) {
        if (st.event?.kind !== 'tap') continue;
        taps++;
        const [y, x] = st.action.touch_yx;
        expect(st.action.lift_yx).toEqual(st.action.touch_yx);
        const target = st.event.target;
        const el = layoutScreen(st.state, size).find((e) => e.id === target);
        expect(el?.ann, `${target} annotated`).toBeDefined();
        const ann = annotationsOf([el!], size).positions[0]!;
        const [by, bx, bh, bw] = ann;
        expect(y).toBeGreaterThanOrEqual(by);
        expect(y).toBeLessThanOrEqual(by + bh);
        expect(x).toBeGreaterThanOrEqual(bx);
        expect(x).toBeLessThanOrEqual(bx + bw);
      }
    expect(taps).toBeGreaterThan(100);
  });

  it('swipes are real gestures and their direction matches how the screen moves', () => {
    let swipes = 0;
    for (const t of all)
      for (let i = 0; i < t.steps.length - 1; i++) {
        const st = t.steps[i]!;
        if (st.event?.kind !== 'swipe') continue;
        swipes++;
        const { touch_yx: a, lift_yx: b } = st.action;
        expect(Math.hypot(a[0] - b[0], a[1] - b[1])).toBeGreaterThan(0.2);
        const before = position(st.state);
        const after = position(t.steps[i + 1]!.state);
        if (st.event.dir === 'up') {
          expect(b[0]).toBeLessThan(a[0]);
          // Content moves up: further down the list, or home → drawer (unless already at the end).
          expect(after).toBeGreaterThanOrEqual(before);
        } else if (st.event.dir === 'down') {
          expect(b[0]).toBeGreaterThan(a[0]);
          expect(after).toBeLessThanOrEqual(before);
        }
      }
    expect(swipes).toBeGreaterThan(20);
  });

  it('clicks reach two thirds of the seen apps, and one target sits in many places', () => {
    const apps = new Set<string>();
    const places = new Map<string, Set<string>>();
    for (const t of all)
      for (const st of t.steps) {
        if (st.event?.kind !== 'tap' || !st.target) continue;
        const id = st.event.target;
        if (id.startsWith('app:')) apps.add(id);
        const p = places.get(id) ?? new Set<string>();
        p.add(`${Math.round(st.target.x)},${Math.round(st.target.y)}`);
        places.set(id, p);
      }
    expect(apps.size).toBeGreaterThanOrEqual(Math.ceil((2 / 3) * APPS.filter((a) => inAppSplit(a, 'seen')).length));
    const settings = places.get('app:settings')!;
    expect(settings.size).toBeGreaterThan(5);
    const chrome = places.get('app:chrome')!;
    expect(chrome.size).toBeGreaterThan(2);
  });

  it('uses every action type of the AITW space except IMPOSSIBLE, and types the goal text', () => {
    const types = new Set(all.flatMap((t) => t.steps.map((s) => s.action.action_type)));
    for (const a of [ActionType.DUAL_POINT, ActionType.TYPE, ActionType.PRESS_ENTER, ActionType.PRESS_BACK, ActionType.PRESS_HOME, ActionType.STATUS_TASK_COMPLETE])
      expect(types).toContain(a);
    const shopping = traces.get('web_shopping')!.filter((t) => /search for "([^"]+)"/.test(t.goal));
    for (const t of shopping) {
      const q = /search for "([^"]+)"/.exec(t.goal)![1]!;
      expect(t.steps.some((s) => s.action.action_type === ActionType.TYPE && s.action.typed_text === q)).toBe(true);
    }
  });

  it('the demonstrator’s choice of route is read off the goal’s wording, never drawn unseen', () => {
    const taps = (t: EpisodeTrace) => t.steps.flatMap((s) => (s.event?.kind === 'tap' ? [s.event.target] : []));
    const typed = (t: EpisodeTrace) => t.steps.flatMap((s) => (s.event?.kind === 'type' ? [s.event.text] : []));
    const seen = { widget: 0, google: 0, chrome: 0, page: 0, direct: 0, tile: 0, typedUrl: 0, product: 0, add: 0 };
    for (const t of traces.get('general')!) {
      // Web searches type a question; site tasks type (or tap) a domain.
      if (typed(t).some((q) => !q.endsWith('.com'))) {
        const entry = taps(t).find((x) => x === 'home_search' || x === 'app:google' || x === 'app:chrome');
        const route = /chrome|browser/i.test(t.goal) ? 'app:chrome' : /google/i.test(t.goal) ? 'app:google' : 'home_search';
        expect(entry, t.goal).toBe(route);
        seen[route === 'app:chrome' ? 'chrome' : route === 'app:google' ? 'google' : 'widget']++;
      } else if (/\.com/.test(t.goal)) {
        const viaTile = taps(t).some((x) => x.startsWith('tile:'));
        expect(viaTile, t.goal).toBe(/shortcut/.test(t.goal));
        seen[viaTile ? 'tile' : 'typedUrl']++;
      }
    }
    for (const t of traces.get('install')!.filter((x) => /install/i.test(x.goal))) {
      const viaPage = taps(t).some((x) => x.startsWith('store_item:'));
      expect(viaPage, t.goal).toBe(/page/.test(t.goal));
      seen[viaPage ? 'page' : 'direct']++;
    }
    for (const t of traces.get('web_shopping')!.filter((x) => /cart/.test(x.goal))) {
      const viaPage = taps(t).some((x) => x.startsWith('product:'));
      expect(viaPage, t.goal).toBe(/open the \w+ (result|product page)/.test(t.goal));
      seen[viaPage ? 'product' : 'add']++;
    }
    // Every route occurs, so the wording really decides between them.
    for (const [route, n] of Object.entries(seen)) expect(n, route).toBeGreaterThan(0);
  });

  it('single-subset episodes are one-step-ish', () => {
    for (const t of traces.get('single')!) expect(t.steps.length).toBeLessThanOrEqual(3);
  });

  it('is deterministic in (seed, subset, index) and changes with the seed', () => {
    const a = generateTrace(11, 'general', 5, size, SUBSETS);
    const b = generateTrace(11, 'general', 5, size, SUBSETS);
    const c = generateTrace(12, 'general', 5, size, SUBSETS);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
  });
});
