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

/** The three ways into a web search: the home screen's search widget, the Google app, or Chrome. */
export type SearchRoute = 'widget' | 'google' | 'chrome';

/**
 * A web search: the goal, the query the oracle types, and the route it takes. The route is read
 * off the goal's wording ("… in Chrome", "… on google", or neither for the widget), as a
 * demonstrator following the instruction would: a route drawn independently of the goal would put
 * a coin flip no input reveals into every search episode's first step.
 */
export function webSearchGoal(rng: Rng): { goal: string; query: string; via: SearchRoute } {
  const via = rng.pick(['widget', 'google', 'chrome'] as const);
  if (rng.chance(0.4)) {
    const city = rng.pick(CITIES);
    const query = `weather in ${city.toLowerCase()}`;
    const goal = rng.pick(
      {
        widget: [`What's the weather in ${city}?`, `what's the weather like in ${city}?`, `How is the weather in ${city}?`],
        google: [`Check the weather in ${city} on google`, `use the Google app to check the weather in ${city}`],
        chrome: [`show me the weather for ${city} in Chrome`, `check the weather in ${city} using the browser`],
      }[via],
    );
    return { goal, query, via };
  }
  const query = rng.pick(QUESTIONS);
  const goal = rng.pick(
    {
      widget: [`${query}?`, `look up ${query}`, `Search for "${query}"`],
      google: [`search for ${query} on google`, `Google "${query}"`, `open the Google app and search for ${query}`],
      chrome: [`search for ${query} in chrome`, `look up ${query} in the browser`, `Open Chrome and search for "${query}"`],
    }[via],
  );
  return { goal, query, via };
}

export function toggleGoal(rng: Rng, label: string, on: boolean): string {
  const l = rng.pick([label, label.toLowerCase()]);
  return on
    ? rng.pick([`turn on ${l}`, `Turn ${l} on`, `enable ${l}`, `Switch on ${l}`, `turn ${l} on in settings`])
    : rng.pick([`turn off ${l}`, `Turn ${l} off`, `disable ${l}`, `Switch off ${l}`, `turn ${l} off in settings`]);
}

/** Install goals; `viaPage` ones ask for the app's page first, so the oracle opens it before installing. */
export function installGoal(rng: Rng, app: AppInfo, viaPage: boolean): string {
  return rng.pick(
    viaPage
      ? [`open the ${app.name} page in the play store and install it`, `Find ${app.name} in the Play Store, open its page and install it`]
      : [
          `install ${app.name}`,
          `Install the ${app.name} app`,
          `download ${app.name} from the play store`,
          `Get ${app.name} from the Play Store`,
          `install ${app.name.toLowerCase()} app`,
          `Open the play store and install ${app.name}`,
        ],
  );
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

/** Shopping goals; `viaPage` ones ask to open the product first, so the oracle adds it from its page. */
export function shoppingGoal(rng: Rng, domain: string, query: string, nth: number, viewCart: boolean, viaPage: boolean): string {
  const ord = ORDINALS[nth]!;
  const base = rng.pick(
    viaPage
      ? [
          `Go to ${domain}, search for "${query}", open the ${ord} result and add it to the cart.`,
          `Search for '${query}' on ${domain.replace('.com', '')}, open the ${ord} product page, and add it to the cart`,
        ]
      : [
          `Go to ${domain}, search for "${query}", and add the ${ord} result to the cart.`,
          `add the ${ord} result for "${query}" on ${domain} to my cart`,
          `Open ${domain}, look up ${query} and add the ${ord} item to the cart`,
        ],
  );
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

/**
 * In-app search queries by app id: the targets of app-search tasks. Entries for held-out apps
 * (apps.ts: UNSEEN_APP_IDS) are only drawn by unseen-app sets.
 */
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
  keep: ['shopping list', 'recipes', 'packing', 'ideas'],
  recorder: ['lecture', 'interview', 'voice memo', 'meeting'],
  pinterest: ['home decor', 'garden ideas', 'outfits', 'recipes'],
  audible: ['mystery', 'self help', 'history', 'sci-fi'],
  expedia: ['hotels in rome', 'flights to tokyo', 'beach resorts', 'car rental'],
  etsy: ['handmade mug', 'silver ring', 'wall art', 'gift box'],
};

/** Site goals; `viaTile` ones name Chrome's shortcut, so the oracle taps the tile instead of typing. */
export function siteGoal(rng: Rng, domain: string, viaTile: boolean): string {
  return rng.pick(
    viaTile
      ? [`open ${domain} from the chrome shortcuts`, `Go to ${domain} using its shortcut in Chrome`]
      : [`go to ${domain}`, `Open ${domain}`, `visit ${domain} in chrome`, `Go to ${domain} in the browser`],
  );
}
