import { APPS, SHOP_SITES, appById, phoneApps, type AppSplit } from './apps.js';
import type { Rng } from '../../util/rng.js';

export interface ScreenSize {
  width: number;
  height: number;
}

export interface Theme {
  dark: boolean;
  /** App backgrounds and text. */
  surface: string;
  surfaceAlt: string;
  onSurface: string;
  muted: string;
  divider: string;
  accent: string;
  /** Home-screen wallpaper: a two-colour gradient. */
  wallpaper: [string, string];
  wallpaperVertical: boolean;
}

export interface SettingItem {
  key: string;
  label: string;
  /** Toggle rows have a switch; the others open a sub page and show a summary line. */
  toggle: boolean;
  summary: string;
  glyph: 'wifi' | 'bluetooth' | 'airplane' | 'moon' | 'bell' | 'pin' | 'battery' | 'bolt' | 'gear' | 'phone' | 'globe' | 'sun' | 'share';
  /** Background of the row's round icon: each toggle has its own, as in Android 12+ settings. */
  colour: string;
}

export const TOGGLE_SETTINGS: readonly SettingItem[] = [
  { key: 'wifi', colour: '#1e88e5', label: 'Wi-Fi', toggle: true, summary: '', glyph: 'wifi' },
  { key: 'bluetooth', colour: '#3949ab', label: 'Bluetooth', toggle: true, summary: '', glyph: 'bluetooth' },
  { key: 'airplane', colour: '#fb8c00', label: 'Airplane mode', toggle: true, summary: '', glyph: 'airplane' },
  { key: 'dark', colour: '#546e7a', label: 'Dark theme', toggle: true, summary: '', glyph: 'moon' },
  { key: 'dnd', colour: '#8e24aa', label: 'Do Not Disturb', toggle: true, summary: '', glyph: 'bell' },
  { key: 'location', colour: '#43a047', label: 'Location', toggle: true, summary: '', glyph: 'pin' },
  { key: 'battery_saver', colour: '#fdd835', label: 'Battery Saver', toggle: true, summary: '', glyph: 'battery' },
  { key: 'nfc', colour: '#00897b', label: 'NFC', toggle: true, summary: '', glyph: 'share' },
  { key: 'mobile_data', colour: '#e53935', label: 'Mobile data', toggle: true, summary: '', glyph: 'phone' },
  { key: 'hotspot', colour: '#d81b60', label: 'Hotspot', toggle: true, summary: '', glyph: 'globe' },
  { key: 'autorotate', colour: '#6d4c41', label: 'Auto-rotate', toggle: true, summary: '', glyph: 'bolt' },
];
const PAGE_SETTINGS: readonly SettingItem[] = [
  { key: 'display', colour: '#78909c', label: 'Display', toggle: false, summary: 'Brightness, font size', glyph: 'sun' },
  { key: 'sound', colour: '#78909c', label: 'Sound & vibration', toggle: false, summary: 'Volume, ringtone', glyph: 'bell' },
  { key: 'apps', colour: '#78909c', label: 'Apps', toggle: false, summary: 'Recent apps, defaults', glyph: 'gear' },
  { key: 'storage', colour: '#78909c', label: 'Storage', toggle: false, summary: '43% used', glyph: 'gear' },
  { key: 'security', colour: '#78909c', label: 'Security', toggle: false, summary: 'Screen lock', glyph: 'gear' },
  { key: 'battery', colour: '#78909c', label: 'Battery', toggle: false, summary: '87%', glyph: 'battery' },
  { key: 'notifications', colour: '#78909c', label: 'Notifications', toggle: false, summary: 'History, conversations', glyph: 'bell' },
  { key: 'about', colour: '#78909c', label: 'About phone', toggle: false, summary: 'Pixel', glyph: 'phone' },
];

export const DEVICES = ['Pixel 2', 'Pixel 3', 'Pixel 3a', 'Pixel 4', 'Pixel 5', 'Pixel 6'] as const;
export const API_LEVELS = [28, 29, 30, 31, 32] as const;

/** Everything about one episode's phone that stays fixed while the episode runs. */
export interface World {
  theme: Theme;
  time: string;
  battery: number;
  date: string;
  deviceType: string;
  androidApiLevel: number;
  installed: string[];
  /** Home grid cells, row-major, 4 per row; null = empty cell. */
  home: (string | null)[];
  dock: string[];
  homeSearchAtTop: boolean;
  /** App drawer order (all installed apps). */
  drawer: string[];
  settings: SettingItem[];
  /** Site ids of the Chrome new-tab shortcut tiles. */
  tiles: string[];
  /** The Play Store's catalogue on this phone: third-party apps it lists in results. */
  store: string[];
  /** Apps the Play Store home lists. */
  storeFeatured: string[];
}

const ACCENTS = ['#1a73e8', '#0b8043', '#d93025', '#9334e6', '#e37400', '#007b83', '#c2185b'];
const WALLPAPERS = ['#1b3a4b', '#3d1e6d', '#0f4c3a', '#5c2a1e', '#22313f', '#4a4e69', '#7b2d26', '#16425b', '#2f3e46', '#6a4c93', '#335c67', '#9e2a2b', '#c9ada7', '#e0c3a0', '#a8dadc', '#f4a261'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export const STATUS_H = 12;
export const NAV_H = 10;
export const HOME_CELL_H = 44;
export const DOCK_H = 36;

/** Number of home-grid rows that fit, in layout units (see layout.ts: 1 unit = width / 160 pixels). */
export function homeRows(size: ScreenSize): number {
  const u = size.width / 160;
  const usable = size.height / u - STATUS_H - NAV_H - DOCK_H - 52;
  return Math.max(2, Math.floor(usable / HOME_CELL_H));
}

function makeTheme(rng: Rng): Theme {
  const dark = rng.chance(0.35);
  const [w1, w2] = rng.sample(WALLPAPERS, 2) as [string, string];
  return {
    dark,
    surface: dark ? '#121212' : '#ffffff',
    surfaceAlt: dark ? '#2a2a2e' : '#eef1f6',
    onSurface: dark ? '#e8eaed' : '#202124',
    muted: dark ? '#9aa0a6' : '#5f6368',
    divider: dark ? '#3c4043' : '#dadce0',
    accent: rng.pick(ACCENTS),
    wallpaper: [w1, w2],
    wallpaperVertical: rng.chance(0.5),
  };
}

/**
 * A random phone for one episode: theme, clock, which third-party apps are installed, where every
 * app sits on the home screen and in the drawer, and the order of the settings list. Targets thus
 * have no fixed position across episodes.
 * Only the `apps` split's phone apps exist on it (apps.ts: phoneApps).
 * `mustInstall` apps are installed; `mustNotInstall` ones are left for the Play Store; Chrome shows a
 * shortcut tile for the `mustTile` site.
 */
export function makeWorld(
  rng: Rng,
  size: ScreenSize,
  opts: { apps?: AppSplit; mustInstall?: string[]; mustNotInstall?: string[]; mustTile?: string } = {},
): World {
  const theme = makeTheme(rng);
  const hour = rng.int(1, 12);
  const minute = rng.int(0, 59);
  const catalogue = phoneApps(opts.apps ?? 'seen');
  const store = catalogue.filter((a) => a.kind === 'third_party').map((a) => a.id);
  const never = new Set(opts.mustNotInstall ?? []);
  const extra = rng.sample(
    store.filter((id) => !never.has(id)),
    rng.int(3, 16),
  );
  const preinstalled = catalogue.filter((a) => a.kind !== 'third_party').map((a) => a.id);
  const installed = [...new Set([...preinstalled, ...extra, ...(opts.mustInstall ?? [])])].filter((id) => !never.has(id));

  const dockPool = ['phone', 'messages', 'camera', 'gmail', 'photos', 'maps', 'youtube'];
  // Chrome always sits in the dock, as on stock Pixels, which keeps web tasks within 10 steps.
  const dock = rng.shuffle(['chrome', ...rng.sample(dockPool, 3)]);
  const cells = homeRows(size) * 4;
  const candidates = rng.shuffle(installed.filter((id) => !dock.includes(id)));
  const onHome = candidates.slice(0, rng.int(Math.min(6, cells), Math.min(cells - 2, 16)));
  const home: (string | null)[] = rng.shuffle([...onHome, ...Array<null>(Math.max(0, cells - onHome.length)).fill(null)]);

  const settings = rng.shuffle([...TOGGLE_SETTINGS, ...rng.sample(PAGE_SETTINGS, rng.int(3, 7))]);
  return {
    theme,
    time: `${hour}:${String(minute).padStart(2, '0')}`,
    battery: rng.int(8, 100),
    date: `${rng.pick(DAYS)}, ${rng.pick(MONTHS)} ${rng.int(1, 28)}`,
    deviceType: rng.pick(DEVICES),
    androidApiLevel: rng.pick(API_LEVELS),
    installed,
    home,
    dock,
    homeSearchAtTop: rng.chance(0.5),
    drawer: rng.shuffle(installed),
    settings,
    tiles: tilesWith(rng, rng.sample(SHOP_SITES, rng.int(4, 7)).map((s) => s.id), opts.mustTile),
    store,
    storeFeatured: rng.sample(store, 8),
  };
}

/** The sampled shortcut tiles with `must` swapped in at a random place if it is missing. */
function tilesWith(rng: Rng, tiles: string[], must: string | undefined): string[] {
  if (must === undefined || tiles.includes(must)) return tiles;
  const out = [...tiles];
  out[rng.int(0, out.length - 1)] = must;
  return out;
}

/** Apps visible on the home screen (grid and dock). */
export function homeApps(world: World): string[] {
  return [...world.home.filter((x): x is string => x !== null), ...world.dock];
}

export { APPS, appById };
