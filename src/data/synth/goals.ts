import type { AppInfo } from './apps.js';
import type { Rng } from '../../util/rng.js';

/** Goal phrasing: several templates per intent, so models cannot key on one wording. */

export function openAppGoal(rng: Rng, app: AppInfo): string {
  const n = rng.pick([app.name, app.name, app.name.toLowerCase()]);
  return rng.pick([
    `Open the ${n} app`,
    `open ${n}`,
    `Open ${n}`,
    `launch the ${n} app`,
    `Launch ${n}`,
    `go to ${n}`,
    `start ${n}`,
    `open the ${n.toLowerCase()} app`,
  ]);
}

export const CITIES = ['Paris', 'London', 'Tokyo', 'New York', 'Berlin', 'Sydney', 'Toronto', 'Madrid', 'Rome', 'Chicago', 'Seoul', 'Mumbai', 'Cairo', 'Lisbon', 'Denver', 'Boston'];
const QUESTIONS = [
  'how tall is the eiffel tower',
  'who won the world cup in 2018',
  'what is the capital of australia',
  'how many ounces in a cup',
  'when does the sun set today',
  'what time is it in tokyo',
  'how far is the moon',
  'who wrote pride and prejudice',
  'what is the population of canada',
  'how to make pancakes',
  'best pizza near me',
  'cheap flights to miami',
  'news about the stock market',
  'hotels in barcelona',
];

/** A web search: the goal and the query the oracle types. */
export function webSearchGoal(rng: Rng): { goal: string; query: string } {
  if (rng.chance(0.4)) {
    const city = rng.pick(CITIES);
    const query = `weather in ${city.toLowerCase()}`;
    const goal = rng.pick([
      `What's the weather in ${city}?`,
      `what's the weather like in ${city}?`,
      `Check the weather in ${city}`,
      `show me the weather for ${city}`,
      `How is the weather in ${city}?`,
    ]);
    return { goal, query };
  }
  const query = rng.pick(QUESTIONS);
  const goal = rng.pick([`Search for "${query}"`, `search for ${query} on google`, `${query}?`, `Google "${query}"`, `look up ${query}`]);
  return { goal, query };
}

export function toggleGoal(rng: Rng, label: string, on: boolean): string {
  const l = rng.pick([label, label.toLowerCase()]);
  return on
    ? rng.pick([`turn on ${l}`, `Turn ${l} on`, `enable ${l}`, `Switch on ${l}`, `turn ${l} on in settings`])
    : rng.pick([`turn off ${l}`, `Turn ${l} off`, `disable ${l}`, `Switch off ${l}`, `turn ${l} off in settings`]);
}

export function installGoal(rng: Rng, app: AppInfo): string {
  return rng.pick([
    `install ${app.name}`,
    `Install the ${app.name} app`,
    `download ${app.name} from the play store`,
    `Get ${app.name} from the Play Store`,
    `install ${app.name.toLowerCase()} app`,
    `Open the play store and install ${app.name}`,
  ]);
}

export const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth'];

export const PRODUCT_QUERIES = [
  'lg ultragear',
  'logitech g pro',
  'razer blade 15',
  'macbook air',
  'sony wh-1000xm4',
  'duracell batteries',
  'usb-c cable',
  'corsair k70',
  'alienware monitor',
  'bose soundlink',
  'jbl flip 5',
  'acer predator',
  'dell xps 13',
  'asus rog',
  'samsung galaxy s23',
  'nintendo switch',
  'apple airpods',
  'anker power bank',
  'kindle paperwhite',
  'instant pot',
  'dyson v11',
  'energizer aa',
  'hp laserjet',
  'canon eos',
];

export function shoppingGoal(rng: Rng, domain: string, query: string, nth: number, viewCart: boolean): string {
  const ord = ORDINALS[nth]!;
  const base = rng.pick([
    `Go to ${domain}, search for "${query}", and add the ${ord} result to the cart.`,
    `Search for '${query}' on ${domain.replace('.com', '')}, select the ${ord} entry, and add it to the cart`,
    `add the ${ord} result for "${query}" on ${domain} to my cart`,
    `Open ${domain}, look up ${query} and add the ${ord} item to the cart`,
  ]);
  return viewCart ? `${base.replace(/\.$/, '')}, then view the cart` : base;
}

export function appSearchGoal(rng: Rng, app: AppInfo, query: string): string {
  return rng.pick([
    `search for '${query}' in ${app.name}`,
    `Open ${app.name} and search for ${query}`,
    `find ${query} on ${app.name}`,
    `Search ${app.name} for "${query}"`,
  ]);
}

export const APP_QUERIES: Record<string, string[]> = {
  youtube: ['lofi music', 'cooking tutorial', 'cat videos', 'news today'],
  maps: ['coffee shops', 'gas station', 'pharmacy', 'italian restaurant'],
  gmail: ['invoice', 'flight', 'receipt', 'meeting'],
  drive: ['budget', 'resume', 'photos', 'notes'],
  photos: ['beach', 'dog', 'birthday', 'sunset'],
  contacts: ['alice', 'david', 'mom', 'office'],
  spotify: ['taylor swift', 'jazz', 'workout mix', 'podcasts'],
  netflix: ['stranger things', 'comedy', 'documentary', 'the crown'],
  amazon: ['phone case', 'headphones', 'coffee maker', 'backpack'],
};

export function siteGoal(rng: Rng, domain: string): string {
  return rng.pick([`go to ${domain}`, `Open ${domain}`, `visit ${domain} in chrome`, `Go to ${domain} in the browser`]);
}
