import { SHOP_SITES, appById, type ShopSite } from './apps.js';
import { Builder, KEYBOARD_H, appBar, keyboard, navBar, statusBar, type Element } from './layout.js';
import { fieldOf, inCart, type Screen, type UiState } from './state.js';
import { DOCK_H, HOME_CELL_H, NAV_H, STATUS_H, homeRows, type ScreenSize, type World } from './world.js';

/** Screen layouts: for each simulated screen, the elements with their boxes (the single source of truth
 * for drawing, annotations and where the oracle taps). */

const DRAWER_TOP = 40;
const DRAWER_CELL_H = 42;

function site(id: string): ShopSite {
  const s = SHOP_SITES.find((x) => x.id === id);
  if (!s) throw new RangeError(`unknown shop site '${id}'`);
  return s;
}

export function drawerRows(b: { H: number }): number {
  return Math.max(2, Math.floor((b.H - NAV_H - DRAWER_TOP) / DRAWER_CELL_H));
}

/** Items visible on page `page` of a list of `n` items when `fit` fit; consecutive pages overlap by one. */
export function pageWindow(n: number, fit: number, page: number): [number, number] {
  const step = Math.max(1, fit - 1);
  const maxStart = Math.max(0, n - fit);
  const start = Math.min(page * step, maxStart);
  return [start, Math.min(n, start + fit)];
}

export function layoutScreen(state: UiState, size: ScreenSize): Element[] {
  const b = new Builder(size, state.world.theme);
  const sc = state.screen;
  switch (sc.kind) {
    case 'home':
      home(b, state.world);
      break;
    case 'drawer':
      drawer(b, state.world, sc.page);
      break;
    case 'app':
      app(b, state, sc);
      break;
    case 'settings':
      settings(b, state, sc.page);
      break;
    case 'google':
      google(b, state, sc);
      break;
    case 'web_results':
      webResults(b, state, sc);
      break;
    case 'webpage':
      webpage(b, state, sc);
      break;
    case 'browser':
      browser(b, state, sc);
      break;
    case 'shop_home':
    case 'shop_results':
    case 'shop_product':
    case 'shop_cart':
      shop(b, state, sc);
      break;
    case 'store_home':
    case 'store_results':
    case 'store_app':
      store(b, state, sc);
      break;
  }
  if (fieldOf(sc)?.focused) keyboard(b);
  return b.els;
}

function chrome(b: Builder, world: World, fg: string, bg: string): void {
  statusBar(b, world, bg, fg);
  navBar(b, bg, fg);
}

function appCell(b: Builder, cx: number, top: number, appId: string, fg: string, label: boolean): void {
  const app = appById(appId);
  b.appIcon(cx, top + 15, 26, app, `app:${appId}`);
  if (label) b.text(cx, top + 30, app.name, 6.2, fg, { anchor: 'middle', maxW: 38 });
}

function home(b: Builder, world: World): void {
  const t = world.theme;
  b.add(0, 0, b.W, b.H, { kind: 'gradient', from: t.wallpaper[0], to: t.wallpaper[1], vertical: t.wallpaperVertical });
  statusBar(b, world, null, '#ffffff');
  b.text(8, STATUS_H + 4, world.date, 8, '#ffffff', { bold: true });
  const dockTop = b.H - NAV_H - DOCK_H;
  let gridTop = STATUS_H + 40;
  if (world.homeSearchAtTop) {
    homeSearch(b, STATUS_H + 18);
  } else {
    homeSearch(b, dockTop - 22);
    gridTop = STATUS_H + 20;
  }
  const cols = 4;
  const cw = b.W / cols;
  world.home.forEach((id, i) => {
    if (!id) return;
    const r = Math.floor(i / cols);
    appCell(b, cw * (i % cols) + cw / 2, gridTop + r * HOME_CELL_H, id, '#ffffff', true);
  });
  b.rect(6, dockTop - 2, b.W - 12, DOCK_H - 2, 'rgba(255,255,255,0.18)', 14);
  world.dock.forEach((id, i) => appCell(b, cw * i + cw / 2, dockTop + 1, id, '#ffffff', false));
  navBar(b, null, '#ffffff');
}

function homeSearch(b: Builder, y: number): void {
  const t = b.theme;
  const fill = t.dark ? '#303134' : '#ffffff';
  b.rect(8, y, b.W - 16, 18, fill, 9, { ann: { type: 'TEXT', text: 'Search' }, id: 'home_search' });
  b.text(14, y + 4.5, 'G', 8, '#4285f4', { bold: true, ann: false });
  b.glyph(8 + b.W - 16 - 16, y + 3, 12, 'mic', t.accent, fill, 'ICON_MIC');
}

function drawer(b: Builder, world: World, page: number): void {
  const t = world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  statusBar(b, world, null, t.onSurface);
  b.field(8, STATUS_H + 6, b.W - 16, 18, { focused: false, text: '' }, 'Search apps', { id: 'drawer_search' });
  const per = drawerRows(b) * 4;
  const cw = b.W / 4;
  const start = Math.min(page, Math.ceil(world.drawer.length / per) - 1) * per;
  world.drawer.slice(start, start + per).forEach((id, i) => {
    appCell(b, cw * (i % 4) + cw / 2, DRAWER_TOP + Math.floor(i / 4) * DRAWER_CELL_H, id, t.onSurface, true);
  });
  navBar(b, null, t.onSurface);
}

/** Whether the drawer has a page after `page`. */
export function drawerHasMore(world: World, size: ScreenSize, page: number): boolean {
  const b = new Builder(size, world.theme);
  return (page + 1) * drawerRows(b) * 4 < world.drawer.length;
}

function contrastText(bg: string): string {
  return ['#fdd835', '#f5f5f5', '#fb8c00', '#ffffff'].includes(bg) ? '#202124' : '#ffffff';
}

function app(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'app' }>): void {
  const t = state.world.theme;
  const a = appById(sc.app);
  const bar = a.icon.background;
  const fg = contrastText(bar);
  b.rect(0, 0, b.W, b.H, t.surface);
  statusBar(b, state.world, bar, fg);
  let y = appBar(b, a.name, bar, fg);
  if (a.search) {
    b.field(6, y + 5, b.W - 12, 18, sc.field, a.search);
    y += 28;
  }
  const bottom = sc.field.focused ? b.H - NAV_H - KEYBOARD_H : b.H - NAV_H;
  const rows = sc.results ?? a.rows;
  rows.forEach((text, i) => {
    const ry = y + 4 + i * 26;
    if (ry + 24 > bottom) return;
    b.rect(8, ry + 4, 16, 16, a.icon.background, 8);
    b.text(30, ry + 4, text, 7.5, t.onSurface, { maxW: b.W - 36, id: sc.results ? `result:${i}` : `row:${i}` });
    b.text(30, ry + 14, sc.results ? 'Result' : a.name, 6, t.muted, { ann: false });
  });
  if (!sc.field.focused && !sc.results) b.glyph(b.W - 30, b.H - NAV_H - 30, 22, 'plus', contrastText(bar), bar, 'ICON_PLUS');
  navBar(b, t.surface, t.onSurface);
}

export const SETTINGS_TOP = STATUS_H + 52;
export const SETTINGS_ROW_H = 26;

export function settingsFit(b: { H: number }): number {
  return Math.floor((b.H - NAV_H - SETTINGS_TOP) / SETTINGS_ROW_H);
}

function settings(b: Builder, state: UiState, page: number): void {
  const t = state.world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  b.text(8, STATUS_H + 6, 'Settings', 13, t.onSurface);
  b.field(6, STATUS_H + 26, b.W - 12, 18, { focused: false, text: '' }, 'Search settings', { id: 'settings_search' });
  const items = state.world.settings;
  const [from, to] = pageWindow(items.length, settingsFit(b), page);
  items.slice(from, to).forEach((s, i) => {
    const y = SETTINGS_TOP + i * SETTINGS_ROW_H;
    b.rect(4, y + 3, 19, 19, s.colour, 9.5);
    b.glyph(8, y + 7, 11, s.glyph, '#ffffff', s.colour);
    b.text(26, y + (s.toggle ? 8 : 4), s.label, 8, t.onSurface, { maxW: s.toggle ? 100 : 128 });
    if (s.toggle) b.toggle(b.W - 28, y + 7.5, state.toggles[s.key] ?? false, `toggle:${s.key}`);
    else b.text(26, y + 14, s.summary, 6, t.muted);
    b.rect(26, y + SETTINGS_ROW_H - 0.5, b.W - 30, 0.5, t.divider);
  });
}

function suggestions(b: Builder, y: number, text: string, items: string[]): void {
  const t = b.theme;
  items.slice(0, 4).forEach((s, i) => {
    const ry = y + i * 20;
    b.glyph(8, ry + 4, 10, 'search', t.muted, t.surface);
    b.text(26, ry + 5, text ? `${text}${s}` : s, 7.5, t.onSurface, { maxW: b.W - 34 });
  });
}

function google(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'google' }>): void {
  const t = state.world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  if (sc.field.focused) {
    b.glyph(4, STATUS_H + 6, 14, 'back', t.onSurface, t.surface, 'ICON_ARROW_BACKWARD', 'back');
    b.field(22, STATUS_H + 4, b.W - 28, 18, sc.field, 'Search or type URL', { mic: true });
    suggestions(b, STATUS_H + 30, sc.field.text, sc.field.text ? [' near me', ' today', ' reviews', ' price'] : ['weather', 'news', 'restaurants near me', 'translate']);
    return;
  }
  logo(b, b.W / 2, STATUS_H + 40, 18);
  b.field(8, STATUS_H + 70, b.W - 16, 20, sc.field, 'Search', { mic: true });
  ['Discover', 'Top stories for you', 'Local news', 'Sports scores'].forEach((s, i) => {
    const y = STATUS_H + 100 + i * 42;
    if (y + 38 > b.H - NAV_H) return;
    b.rect(8, y, b.W - 16, 38, t.surfaceAlt, 6);
    b.text(14, y + 6, s, 7.5, t.onSurface, { bold: i === 0 });
    b.rect(14, y + 20, b.W - 40, 3, t.divider, 1.5);
    b.rect(14, y + 27, b.W - 60, 3, t.divider, 1.5);
  });
}

function logo(b: Builder, cx: number, y: number, size: number): void {
  const colours = ['#4285f4', '#ea4335', '#fbbc05', '#4285f4', '#34a853', '#ea4335'];
  const letters = 'Google';
  const adv = size * 0.62;
  const x0 = cx - (letters.length * adv) / 2;
  // One annotation for the word, letters drawn one by one in their colours.
  b.rect(x0, y, letters.length * adv, size * 1.25, 'none', 0, { ann: { type: 'TEXT', text: letters } });
  [...letters].forEach((ch, i) => b.text(x0 + i * adv, y, ch, size, colours[i]!, { bold: true, ann: false }));
}

const RESULT_H = 36;

export function resultsTop(card: boolean): number {
  return STATUS_H + 46 + (card ? 50 : 0);
}
export function resultsFit(b: { H: number }, card: boolean): number {
  return Math.max(1, Math.floor((b.H - NAV_H - resultsTop(card)) / RESULT_H));
}

function webResults(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'web_results' }>): void {
  const t = state.world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  b.field(6, STATUS_H + 4, b.W - 12, 18, { focused: false, text: sc.query }, 'Search', { mic: true });
  ['All', 'Images', 'News', 'Videos', 'Maps'].forEach((tab, i) => {
    b.text(8 + i * 30, STATUS_H + 28, tab, 6.5, i === 0 ? t.accent : t.muted, { bold: i === 0 });
  });
  b.rect(0, STATUS_H + 40, b.W, 0.6, t.divider);
  const showCard = sc.card !== null && sc.page === 0;
  if (showCard && sc.card) {
    const y = STATUS_H + 46;
    b.rect(6, y, b.W - 12, 44, t.surfaceAlt, 6);
    if (sc.card.kind === 'weather') {
      const c = sc.card;
      b.glyph(12, y + 8, 20, c.condition === 'Sunny' ? 'sun' : 'cloud', c.condition === 'Sunny' ? '#fbbc05' : t.muted, t.surfaceAlt, c.condition === 'Sunny' ? 'ICON_SUN' : 'ICON_CLOUD');
      b.text(38, y + 5, `${c.temp}°C`, 14, t.onSurface, { bold: true });
      b.text(38, y + 24, c.city, 7, t.onSurface, { maxW: b.W - 50 });
      b.text(38, y + 33, c.condition, 6, t.muted);
    } else {
      b.text(12, y + 6, sc.card.text, 7, t.onSurface, { maxW: b.W - 24 });
      b.rect(12, y + 22, b.W - 40, 3, t.divider, 1.5);
      b.rect(12, y + 30, b.W - 60, 3, t.divider, 1.5);
    }
  }
  const top = resultsTop(showCard);
  const fit = resultsFit(b, showCard);
  const [from, to] = pageWindow(sc.results.length, fit, sc.page);
  sc.results.slice(from, to).forEach((r, k) => {
    const i = from + k;
    const y = top + k * RESULT_H;
    b.text(8, y + 2, r.domain, 6, t.muted, { maxW: b.W - 16 });
    b.text(8, y + 11, r.title, 7.5, t.dark ? '#8ab4f8' : '#1a0dab', { maxW: b.W - 16, id: `result:${i}` });
    b.rect(8, y + 23, b.W - 24, 2.5, t.divider, 1.2);
    b.rect(8, y + 28, b.W - 50, 2.5, t.divider, 1.2);
  });
}

function webpage(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'webpage' }>): void {
  const t = state.world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  b.field(6, STATUS_H + 4, b.W - 30, 18, { focused: false, text: sc.domain }, '', { glyph: 'globe' });
  b.glyph(b.W - 20, STATUS_H + 6, 14, 'dots', t.onSurface, t.surface, 'ICON_THREE_DOTS');
  b.text(8, STATUS_H + 30, sc.title, 9, t.onSurface, { bold: true, maxW: b.W - 16 });
  for (let i = 0; i < 14; i++) {
    const y = STATUS_H + 50 + i * 12;
    if (y > b.H - NAV_H - 8) break;
    b.rect(8, y, b.W - 16 - ((i * 37) % 40), 3, t.divider, 1.5);
  }
}

function browser(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'browser' }>): void {
  const t = state.world.theme;
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  b.field(6, STATUS_H + 4, b.W - 30, 18, sc.field, 'Search or type URL', { glyph: 'globe' });
  b.glyph(b.W - 20, STATUS_H + 6, 14, 'dots', t.onSurface, t.surface, 'ICON_THREE_DOTS');
  if (sc.field.focused) {
    const matches = SHOP_SITES.filter((s) => sc.field.text && s.domain.startsWith(sc.field.text.toLowerCase())).map((s) => s.domain.slice(sc.field.text.length));
    suggestions(b, STATUS_H + 30, sc.field.text, matches.length ? matches : ['.com', ' news', ' weather']);
    return;
  }
  logo(b, b.W / 2, STATUS_H + 40, 18);
  const cw = b.W / 4;
  state.world.tiles.forEach((id, i) => {
    const s = site(id);
    const cx = cw * (i % 4) + cw / 2;
    const y = STATUS_H + 74 + Math.floor(i / 4) * 40;
    b.rect(cx - 12, y, 24, 24, s.colour, 12, { id: `tile:${id}`, ann: { type: 'ICON_WORLD', text: '' } });
    b.text(cx, y + 7, s.brand[0]!.toUpperCase(), 9, s.text, { anchor: 'middle', bold: true, ann: false });
    b.text(cx, y + 27, s.domain.replace('.com', ''), 6, t.onSurface, { anchor: 'middle', maxW: cw - 2 });
  });
}

const PRODUCT_H = 60;

export function productsTop(): number {
  return STATUS_H + 74;
}
export function productsFit(b: { H: number }): number {
  return Math.max(1, Math.floor((b.H - NAV_H - productsTop()) / PRODUCT_H));
}

function shop(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'shop_home' | 'shop_results' | 'shop_product' | 'shop_cart' }>): void {
  const t = state.world.theme;
  const s = site(sc.site);
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  // Chrome's toolbar with the site's address.
  b.field(6, STATUS_H + 3, b.W - 12, 16, { focused: false, text: s.domain }, '', { glyph: 'globe', id: 'address' });
  const hy = STATUS_H + 22;
  b.rect(0, hy, b.W, 24, s.colour);
  b.glyph(4, hy + 5, 14, 'menu', s.text, s.colour, 'ICON_THREE_BARS');
  b.text(22, hy + 6, s.brand, 10, s.text, { bold: true });
  b.glyph(b.W - 20, hy + 4, 15, 'cart', s.text, s.colour, 'ICON_SHOPPING_CART', 'cart');
  if (state.cart.length > 0) {
    b.rect(b.W - 9, hy + 2, 8, 8, '#e53935', 4);
    b.text(b.W - 5, hy + 2.6, String(state.cart.length), 5.5, '#ffffff', { anchor: 'middle', bold: true });
  }
  const fy = hy + 27;
  if (sc.kind === 'shop_home' || sc.kind === 'shop_results') {
    const field = sc.kind === 'shop_home' ? sc.field : { focused: false, text: sc.query };
    b.field(6, fy, b.W - 12, 18, field, `Search ${s.brand}`);
  }
  const y0 = productsTop();
  if (sc.kind === 'shop_home') {
    if (sc.field.focused) {
      suggestions(b, fy + 24, sc.field.text, [' deals', ' sale', ' used', ' new']);
      return;
    }
    ['Deals', 'Electronics', 'Home', 'Fashion', 'Toys', 'Sports'].forEach((c, i) => {
      const x = 6 + (i % 2) * 76;
      const y = y0 + Math.floor(i / 2) * 40;
      if (y + 36 > b.H - NAV_H) return;
      b.rect(x, y, 72, 36, t.surfaceAlt, 5);
      b.text(x + 6, y + 13, c, 7.5, t.onSurface);
    });
  } else if (sc.kind === 'shop_results') {
    const fit = productsFit(b);
    const [from, to] = pageWindow(sc.products.length, fit, sc.page);
    sc.products.slice(from, to).forEach((p, k) => {
      const i = from + k;
      const y = y0 + k * PRODUCT_H;
      b.rect(6, y + 4, 44, 44, t.surfaceAlt, 4);
      b.add(8, y + 6, 40, 40, { kind: 'shape', shape: p.shape, fill: p.colour, background: t.surfaceAlt });
      b.text(54, y + 3, p.title, 7, t.onSurface, { maxW: b.W - 60, id: `product:${i}` });
      b.text(54, y + 13, `${p.rating.toFixed(1)} ★ (${p.reviews})`, 6, t.muted);
      b.text(54, y + 22, p.price, 8.5, t.onSurface, { bold: true });
      const added = inCart(state, p);
      b.button(54, y + 36, 62, 14, added ? 'Added ✓' : 'Add to cart', added ? t.surfaceAlt : '#ffd814', added ? t.onSurface : '#202124', `add:${i}`, 6.5);
      b.rect(6, y + PRODUCT_H - 1, b.W - 12, 0.5, t.divider);
    });
  } else if (sc.kind === 'shop_product') {
    const p = sc.product;
    b.rect(30, fy + 4, 100, 90, t.surfaceAlt, 6);
    b.add(45, fy + 9, 70, 70, { kind: 'shape', shape: p.shape, fill: p.colour, background: t.surfaceAlt });
    b.text(8, fy + 100, p.title, 8, t.onSurface, { maxW: b.W - 16 });
    b.text(8, fy + 112, `${p.rating.toFixed(1)} ★  ${p.reviews} ratings`, 6.5, t.muted);
    b.text(8, fy + 124, p.price, 11, t.onSurface, { bold: true });
    const added = inCart(state, p);
    b.button(8, fy + 144, b.W - 16, 18, added ? 'Added to cart ✓' : 'Add to cart', added ? t.surfaceAlt : '#ffd814', added ? t.onSurface : '#202124', 'add', 8);
    if (fy + 186 < b.H - NAV_H) b.button(8, fy + 166, b.W - 16, 18, 'Buy now', '#ffa41c', '#202124', undefined, 8);
  } else {
    b.text(8, fy + 2, 'Shopping Cart', 11, t.onSurface, { bold: true });
    const total = state.cart.reduce((sum, p) => sum + Number(p.price.slice(1)), 0);
    b.text(8, fy + 18, `Subtotal (${state.cart.length} items): $${total.toFixed(2)}`, 7, t.onSurface, { maxW: b.W - 16 });
    b.button(8, fy + 32, b.W - 16, 18, 'Proceed to checkout', '#ffd814', '#202124', 'checkout', 7.5);
    state.cart.slice(-4).forEach((p, i) => {
      const y = fy + 58 + i * 44;
      if (y + 40 > b.H - NAV_H) return;
      b.add(8, y, 36, 36, { kind: 'shape', shape: p.shape, fill: p.colour, background: t.surface });
      b.text(50, y + 4, p.title, 7, t.onSurface, { maxW: b.W - 56 });
      b.text(50, y + 16, p.price, 8, t.onSurface, { bold: true });
    });
  }
}

const STORE_ROW_H = 34;
export function storeTop(): number {
  return STATUS_H + 30;
}

function store(b: Builder, state: UiState, sc: Extract<Screen, { kind: 'store_home' | 'store_results' | 'store_app' }>): void {
  const t = state.world.theme;
  const green = '#01875f';
  b.rect(0, 0, b.W, b.H, t.surface);
  chrome(b, state.world, t.onSurface, t.surface);
  if (sc.kind === 'store_app') {
    const a = appById(sc.app);
    b.glyph(4, STATUS_H + 5, 14, 'back', t.onSurface, t.surface, 'ICON_ARROW_BACKWARD', 'back');
    b.glyph(b.W - 36, STATUS_H + 5, 14, 'search', t.onSurface, t.surface, 'ICON_MAGNIFYING_GLASS');
    b.glyph(b.W - 18, STATUS_H + 5, 14, 'dots', t.onSurface, t.surface, 'ICON_THREE_DOTS');
    const y = STATUS_H + 26;
    b.appIcon(30, y + 22, 40, a);
    b.text(58, y + 8, a.name, 10, t.onSurface, { bold: true, maxW: b.W - 62 });
    b.text(58, y + 22, `${a.name.split(' ')[0]} Inc.`, 6.5, green, { maxW: b.W - 62 });
    b.text(8, y + 50, '4.5 ★   100M+ downloads   Teen', 6.5, t.muted, { maxW: b.W - 16 });
    if (state.installing.includes(a.id)) {
      b.rect(8, y + 66, b.W - 16, 3, t.divider, 1.5);
      b.rect(8, y + 66, (b.W - 16) * 0.3, 3, green, 1.5);
      b.text(8, y + 72, 'Pending…', 6.5, t.muted);
      b.button(8, y + 84, (b.W - 20) / 2, 18, 'Cancel', t.surface, green, 'cancel');
      b.button(12 + (b.W - 20) / 2, y + 84, (b.W - 20) / 2, 18, 'Open', t.surfaceAlt, t.muted);
    } else {
      b.button(8, y + 66, b.W - 16, 18, 'Install', green, '#ffffff', `install:${a.id}`, 8);
    }
    b.text(8, y + 110, 'About this app', 8, t.onSurface, { bold: true });
    for (let i = 0; i < 6; i++) {
      const ly = y + 126 + i * 10;
      if (ly > b.H - NAV_H - 6) break;
      b.rect(8, ly, b.W - 16 - ((i * 29) % 36), 3, t.divider, 1.5);
    }
    return;
  }
  if (sc.kind === 'store_home') {
    b.field(6, STATUS_H + 4, b.W - 12, 20, sc.field, 'Search for apps & games', { mic: true });
    if (sc.field.focused) {
      suggestions(b, STATUS_H + 30, sc.field.text, sc.field.text ? [' app', ' free', ' lite', ''] : ['games', 'vpn', 'music', 'photo editor']);
      return;
    }
    ['For you', 'Top charts', 'Kids', 'Categories'].forEach((c, i) => {
      b.text(6 + i * 38, STATUS_H + 30, c, 6.2, i === 0 ? green : t.muted, { bold: i === 0, maxW: 37 });
    });
    storeRows(b, state, state.world.storeFeatured, storeTop() + 12, false);
    return;
  }
  b.glyph(4, STATUS_H + 7, 14, 'back', t.onSurface, t.surface, 'ICON_ARROW_BACKWARD', 'back');
  b.field(22, STATUS_H + 4, b.W - 28, 20, { focused: false, text: sc.query }, 'Search for apps & games', { id: 'field' });
  storeRows(b, state, sc.apps, storeTop(), true);
}

function storeRows(b: Builder, state: UiState, apps: string[], top: number, buttons: boolean): void {
  const t = state.world.theme;
  const green = '#01875f';
  apps.forEach((id, i) => {
    const y = top + i * STORE_ROW_H;
    if (y + STORE_ROW_H > b.H - NAV_H) return;
    const a = appById(id);
    b.appIcon(20, y + 15, 24, a);
    b.text(38, y + 3, a.name, 7.5, t.onSurface, { maxW: buttons ? 72 : 110, id: `store_item:${id}` });
    b.text(38, y + 13, `${(3.8 + ((i * 3) % 12) / 10).toFixed(1)} ★  ${10 + i * 7} MB`, 6, t.muted);
    if (!buttons) return;
    const installed = state.world.installed.includes(id);
    const installing = state.installing.includes(id);
    const label = installed ? 'Open' : installing ? 'Cancel' : 'Install';
    b.button(b.W - 44, y + 8, 38, 14, label, installed || installing ? t.surface : green, installed || installing ? green : '#ffffff', installed || installing ? undefined : `install:${id}`, 6.5);
  });
}

/** Pixel box of the element with this id, if on screen. */
