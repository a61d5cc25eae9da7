import { APPS, SHOP_SITES, STORE_APPS, appById, inAppSplit, type AppInfo, type AppSplit } from './apps.js';
import {
  APP_QUERIES,
  ORDINALS,
  PRODUCT_QUERIES,
  appSearchGoal,
  installGoal,
  openAppGoal,
  shoppingGoal,
  siteGoal,
  toggleGoal,
  webSearchGoal,
} from './goals.js';
import type { Element } from './layout.js';
import type { Rng } from '../../util/rng.js';
import { drawerHasMore, layoutScreen } from './screens.js';
import { fieldOf, inCart, launchScreen, type Screen, type UiEvent, type UiState } from './state.js';
import { TOGGLE_SETTINGS, homeApps, type ScreenSize } from './world.js';

/** Oracle policies: each task is a list of stages; a stage acts until its condition holds. */

export interface Stage {
  done: (s: UiState) => boolean;
  act: (s: UiState, els: Element[]) => UiEvent;
}

export interface Task {
  goal: string;
  stages: Stage[];
  /** Apps the world must (not) have installed for this task. */
  mustInstall?: string[];
  mustNotInstall?: string[];
  /** Site whose shortcut tile Chrome's new-tab page must show. */
  mustTile?: string;
}

const tap = (target: string): UiEvent => ({ kind: 'tap', target });
const has = (els: Element[], id: string): boolean => els.some((e) => e.id === id);

/** Whether the screen is (a screen of) the app. */
export function inApp(sc: Screen, appId: string): boolean {
  const home = launchScreen(appId);
  if (home.kind === 'app') return sc.kind === 'app' && sc.app === appId;
  const family: Record<string, Screen['kind'][]> = {
    settings: ['settings'],
    browser: ['browser', 'web_results', 'webpage', 'shop_home', 'shop_results', 'shop_product', 'shop_cart'],
    store_home: ['store_home', 'store_results', 'store_app'],
    google: ['google', 'web_results', 'webpage'],
  };
  return (family[home.kind] ?? []).includes(sc.kind);
}

/** Gets to an app from anywhere: home, then the home grid or the app drawer (scrolling its pages). */
export function navigateTo(appId: string, size: ScreenSize): Stage {
  return {
    done: (s) => inApp(s.screen, appId),
    act: (s, els) => {
      const sc = s.screen;
      if (sc.kind === 'home') return has(els, `app:${appId}`) ? tap(`app:${appId}`) : { kind: 'swipe', dir: 'up' };
      if (sc.kind === 'drawer') {
        if (has(els, `app:${appId}`)) return tap(`app:${appId}`);
        return drawerHasMore(s.world, size, sc.page) ? { kind: 'swipe', dir: 'up' } : { kind: 'swipe', dir: 'down' };
      }
      return { kind: 'home' };
    },
  };
}

/** Focuses the screen's field, types `text`, and (unless `submitted` says it is done) nothing more. */
function fill(text: string, done: (s: UiState) => boolean, fieldId = 'field'): Stage {
  return {
    done,
    act: (s) => {
      const f = fieldOf(s.screen);
      if (f?.focused) {
        if (f.text === text) return { kind: 'enter' };
        // Field holds something else: the oracle does not clear text, tasks never need it.
        return { kind: 'type', text };
      }
      return tap(fieldId);
    },
  };
}

const screenIs =
  (...kinds: Screen['kind'][]) =>
  (s: UiState): boolean =>
    kinds.includes(s.screen.kind);

/** Taps `id` once visible, swiping up to find it. */
function reach(id: string, done: (s: UiState) => boolean): Stage {
  return { done, act: (_s, els) => (has(els, id) ? tap(id) : { kind: 'swipe', dir: 'up' }) };
}

/** A family of tasks whose goals name no app ("turn on Wi-Fi", web searches, shopping). */
export interface PlainFamily {
  make: (rng: Rng, size: ScreenSize) => Task;
}

/**
 * A family of tasks whose goal names a target app ("open X", "install X", "search in X"). The target
 * is drawn by drawTask from `targets`, restricted to the set's app split, so the split is enforced
 * in one place for every family.
 */
export interface AppFamily {
  targets: readonly AppInfo[];
  make: (rng: Rng, size: ScreenSize, app: AppInfo) => Task;
}

export type Family = PlainFamily | AppFamily;

/** The families a set of this app split can draw: unseen sets only those that name an unseen target. */
export function familiesFor(families: readonly [Family, number][], split: AppSplit): [Family, number][] {
  return families.filter(([f]) => ('targets' in f ? f.targets.some((a) => inAppSplit(a, split)) : split === 'seen'));
}

/** Draws a family by weight among those the split allows, then (for app families) its target within the split. */
export function drawTask(rng: Rng, families: readonly [Family, number][], size: ScreenSize, split: AppSplit): Task {
  const family = rng.weighted(familiesFor(families, split));
  if (!('targets' in family)) return family.make(rng, size);
  return family.make(rng, size, rng.pick(family.targets.filter((a) => inAppSplit(a, split))));
}

/** "Open X": any installed app. */
export const openAppTask = (pool: (a: AppInfo) => boolean): AppFamily => ({
  targets: APPS.filter(pool),
  make: (rng, size, app) => ({ goal: openAppGoal(rng, app), stages: [navigateTo(app.id, size)], mustInstall: [app.id] }),
});

/** Web search from the home widget, the Google app or Chrome; ends on the results page. */
function webSearch(rng: Rng, size: ScreenSize): Task {
  const { goal, query, via } = webSearchGoal(rng);
  const results = (s: UiState): boolean => s.screen.kind === 'web_results';
  const start: Stage =
    via === 'widget'
      ? {
          done: (s) => s.screen.kind === 'google' || results(s),
          act: (s) => (s.screen.kind === 'home' ? tap('home_search') : { kind: 'home' }),
        }
      : navigateTo(via, size);
  return { goal, stages: [start, fill(query, results)] };
}
export const webSearchTask: PlainFamily = { make: webSearch };

function toggle(rng: Rng, size: ScreenSize): Task {
  const item = rng.pick(TOGGLE_SETTINGS);
  const on = rng.chance(0.5);
  return {
    goal: toggleGoal(rng, item.label, on),
    stages: [navigateTo('settings', size), reach(`toggle:${item.key}`, (s) => s.toggles[item.key] === on)],
  };
}
export const toggleTask: PlainFamily = { make: toggle };

/** "Install X" from the Play Store, from its results list or (when the goal says so) its page. */
function install(rng: Rng, size: ScreenSize, app: AppInfo): Task {
  const viaPage = rng.chance(0.4);
  const installing = (s: UiState): boolean => s.installing.includes(app.id);
  const pick: Stage = {
    done: installing,
    act: (s) => (viaPage && s.screen.kind === 'store_results' ? tap(`store_item:${app.id}`) : tap(`install:${app.id}`)),
  };
  return {
    goal: installGoal(rng, app, viaPage),
    stages: [navigateTo('playstore', size), fill(app.name, screenIs('store_results', 'store_app')), pick],
    mustNotInstall: [app.id],
  };
}
export const installTask: AppFamily = { targets: STORE_APPS, make: install };

/** "Search X for Q" in the app's own search bar. */
function appSearch(rng: Rng, size: ScreenSize, app: AppInfo): Task {
  const query = rng.pick(APP_QUERIES[app.id]!);
  return {
    goal: appSearchGoal(rng, app, query),
    stages: [navigateTo(app.id, size), fill(query, (s) => s.screen.kind === 'app' && s.screen.results !== null)],
    mustInstall: [app.id],
  };
}
export const appSearchTask: AppFamily = { targets: Object.keys(APP_QUERIES).map(appById), make: appSearch };

/** "Go to amazon.com": by typing the domain in Chrome or through its shortcut tile. */
function visitSite(rng: Rng, size: ScreenSize): Task {
  const site = rng.pick(SHOP_SITES);
  const viaTile = rng.chance(0.4);
  return {
    goal: siteGoal(rng, site.domain, viaTile),
    stages: [navigateTo('chrome', size), openSite(site.id, site.domain, viaTile)],
    ...(viaTile ? { mustTile: site.id } : {}),
  };
}
export const siteTask: PlainFamily = { make: visitSite };

/** Opens a shop site from Chrome: its new-tab shortcut tile when the goal says so, else by typing the domain. */
function openSite(siteId: string, domain: string, viaTile: boolean): Stage {
  const typing = fill(domain, () => false);
  return {
    done: (s) => s.screen.kind.startsWith('shop_'),
    act: (s, els) => (viaTile && s.screen.kind === 'browser' && !fieldOf(s.screen)?.focused && has(els, `tile:${siteId}`) ? tap(`tile:${siteId}`) : typing.act(s, els)),
  };
}

/** Search a shop site for a product and add the n-th result to the cart (from the list or its page). */
function shopping(rng: Rng, size: ScreenSize): Task {
  const site = rng.pick(SHOP_SITES);
  const query = rng.pick(PRODUCT_QUERIES);
  const nth = rng.weighted<number>([
    [0, 0.6],
    [1, 0.25],
    [2, 0.15],
  ]);
  const viaPage = rng.chance(0.3);
  const viewCart = rng.chance(0.25);
  const added = (s: UiState): boolean => s.cart.length > 0;
  const add: Stage = {
    done: added,
    act: (s, els) => {
      if (s.screen.kind === 'shop_product') return tap('add');
      const id = viaPage ? `product:${nth}` : `add:${nth}`;
      return has(els, id) ? tap(id) : { kind: 'swipe', dir: 'up' };
    },
  };
  const stages = [
    navigateTo('chrome', size),
    openSite(site.id, site.domain, false),
    fill(query, screenIs('shop_results', 'shop_product', 'shop_cart')),
    add,
  ];
  if (viewCart) stages.push({ done: screenIs('shop_cart'), act: () => tap('cart') });
  return { goal: shoppingGoal(rng, site.domain, query, nth, viewCart, viaPage), stages };
}
export const shoppingTask: PlainFamily = { make: shopping };

/** Which families make up each subset, with weights (shaped after AITW's subsets). */
export const SUBSET_FAMILIES: Record<'general' | 'install' | 'google_apps' | 'web_shopping', [Family, number][]> = {
  general: [
    [openAppTask(() => true), 0.35],
    [webSearchTask, 0.45],
    [siteTask, 0.2],
  ],
  install: [
    [installTask, 0.85],
    [openAppTask((a) => a.id === 'playstore'), 0.15],
  ],
  google_apps: [
    [toggleTask, 0.45],
    [openAppTask((a) => a.kind !== 'third_party'), 0.3],
    [appSearchTask, 0.25],
  ],
  web_shopping: [
    [shoppingTask, 0.9],
    [siteTask, 0.1],
  ],
};

/** Runs stages: the next event, or null when every stage is done. */
export function nextEvent(task: Task, s: UiState, size: ScreenSize): UiEvent | null {
  const stage = task.stages.find((st) => !st.done(s));
  if (!stage) return null;
  return stage.act(s, layoutScreen(s, size));
}

export { homeApps, ORDINALS, inCart };
