/**
 * Records a gold trajectory while executing it: before every action the screen is captured as it
 * is (the step's observation), then the action is written in AITW form and performed for real.
 * Taps are DUAL_POINT with touch = lift at the target's box centre; a swipe is DUAL_POINT from
 * (0.75, 0.5) to (0.25, 0.5), performed as a finger swipe, so the next screen shows where a real
 * swipe leaves the page.
 */
import { scalePoint } from '../geometry.js';
import { ActionType, type AitwAction, type YX } from '../types.js';
import type { CssBox } from './annotate.js';
import { round4 } from './annotate.js';
import type { PhoneScreen, Shot } from './browser.js';
import { hits, type TapTarget, type ViewState } from './dom.js';

export interface GoldStep {
  shot: Shot;
  action: AitwAction;
}

/** Screens already captured in one context, keyed by URL, scroll offset and form state. */
export type ShotCache = Map<string, Shot>;

export const SWIPE_FROM: YX = [0.75, 0.5];
export const SWIPE_TO: YX = [0.25, 0.5];
const NONE: YX = [-1, -1];

const act = (action_type: AitwAction['action_type'], typed_text = ''): AitwAction => ({ action_type, touch_yx: [...NONE], lift_yx: [...NONE], typed_text });

/** A tap at the centre of `box` (CSS px) on a `width`×`height` viewport, normalised as AITW stores it. */
export function tapAction(box: CssBox, width: number, height: number): AitwAction {
  const yx: YX = [round4((box.y + box.h / 2) / height), round4((box.x + box.w / 2) / width)];
  return { action_type: ActionType.DUAL_POINT, touch_yx: yx, lift_yx: [...yx], typed_text: '' };
}

export class Recorder {
  readonly steps: GoldStep[] = [];

  constructor(
    readonly screen: PhoneScreen,
    private readonly cache: ShotCache,
  ) {}

  /** The current screen, from the cache when this exact state was captured before. */
  async shot(): Promise<Shot> {
    const view = await this.screen.view();
    const key = `${view.url}|${view.pageX},${view.pageY}|${view.formState}`;
    let s = this.cache.get(key);
    if (!s) this.cache.set(key, (s = await this.screen.capture(view)));
    return s;
  }

  private async record(action: AitwAction): Promise<Shot> {
    const shot = await this.shot();
    this.steps.push({ shot, action });
    return shot;
  }

  /**
   * Taps the centre of `box` if that point reaches `target`; false (nothing recorded) when
   * something else would receive the tap.
   */
  async tap(box: CssBox, target: TapTarget, navigates: boolean): Promise<boolean> {
    const view = await this.screen.view();
    if (!(await this.reaches(box, target, view))) return false;
    await this.record(tapAction(box, view.width, view.height));
    await this.screen.tap(box.x + box.w / 2, box.y + box.h / 2, navigates);
    return true;
  }

  /** Whether a tap at the centre of `box` would reach `target` (on screen, and nothing else on top); `view`: the screen's, when the caller has it. */
  async reaches(box: CssBox, target: TapTarget, view?: ViewState): Promise<boolean> {
    const x = box.x + box.w / 2;
    const y = box.y + box.h / 2;
    view ??= await this.screen.view();
    // A page wider than the phone lays links out past the right edge: the phone cannot tap those.
    if (x < 0 || x > view.width || y < 0 || y > view.height) return false;
    return this.screen.page.evaluate(hits, { x, y, target });
  }

  /** One swipe up (content moves up, revealing what is below); returns how far the page moved. */
  async swipeUp(): Promise<number> {
    const before = await this.screen.view();
    await this.record({ action_type: ActionType.DUAL_POINT, touch_yx: [...SWIPE_FROM], lift_yx: [...SWIPE_TO], typed_text: '' });
    await this.screen.swipe(scalePoint(SWIPE_FROM, before.width, before.height), scalePoint(SWIPE_TO, before.width, before.height));
    return (await this.screen.view()).pageY - before.pageY;
  }

  async type(text: string): Promise<void> {
    await this.record(act(ActionType.TYPE, text));
    await this.screen.type(text);
  }

  async enter(navigates: boolean): Promise<void> {
    await this.record(act(ActionType.PRESS_ENTER));
    await this.screen.enter(navigates);
  }

  async back(): Promise<void> {
    await this.record(act(ActionType.PRESS_BACK));
    await this.screen.back();
  }

  /** PRESS_HOME, performed as the environment does: open the task's home page (`url`). */
  async home(url: string): Promise<void> {
    await this.record(act(ActionType.PRESS_HOME));
    await this.screen.goto(url);
  }

  async complete(): Promise<void> {
    await this.record(act(ActionType.STATUS_TASK_COMPLETE));
  }
}
