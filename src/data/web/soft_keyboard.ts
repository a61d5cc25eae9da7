/**
 * The phone's on-screen keyboard. A phone shows one whenever a text field has focus, and it is the
 * clearest sign on a screen that the next action is typing (AITW's screenshots show Gboard under
 * every TYPE; the synthetic screens draw one too). Headless Chromium draws none, so a focused
 * field and an unfocused one look alike; this script, installed in every page of a phone context
 * (the web recorder's and the closed-loop environment's), draws a Gboard-style keyboard over the
 * bottom of the viewport while an editable element has focus. Like a real keyboard it takes the
 * touches that land on it (so the recorder never taps what it hides) and hides what is under it.
 * Hand-written: no npm library draws a phone keyboard into an arbitrary page.
 */
import type { BrowserContext, Page } from 'playwright-core';

/** Marks the overlay; annotate.ts keeps the keyboard's own keys and drops what lies under it. */
export const SOFT_KEYBOARD_ATTR = 'data-autoui-keyboard';

/** Gboard's letter rows; with the suggestion strip and the bottom row the keyboard is ~300 CSS px high, ~0.3 of a 915-px phone. */
const ROWS = ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'];

/**
 * Runs in the page (serialised by Playwright's addInitScript, so self-contained): shows the
 * keyboard on focus of an editable element and removes it when focus leaves.
 */
export function installSoftKeyboard(arg: { attr: string; rows: string[] }): void {
  const editable = (e: EventTarget | null): boolean => {
    if (e instanceof HTMLTextAreaElement) return !e.readOnly && !e.disabled;
    if (e instanceof HTMLInputElement)
      return !e.readOnly && !e.disabled && /^(text|search|email|tel|url|password|number)$/.test(e.type || 'text');
    return e instanceof HTMLElement && e.isContentEditable;
  };
  let board: HTMLElement | null = null;
  // Inline styles: they win over the page's own stylesheet, whatever its selectors.
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const colours = dark
    ? { board: '#202124', text: '#e8eaed', key: '#3c4043', wide: '#5f6368', go: '#a8c7fa', goText: '#062e6f' }
    : { board: '#e8eaed', text: '#202124', key: '#ffffff', wide: '#c9ccd1', go: '#0b57d0', goText: '#ffffff' };
  const build = (): HTMLElement => {
    const kb = document.createElement('div');
    kb.setAttribute(arg.attr, '');
    kb.style.cssText = `position:fixed;box-sizing:border-box;transform-origin:top left;z-index:2147483647;display:flex;flex-direction:column;gap:10px;margin:0;
      padding:6px 4px 14px;background:${colours.board};color:${colours.text};font:400 22px Roboto,'DejaVu Sans',sans-serif;touch-action:none`;
    const row = (keys: [string, string][], height = 46): void => {
      const r = document.createElement('div');
      r.style.cssText = `display:flex;justify-content:center;gap:5px;margin:0;padding:0;height:${height}px`;
      for (const [label, kind] of keys) {
        const k = document.createElement('div');
        k.textContent = label;
        const basis = kind === 'space' ? '50%' : kind ? 'calc(15% - 5px)' : 'calc(10% - 5px)';
        const bg = kind === 'wide' ? colours.wide : kind === 'go' ? colours.go : colours.key;
        k.style.cssText = `display:flex;align-items:center;justify-content:center;flex:0 0 ${basis};height:100%;margin:0;padding:0;border-radius:6px;
          background:${bg};color:${kind === 'go' ? colours.goText : 'inherit'};font-size:${kind === 'wide' ? 16 : 22}px;box-shadow:0 1px 0 #00000033`;
        r.append(k);
      }
      kb.append(r);
    };
    row([], 34); // the suggestion strip, empty before anything is typed
    arg.rows.forEach((letters, i) => {
      const keys: [string, string][] = [...letters].map((c) => [c, '']);
      row(i === 2 ? [['⇧', 'wide'], ...keys, ['⌫', 'wide']] : keys);
    });
    row([['?123', 'wide'], [',', ''], [' ', 'space'], ['.', ''], ['↵', 'go']]);
    // The keyboard takes its touches, as a real one does (and keeps the field focused); a tap on it types nothing here.
    for (const t of ['touchstart', 'touchend', 'mousedown', 'click'] as const) kb.addEventListener(t, (ev) => ev.preventDefault());
    return kb;
  };
  // A keyboard sits at the bottom of the screen, not of the page's layout viewport (which a page
  // without a mobile viewport tag makes larger than the screen): pin it to the visual viewport,
  // at the screen's own scale whatever the page's zoom.
  const place = (): void => {
    const vv = window.visualViewport;
    if (!board || !vv) return;
    board.style.left = `${vv.offsetLeft}px`;
    board.style.top = `${vv.offsetTop + vv.height}px`;
    board.style.width = `${vv.width * vv.scale}px`;
    board.style.transform = `scale(${1 / vv.scale}) translateY(-100%)`;
  };
  const sync = (): void => {
    const show = editable(document.activeElement);
    if (show && !board && document.body) {
      document.body.append((board = build()));
      place();
    }
    if (!show && board) {
      board.remove();
      board = null;
    }
  };
  window.visualViewport?.addEventListener('resize', place);
  window.visualViewport?.addEventListener('scroll', place);
  document.addEventListener('focusin', sync, true);
  // focusout fires before the next element takes focus: look once focus has settled.
  document.addEventListener('focusout', () => setTimeout(sync, 0), true);
}

/** Installs the keyboard in every page the context opens from now on. */
export async function addSoftKeyboard(ctx: BrowserContext): Promise<void> {
  await ctx.addInitScript(installSoftKeyboard, { attr: SOFT_KEYBOARD_ATTR, rows: ROWS });
}

/**
 * Android's BACK with the keyboard up closes the keyboard and goes nowhere: when it is showing, the
 * field loses focus (and the keyboard with it). True when there was a keyboard to close.
 */
export function closeSoftKeyboard(page: Page): Promise<boolean> {
  return page.evaluate((attr) => {
    if (!document.querySelector(`[${attr}]`)) return false;
    (document.activeElement as HTMLElement | null)?.blur();
    return true;
  }, SOFT_KEYBOARD_ATTR);
}
