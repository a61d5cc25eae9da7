import { appById } from './apps.js';
import { ORDINALS } from './goals.js';
import type { Element } from './layout.js';
import type { Rng } from '../../util/rng.js';
import { drawerHasMore, pageWindow, settingsFit } from './screens.js';
import { fieldOf, splitTarget, type UiEvent, type UiState } from './state.js';
import type { ScreenSize } from './world.js';

/** "single" subset: one-step-ish instructions given on whatever screen a longer task had reached. */

export interface SingleInstruction {
  goal: string;
  events: UiEvent[];
}

const TYPE_TEXTS = ['hello', 'pizza', 'weather', 'best headphones', 'news', 'running shoes', 'jazz', 'flights to paris'];

/** Every instruction that makes sense on this screen; the caller picks one. */
export function singleCandidates(s: UiState, els: Element[], size: ScreenSize, rng: Rng): SingleInstruction[] {
  const out: SingleInstruction[] = [];
  const sc = s.screen;
  const ids = els.map((e) => e.id).filter((x): x is string => !!x);
  const tap = (target: string): UiEvent[] => [{ kind: 'tap', target }];
  const field = fieldOf(sc);

  if (ids.includes('field') && !field?.focused)
    out.push({ goal: rng.pick(['tap the search bar', 'click on the search box', 'Tap on the search field', 'select the search bar']), events: tap('field') });
  if (ids.includes('home_search'))
    out.push({ goal: rng.pick(['tap the google search bar', 'click on the search widget', 'Tap the search bar']), events: tap('home_search') });
  if (field?.focused && field.text === '') {
    const text = rng.pick(TYPE_TEXTS);
    out.push({ goal: rng.pick([`type "${text}"`, `Type '${text}'`, `enter ${text}`]), events: [{ kind: 'type', text }] });
    out.push({ goal: rng.pick([`search for ${text}`, `Search for "${text}"`]), events: [{ kind: 'type', text }, { kind: 'enter' }] });
  }
  if (field?.focused && field.text !== '')
    out.push({ goal: rng.pick(['press enter', 'hit enter', 'Press the enter key', 'submit the search']), events: [{ kind: 'enter' }] });

  const canScroll =
    (sc.kind === 'drawer' && drawerHasMore(s.world, size, sc.page)) ||
    (sc.kind === 'settings' && pageWindow(s.world.settings.length, settingsFit({ H: size.height / (size.width / 160) }), sc.page)[1] < s.world.settings.length) ||
    (sc.kind === 'web_results' && !ids.includes(`result:${sc.results.length - 1}`)) ||
    (sc.kind === 'shop_results' && !ids.includes(`add:${sc.products.length - 1}`));
  if (canScroll) out.push({ goal: rng.pick(['scroll down', 'Scroll down', 'swipe up', 'scroll down the page']), events: [{ kind: 'swipe', dir: 'up' }] });
  if ('page' in sc && sc.page > 0) out.push({ goal: rng.pick(['scroll up', 'Scroll up', 'swipe down']), events: [{ kind: 'swipe', dir: 'down' }] });
  if (sc.kind === 'home') out.push({ goal: rng.pick(['open the app drawer', 'swipe up to see all apps', 'show all apps']), events: [{ kind: 'swipe', dir: 'up' }] });
  if (sc.kind !== 'home') {
    out.push({ goal: rng.pick(['go back', 'Go back', 'press back', 'navigate back']), events: [{ kind: 'back' }] });
    out.push({ goal: rng.pick(['go to the home screen', 'press home', 'Go home', 'return to the home screen']), events: [{ kind: 'home' }] });
  }
  for (const id of ids) {
    const [kind, arg = ''] = splitTarget(id);
    if (kind === 'app') {
      const name = appById(arg).name;
      out.push({ goal: rng.pick([`open ${name}`, `Open ${name}`, `tap on the ${name} icon`, `launch ${name}`]), events: tap(id) });
    } else if (kind === 'result' && Number(arg) < ORDINALS.length) {
      out.push({ goal: rng.pick([`click on the ${ORDINALS[Number(arg)]} result`, `Open the ${ORDINALS[Number(arg)]} search result`]), events: tap(id) });
    } else if (kind === 'add' && arg !== '' && Number(arg) < ORDINALS.length) {
      out.push({ goal: rng.pick([`add the ${ORDINALS[Number(arg)]} item to the cart`, `Add the ${ORDINALS[Number(arg)]} result to cart`]), events: tap(id) });
    } else if (kind === 'add') {
      out.push({ goal: rng.pick(['click add to cart', 'Add this to the cart']), events: tap(id) });
    } else if (kind === 'product' && Number(arg) < ORDINALS.length) {
      out.push({ goal: rng.pick([`click on the ${ORDINALS[Number(arg)]} item`, `open the ${ORDINALS[Number(arg)]} product`]), events: tap(id) });
    } else if (kind === 'toggle') {
      const item = s.world.settings.find((x) => x.key === arg)!;
      const on = s.toggles[arg] ?? false;
      out.push({ goal: `${on ? 'turn off' : 'turn on'} ${rng.pick([item.label, item.label.toLowerCase()])}`, events: tap(id) });
    } else if (kind === 'install') {
      const name = appById(arg).name;
      out.push({ goal: rng.pick([`install ${name}`, `click install`, `tap Install`]), events: tap(id) });
    } else if (kind === 'cart') {
      out.push({ goal: rng.pick(['open the cart', 'view the cart', 'tap the cart icon']), events: tap(id) });
    } else if (kind === 'store_item') {
      out.push({ goal: `open the ${appById(arg).name} page`, events: tap(id) });
    }
  }
  return out;
}

