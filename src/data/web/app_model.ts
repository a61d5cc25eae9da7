/**
 * What a generated phone "app" site holds, drawn from a seed: a launcher, a settings app with
 * switches (and sub-pages), a contacts list with a search field and detail pages, a form, and a few
 * simple apps. Names, labels, colours and initial switch states differ per site, so whole sites can
 * be held out. Pure data; app_pages.ts turns it into HTML.
 */
import { Rng } from '../../util/rng.js';

export interface AppSiteSpec {
  site: string;
  brand: string;
  /** Seed colour of the Material 3 palette. */
  color: string;
}

/** Five sites; DEFAULT_HELD_OUT keeps the last one for test only. */
export const APP_SITES: readonly AppSiteSpec[] = [
  { site: 'app-aurora', brand: 'Aurora', color: '#6750a4' },
  { site: 'app-nimbus', brand: 'Nimbus', color: '#0b6e4f' },
  { site: 'app-pebble', brand: 'Pebble', color: '#b3261e' },
  { site: 'app-tangerine', brand: 'Tangerine', color: '#8b5000' },
  { site: 'app-quartz', brand: 'Quartz', color: '#006493' },
];

export interface Switch {
  id: string;
  label: string;
  icon: string;
  on: boolean;
}

export interface SettingsPage {
  file: string;
  title: string;
  icon: string;
  switches: Switch[];
}

export interface Contact {
  file: string;
  name: string;
  phone: string;
  email: string;
}

export interface FormField {
  id: string;
  label: string;
  kind: 'text' | 'tel' | 'email';
}

export interface LauncherEntry {
  label: string;
  icon: string;
  file: string;
}

export interface SimpleApp {
  file: string;
  title: string;
  icon: string;
  lines: string[];
}

export interface AppModel {
  spec: AppSiteSpec;
  launcher: LauncherEntry[];
  settings: { title: string; main: SettingsPage; subpages: SettingsPage[] };
  contacts: { title: string; file: string; searchPlaceholder: string; people: Contact[] };
  form: { title: string; file: string; fields: FormField[]; save: string };
  simple: SimpleApp[];
}

const SETTINGS_TITLES = ['Settings', 'Preferences', 'Device settings', 'System'];
const CONTACTS_TITLES = ['Contacts', 'People', 'Address book', 'Phonebook'];
const FORM_TITLES = ['New contact', 'Add contact', 'Create contact', 'Add person'];
const SEARCH_HINTS = ['Search contacts', 'Search people', 'Find a contact', 'Search'];
const SAVE_LABELS = ['Save', 'Done', 'Create', 'Add'];

/** [label, icon]: every switch a settings page may hold. */
const SWITCHES: readonly (readonly [string, string])[] = [
  ['Wi-Fi', 'wifi'], ['Bluetooth', 'bluetooth'], ['Airplane mode', 'flight'], ['Mobile data', 'signal_cellular_alt'],
  ['Location', 'location_on'], ['Dark theme', 'dark_mode'], ['Battery saver', 'battery_saver'], ['Do not disturb', 'do_not_disturb_on'],
  ['Auto-rotate', 'screen_rotation'], ['NFC', 'nfc'], ['Hotspot', 'wifi_tethering'], ['Vibrate on tap', 'vibration'],
  ['Night light', 'nightlight'], ['Data saver', 'data_saver_on'], ['Auto-update apps', 'update'], ['Backup', 'backup'],
  ['Sync', 'sync'], ['Keyboard sounds', 'keyboard'], ['Adaptive brightness', 'brightness_auto'], ['Show notifications', 'notifications'],
  ['Screen lock', 'lock'], ['Caption', 'closed_caption'], ['Live transcribe', 'hearing'], ['Nearby share', 'share'],
  ['Auto time zone', 'schedule'], ['Usage reports', 'analytics'], ['Hands-free', 'mic'], ['Smart reply', 'chat'],
];

const SUBPAGES: readonly (readonly [string, string])[] = [
  ['Display', 'light_mode'], ['Sound', 'volume_up'], ['Network', 'language'], ['Privacy', 'shield'], ['Accessibility', 'accessibility'], ['Battery', 'battery_full'],
];

const FIRST = ['Ada', 'Ben', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kavya', 'Liam', 'Maya', 'Noah', 'Olga', 'Pablo', 'Quinn', 'Rosa', 'Sami', 'Tara', 'Uma', 'Victor', 'Wen', 'Yusuf', 'Zoe'];
const LAST = ['Adams', 'Bauer', 'Costa', 'Dubois', 'Evans', 'Fischer', 'Garcia', 'Haddad', 'Ito', 'Jensen', 'Kowalski', 'Lopez', 'Moreau', 'Nakamura', 'Okafor', 'Patel', 'Rossi', 'Silva', 'Tanaka', 'Novak', 'Weber', 'Young'];

const SIMPLE: readonly (readonly [string, string, readonly string[]])[] = [
  ['Weather', 'partly_cloudy_day', ['Today 18° partly cloudy', 'Tomorrow 21° sunny', 'Wind 12 km/h', 'Humidity 64 %']],
  ['Music', 'music_note', ['Recently played', 'Morning mix', 'Focus beats', 'Top hits this week']],
  ['Camera', 'photo_camera', ['Photo', 'Video', 'Portrait', 'Night sight']],
  ['Calendar', 'calendar_month', ['Team meeting 10:00', 'Lunch with Sam 12:30', 'Dentist 16:00', 'No events tomorrow']],
  ['Clock', 'schedule', ['Alarm 07:00', 'Alarm 07:30', 'Timer', 'Stopwatch']],
  ['Maps', 'map', ['Home', 'Work', 'Saved places', 'Recent searches']],
  ['Mail', 'mail', ['Inbox', 'Starred', 'Sent', 'Drafts']],
  ['Photos', 'photo_library', ['Recent', 'Favourites', 'Albums', 'Shared']],
  ['Files', 'folder', ['Downloads', 'Documents', 'Images', 'Audio']],
  ['Notes', 'sticky_note_2', ['Shopping list', 'Ideas', 'Trip plan', 'Books to read']],
  ['Calculator', 'calculate', ['History', 'Scientific', 'Unit converter', 'Currency']],
  ['Podcasts', 'podcasts', ['New episodes', 'Subscriptions', 'Downloads', 'Queue']],
];

const slug = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');

function settingsPages(rng: Rng): { main: SettingsPage; subpages: SettingsPage[] } {
  const pool = rng.shuffle(SWITCHES);
  const take = (n: number): Switch[] => pool.splice(0, n).map(([label, icon]) => ({ id: `sw-${slug(label)}`, label, icon, on: rng.chance(0.5) }));
  const title = rng.pick(SETTINGS_TITLES);
  const main: SettingsPage = { file: 'settings.html', title, icon: 'settings', switches: take(rng.int(10, 13)) };
  const subpages = rng.sample(SUBPAGES, 3).map(([t, icon]) => ({ file: `settings-${slug(t)}.html`, title: t, icon, switches: take(rng.int(3, 5)) }));
  return { main, subpages };
}

function people(rng: Rng): Contact[] {
  const names = new Set<string>();
  while (names.size < 24) names.add(`${rng.pick(FIRST)} ${rng.pick(LAST)}`);
  return [...names].sort().map((name, i) => ({
    file: `contact-${i + 1}.html`,
    name,
    phone: `+1 555 ${rng.digits(3)} ${rng.digits(4)}`,
    email: `${slug(name).replace('-', '.')}@example.org`,
  }));
}

/** The whole model of one app site; same spec and seed → same model. */
export function appModel(spec: AppSiteSpec, seed: number): AppModel {
  const rng = Rng.from('autoui-web-app', seed, spec.site);
  const settings = { ...settingsPages(rng.fork('settings')), title: '' };
  settings.title = settings.main.title;
  const contacts = { title: rng.pick(CONTACTS_TITLES), file: 'contacts.html', searchPlaceholder: rng.pick(SEARCH_HINTS), people: people(rng.fork('people')) };
  const form = {
    title: rng.pick(FORM_TITLES),
    file: 'new-contact.html',
    save: rng.pick(SAVE_LABELS),
    fields: [
      { id: 'f-name', label: rng.pick(['Name', 'Full name']), kind: 'text' as const },
      { id: 'f-phone', label: rng.pick(['Phone', 'Phone number', 'Mobile']), kind: 'tel' as const },
      { id: 'f-email', label: rng.pick(['Email', 'E-mail', 'Email address']), kind: 'email' as const },
      { id: 'f-company', label: rng.pick(['Company', 'Organisation', 'Work']), kind: 'text' as const },
    ],
  };
  const simple = rng.sample(SIMPLE, rng.int(6, 9)).map(([title, icon, lines]) => ({ file: `${slug(title)}.html`, title, icon, lines: [...lines] }));
  const launcher = rng.shuffle([
    { label: settings.title, icon: 'settings', file: settings.main.file },
    { label: contacts.title, icon: 'contacts', file: contacts.file },
    { label: form.title, icon: 'person_add', file: form.file },
    ...simple.map((s) => ({ label: s.title, icon: s.icon, file: s.file })),
  ]);
  return { spec, launcher, settings, contacts, form, simple };
}
