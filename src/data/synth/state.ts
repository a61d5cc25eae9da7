import { SHOP_SITES, appById } from './apps.js';
import { makeProducts, makeStoreResults, makeWebResults, type AnswerCard, type Product, type WebResult } from './content.js';
import type { Rng } from '../../util/rng.js';
import type { World } from './world.js';

/** A text field: focused fields show the keyboard. */
export interface Field {
  focused: boolean;
  text: string;
}

/** One screen of the simulated phone. */
export type Screen =
  | { kind: 'home' }
  | { kind: 'drawer'; page: number }
  | { kind: 'app'; app: string; field: Field; results: string[] | null }
  | { kind: 'settings'; page: number }
  | { kind: 'google'; field: Field }
  | { kind: 'web_results'; query: string; results: WebResult[]; card: AnswerCard | null; page: number }
  | { kind: 'webpage'; domain: string; title: string }
  | { kind: 'browser'; field: Field }
  | { kind: 'shop_home'; site: string; field: Field }
  | { kind: 'shop_results'; site: string; query: string; products: Product[]; page: number }
  | { kind: 'shop_product'; site: string; product: Product }
  | { kind: 'shop_cart'; site: string }
  | { kind: 'store_home'; field: Field }
  | { kind: 'store_results'; query: string; apps: string[] }
  | { kind: 'store_app'; app: string };

/** The whole simulated phone: the fixed world plus what the episode has changed so far. */
export interface UiState {
  world: World;
  screen: Screen;
  /** Screens PRESS_BACK returns to, most recent last. */
  stack: Screen[];
  toggles: Record<string, boolean>;
  cart: Product[];
  /** Apps whose install has been started. */
  installing: string[];
}

/** What the oracle does, in UI terms; turned into an AITW action by actions.ts. */
export type UiEvent =
  | { kind: 'tap'; target: string }
  /** Finger direction: 'up' moves the content up, revealing what is below ("scroll down"). */
  | { kind: 'swipe'; dir: 'up' | 'down' | 'left' | 'right' }
  | { kind: 'type'; text: string }
  | { kind: 'enter' }
  | { kind: 'back' }
  | { kind: 'home' };

export const NO_FIELD: Field = { focused: false, text: '' };

export function initialState(world: World, rng: Rng): UiState {
  const toggles: Record<string, boolean> = {};
  for (const s of world.settings) if (s.toggle) toggles[s.key] = rng.chance(0.5);
  return { world, screen: { kind: 'home' }, stack: [], toggles, cart: [], installing: [] };
}

/** The screen an app opens on. */
export function launchScreen(appId: string): Screen {
  switch (appId) {
    case 'settings':
      return { kind: 'settings', page: 0 };
    case 'chrome':
      return { kind: 'browser', field: NO_FIELD };
    case 'playstore':
      return { kind: 'store_home', field: NO_FIELD };
    case 'google':
      return { kind: 'google', field: NO_FIELD };
    default:
      return { kind: 'app', app: appId, field: NO_FIELD, results: null };
  }
}

/** The field on a screen, if it has one. */
export function fieldOf(screen: Screen): Field | undefined {
  return 'field' in screen ? screen.field : undefined;
}

function withField(screen: Screen, field: Field): Screen {
  return 'field' in screen ? { ...screen, field } : screen;
}

const go = (s: UiState, screen: Screen): UiState => ({ ...s, screen, stack: [...s.stack, s.screen] });
const replace = (s: UiState, screen: Screen): UiState => ({ ...s, screen });

class UnhandledEvent extends Error {}

/**
 * The simulated UI: the state after `event`. `rng` draws the content of newly opened pages
 * (search results, products). Throws when the event makes no sense on this screen, which would be
 * an oracle bug.
 */
export function applyEvent(s: UiState, event: UiEvent, rng: Rng): UiState {
  const sc = s.screen;
  switch (event.kind) {
    case 'home':
      return { ...s, screen: { kind: 'home' }, stack: [] };
    case 'back': {
      const field = fieldOf(sc);
      if (field?.focused) return replace(s, withField(sc, { ...field, focused: false }));
      if (s.stack.length === 0) return { ...s, screen: { kind: 'home' } };
      return { ...s, screen: s.stack[s.stack.length - 1]!, stack: s.stack.slice(0, -1) };
    }
    case 'type': {
      const field = fieldOf(sc);
      if (!field?.focused) throw new UnhandledEvent(`type on ${sc.kind} without a focused field`);
      return replace(s, withField(sc, { focused: true, text: field.text + event.text }));
    }
    case 'enter':
      return enter(s, rng);
    case 'swipe':
      return swipe(s, event.dir);
    case 'tap':
      return tap(s, event.target, rng);
  }
}

function enter(s: UiState, rng: Rng): UiState {
  const sc = s.screen;
  const field = fieldOf(sc);
  if (!field?.focused || field.text === '') throw new UnhandledEvent(`enter on ${sc.kind} without text`);
  const q = field.text;
  const base = withField(sc, NO_FIELD);
  const next = (screen: Screen): UiState => ({ ...s, screen, stack: [...s.stack, base] });
  switch (sc.kind) {
    case 'google':
      return next(webResults(rng, q));
    case 'browser': {
      const site = SHOP_SITES.find((x) => q.toLowerCase().replace(/^www\./, '') === x.domain);
      return next(site ? { kind: 'shop_home', site: site.id, field: NO_FIELD } : webResults(rng, q));
    }
    case 'shop_home':
    case 'shop_results':
      return next({ kind: 'shop_results', site: sc.site, query: q, products: makeProducts(rng, q, rng.int(5, 8)), page: 0 });
    case 'store_home':
    case 'store_results': {
      const target = s.world.store.find((id) => appById(id).name.toLowerCase() === q.toLowerCase());
      return next({ kind: 'store_results', query: q, apps: makeStoreResults(rng, s.world.store, target, 5) });
    }
    case 'app': {
      const rows = appById(sc.app).rows;
      return replace(s, {
        ...sc,
        field: { focused: false, text: q },
        results: rng.sample(rows.length ? rows : ['Result'], 4).map((r) => `${q} · ${r}`),
      });
    }
    default:
      throw new UnhandledEvent(`enter on ${sc.kind}`);
  }
}

/** Weather questions get a weather card, other questions an answer snippet. */
export function webResults(rng: Rng, query: string): Screen {
  const weather = /weather (?:in|for) ([a-z .'-]+?)\??$/i.exec(query);
  let card: AnswerCard | null = null;
  if (weather) {
    card = {
      kind: 'weather',
      city: weather[1]!.replace(/\b[a-z]/g, (c) => c.toUpperCase()),
      temp: rng.int(-5, 34),
      condition: rng.pick(['Sunny', 'Cloudy', 'Partly cloudy', 'Rain'] as const),
    };
  } else if (/^(what|who|how|when|where)\b/i.test(query)) {
    card = { kind: 'answer', text: `${query.replace(/\?$/, '')}: see the top result` };
  }
  return { kind: 'web_results', query, results: makeWebResults(rng, query, rng.int(5, 7)), card, page: 0 };
}

function swipe(s: UiState, dir: 'up' | 'down' | 'left' | 'right'): UiState {
  const sc = s.screen;
  const delta = dir === 'up' ? 1 : dir === 'down' ? -1 : 0;
  if (sc.kind === 'home') {
    if (dir === 'up') return go(s, { kind: 'drawer', page: 0 });
    return s;
  }
  if (sc.kind === 'drawer' && sc.page === 0 && dir === 'down') {
    return { ...s, screen: s.stack[s.stack.length - 1] ?? { kind: 'home' }, stack: s.stack.slice(0, -1) };
  }
  if ('page' in sc) return replace(s, { ...sc, page: Math.max(0, sc.page + delta) });
  return s;
}

function tap(s: UiState, target: string, rng: Rng): UiState {
  const sc = s.screen;
  const [kind, arg = ''] = splitTarget(target);
  switch (kind) {
    case 'app':
      return go(s, launchScreen(arg));
    case 'home_search':
      return go(s, { kind: 'google', field: { focused: true, text: '' } });
    case 'field': {
      const field = fieldOf(sc);
      if (field) return replace(s, withField(sc, { ...field, focused: true }));
      if (sc.kind === 'web_results') return go(s, { kind: 'google', field: { focused: true, text: sc.query } });
      if (sc.kind === 'shop_results') return go(s, { kind: 'shop_home', site: sc.site, field: { focused: true, text: '' } });
      if (sc.kind === 'store_results') return go(s, { kind: 'store_home', field: { focused: true, text: '' } });
      break;
    }
    case 'toggle':
      return { ...s, toggles: { ...s.toggles, [arg]: !s.toggles[arg] } };
    case 'result':
      if (sc.kind === 'web_results') {
        const r = sc.results[Number(arg)]!;
        return go(s, { kind: 'webpage', domain: r.domain, title: r.title });
      }
      if (sc.kind === 'app') return s;
      break;
    case 'tile':
      return go(s, { kind: 'shop_home', site: arg, field: NO_FIELD });
    case 'product':
      if (sc.kind === 'shop_results') return go(s, { kind: 'shop_product', site: sc.site, product: sc.products[Number(arg)]! });
      break;
    case 'add':
      if (sc.kind === 'shop_results') return { ...s, cart: [...s.cart, sc.products[Number(arg)]!] };
      if (sc.kind === 'shop_product') return { ...s, cart: [...s.cart, sc.product] };
      break;
    case 'cart':
      if ('site' in sc) return go(s, { kind: 'shop_cart', site: sc.site });
      break;
    case 'store_item':
      return go(s, { kind: 'store_app', app: arg });
    case 'install':
      return { ...s, installing: [...s.installing, arg] };
    case 'row':
      return s;
  }
  void rng;
  throw new UnhandledEvent(`tap on '${target}' on ${sc.kind}`);
}

/** Element ids are `kind:arg` ("app:clock", "toggle:wifi", "result:2"). */
export function splitTarget(target: string): [string, string?] {
  const i = target.indexOf(':');
  return i < 0 ? [target] : [target.slice(0, i), target.slice(i + 1)];
}

/** Whether a product is in the cart (by identity of the generated record). */
export function inCart(s: UiState, p: Product): boolean {
  return s.cart.includes(p);
}
