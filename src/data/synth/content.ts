import { ICON_BACKGROUNDS, ICON_SHAPES, type IconShape } from './apps.js';
import type { Rng } from '../../util/rng.js';

/** Generated page content: shop products, web results, answer cards and Play Store result lists. */

export interface Product {
  title: string;
  price: string;
  rating: number;
  reviews: number;
  shape: IconShape;
  colour: string;
}

export interface WebResult {
  domain: string;
  title: string;
}

export type AnswerCard =
  | { kind: 'weather'; city: string; temp: number; condition: 'Sunny' | 'Cloudy' | 'Partly cloudy' | 'Rain' }
  | { kind: 'answer'; text: string };

const PRODUCT_SUFFIXES = [
  'Pro',
  'Plus',
  'Ultra',
  '2nd Gen',
  'Wireless',
  'Black',
  'White',
  '(Renewed)',
  'Bundle',
  'Edition',
  'Max',
  'Lite',
];

export function titleCase(s: string): string {
  return s.replace(/\b[a-z]/g, (c) => c.toUpperCase());
}

export function makeProducts(rng: Rng, query: string, n: number): Product[] {
  return Array.from({ length: n }, () => {
    const code = `${String.fromCharCode(65 + rng.int(0, 25))}${rng.int(10, 999)}`;
    return {
      title: `${titleCase(query)} ${code} ${rng.pick(PRODUCT_SUFFIXES)}`,
      price: `$${rng.int(9, 1499)}.${rng.pick(['99', '49', '95', '00'])}`,
      rating: rng.int(30, 50) / 10,
      reviews: rng.int(3, 9000),
      shape: rng.pick(ICON_SHAPES),
      colour: rng.pick(ICON_BACKGROUNDS),
    };
  });
}

const WEB_SITES: readonly [string, string][] = [
  ['en.wikipedia.org', 'Wikipedia'],
  ['www.reddit.com', 'Reddit'],
  ['www.youtube.com', 'YouTube'],
  ['www.nytimes.com', 'The New York Times'],
  ['www.bbc.com', 'BBC'],
  ['www.tripadvisor.com', 'Tripadvisor'],
  ['weather.com', 'The Weather Channel'],
  ['www.accuweather.com', 'AccuWeather'],
  ['www.britannica.com', 'Britannica'],
  ['www.cnn.com', 'CNN'],
  ['www.quora.com', 'Quora'],
  ['www.imdb.com', 'IMDb'],
];
const TITLE_FORMS = [
  (q: string, site: string) => `${titleCase(q)} - ${site}`,
  (q: string, site: string) => `${titleCase(q)}: everything you need to know | ${site}`,
  (q: string, site: string) => `Best ${q} guide - ${site}`,
  (q: string, site: string) => `${site}: ${q}`,
];

export function makeWebResults(rng: Rng, query: string, n: number): WebResult[] {
  return rng.sample(WEB_SITES, n).map(([domain, site]) => ({ domain, title: rng.pick(TITLE_FORMS)(query, site) }));
}

/**
 * Play Store results for a query: the app searched for plus others from the phone's store catalogue,
 * the target usually but not always first.
 */
export function makeStoreResults(rng: Rng, catalogue: readonly string[], target: string | undefined, n: number): string[] {
  const others = rng.sample(
    catalogue.filter((id) => id !== target),
    target ? n - 1 : n,
  );
  if (!target) return others;
  const at = rng.weighted<number>([
    [0, 0.6],
    [1, 0.25],
    [2, 0.15],
  ]);
  others.splice(Math.min(at, others.length), 0, target);
  return others;
}
