import { SUBSETS, type AitwAction, type AitwStep, type Subset } from '../types.js';
import { completeAction, backAction, enterAction, homeAction, swipeAction, tapAction, typeAction } from './actions.js';
import { LAUNCHER_ACTIVITY, appById, type AppSplit } from './apps.js';
import type { Rect } from './layout.js';
import { SUBSET_FAMILIES, drawTask, familiesFor, nextEvent, type Family, type Task } from './oracle.js';
import { rasterizeScreen } from './raster.js';
import { Rng } from '../../util/rng.js';
import { layoutScreen } from './screens.js';
import { singleCandidates } from './single.js';
import { applyEvent, initialState, launchScreen, type UiEvent, type UiState } from './state.js';
import { makeWorld, type ScreenSize } from './world.js';

/** Bumped whenever generated output changes for the same arguments (recorded in synth.json). */
export const GENERATOR_VERSION = 3;
export const MIN_STEPS = 2;
export const MAX_STEPS = 10;

export interface TraceStep {
  state: UiState;
  event: UiEvent | null;
  action: AitwAction;
  /** Pixel box of the tapped element (taps only). */
  target?: Rect;
  targetId?: string;
}

/** An episode before rendering: every state the oracle saw and the gold action it took there. */
export interface EpisodeTrace {
  episodeId: string;
  subset: Subset;
  goal: string;
  steps: TraceStep[];
}

function actionFor(s: UiState, ev: UiEvent, size: ScreenSize, rng: Rng): { action: AitwAction; target?: Rect } {
  switch (ev.kind) {
    case 'tap': {
      const el = layoutScreen(s, size).find((e) => e.id === ev.target);
      if (!el) throw new Error(`oracle tapped '${ev.target}', which is not on the ${s.screen.kind} screen`);
      return { action: tapAction(el.rect, size, rng), target: el.rect };
    }
    case 'swipe':
      return { action: swipeAction(ev.dir, rng) };
    case 'type':
      return { action: typeAction(ev.text) };
    case 'enter':
      return { action: enterAction() };
    case 'back':
      return { action: backAction() };
    case 'home':
      return { action: homeAction() };
  }
}

/** AITW's `current_activity` for a state. */
export function activityOf(s: UiState): string {
  const sc = s.screen;
  const inChrome = [s.screen, ...s.stack].some((x) => x.kind === 'browser' || x.kind.startsWith('shop_'));
  switch (sc.kind) {
    case 'home':
    case 'drawer':
      return LAUNCHER_ACTIVITY;
    case 'app':
      return `${appById(sc.app).package}/.MainActivity`;
    case 'settings':
      return 'com.android.settings/.Settings';
    case 'google':
      return 'com.google.android.googlequicksearchbox/com.google.android.apps.search.googleapp.activity.GoogleAppActivity';
    case 'web_results':
    case 'webpage':
      return inChrome
        ? 'com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity'
        : 'com.google.android.googlequicksearchbox/com.google.android.apps.search.googleapp.activity.GoogleAppActivity';
    case 'browser':
    case 'shop_home':
    case 'shop_results':
    case 'shop_product':
    case 'shop_cart':
      return 'com.android.chrome/org.chromium.chrome.browser.ChromeTabbedActivity';
    case 'store_home':
    case 'store_results':
    case 'store_app':
      return 'com.android.vending/com.google.android.finsky.activities.MainActivity';
  }
}

function startState(task: Task, size: ScreenSize, apps: AppSplit, rng: Rng): UiState {
  const world = makeWorld(rng.fork('world'), size, { apps, mustInstall: task.mustInstall, mustNotInstall: task.mustNotInstall, mustTile: task.mustTile });
  const s = initialState(world, rng.fork('toggles'));
  // AITW episodes often begin inside some app; the oracle then goes home first.
  if (rng.chance(0.2)) {
    const app = rng.pick(world.installed);
    return { ...s, screen: launchScreen(app), stack: [{ kind: 'home' }] };
  }
  return s;
}

/** Plays the oracle; undefined when the episode would not fit in MIN..MAX steps. */
function play(task: Task, start: UiState, size: ScreenSize, rng: Rng, maxEvents: number): { steps: TraceStep[]; end: UiState } | undefined {
  const steps: TraceStep[] = [];
  let s = start;
  for (;;) {
    const ev = nextEvent(task, s, size);
    if (!ev) return { steps, end: s };
    if (steps.length >= maxEvents) return undefined;
    steps.push(stepFor(s, ev, size, rng));
    s = applyEvent(s, ev, rng);
  }
}

function stepFor(s: UiState, ev: UiEvent, size: ScreenSize, rng: Rng): TraceStep {
  const { action, target } = actionFor(s, ev, size, rng);
  return { state: s, event: ev, action, ...(target ? { target, targetId: ev.kind === 'tap' ? ev.target : undefined } : {}) };
}

const ALL_FAMILIES: [Family, number][] = Object.values(SUBSET_FAMILIES).flat();

/**
 * Subsets a set of this app split can hold. An unseen-app set keeps only subsets with tasks whose goal
 * names an app (general, install, google_apps); single is left out because its one-step instructions
 * are read off whatever screen a prefix reached and mostly name no app.
 */
export function subsetsFor(apps: AppSplit): Subset[] {
  return SUBSETS.filter((s) => (s === 'single' ? apps === 'seen' : familiesFor(SUBSET_FAMILIES[s], apps).length > 0));
}

/** Episode ids look like AITW's (19-20 digit numbers); the tail encodes subset and index so they never collide. */
export function episodeIdFor(rng: Rng, subset: Subset, index: number, subsets: readonly Subset[]): string {
  return `${rng.digits(12)}${subsets.indexOf(subset)}${String(index).padStart(7, '0')}`;
}

/**
 * Generates episode `index` of `subset` (deterministic in seed, app split, subset, index and size).
 * `apps` decides which apps exist and which may be targets (apps.ts: UNSEEN_APP_IDS).
 */
export function generateTrace(seed: number, subset: Subset, index: number, size: ScreenSize, subsets: readonly Subset[], apps: AppSplit = 'seen'): EpisodeTrace {
  if (!subsetsFor(apps).includes(subset)) throw new RangeError(`synth: a ${apps}-app set has no ${subset} subset (only ${subsetsFor(apps).join(', ')})`);
  const base = Rng.from('autoui-synth', GENERATOR_VERSION, seed, apps, subset, index, size.width, size.height);
  const episodeId = episodeIdFor(base.fork('id'), subset, index, subsets);
  for (let attempt = 0; attempt < 50; attempt++) {
    const rng = base.fork('attempt', attempt);
    const made = subset === 'single' ? singleEpisode(rng, size, apps) : taskEpisode(rng, SUBSET_FAMILIES[subset], size, apps);
    if (made) return { episodeId, subset, ...made };
  }
  throw new Error(`synth: could not generate ${subset} episode ${index} within ${MAX_STEPS} steps (generator bug)`);
}

type Episode = Pick<EpisodeTrace, 'goal' | 'steps'>;

/** One oracle-played task of the subset's families; undefined when it does not fit in MIN..MAX steps. */
function taskEpisode(rng: Rng, families: readonly [Family, number][], size: ScreenSize, apps: AppSplit): Episode | undefined {
  const task = drawTask(rng.fork('task'), families, size, apps);
  const start = startState(task, size, apps, rng.fork('start'));
  const run = play(task, start, size, rng.fork('actions'), MAX_STEPS - 1);
  if (!run || run.steps.length + 1 < MIN_STEPS) return undefined;
  return { goal: task.goal, steps: [...run.steps, { state: run.end, event: null, action: completeAction() }] };
}

/** Walks a random prefix of a longer task, then gives a one-step instruction on the screen reached. */
function singleEpisode(rng: Rng, size: ScreenSize, apps: AppSplit): Episode | undefined {
  const task = drawTask(rng.fork('task'), ALL_FAMILIES, size, apps);
  const start = startState(task, size, apps, rng.fork('start'));
  const prefix = play(task, start, size, rng.fork('prefix'), rng.int(0, 7));
  const at = prefix?.end ?? start;
  const cands = singleCandidates(at, layoutScreen(at, size), size, rng.fork('single'));
  if (cands.length === 0) return undefined;
  const pick = rng.pick(cands);
  const steps: TraceStep[] = [];
  let s = at;
  const arng = rng.fork('actions');
  for (const ev of pick.events) {
    steps.push(stepFor(s, ev, size, arng));
    s = applyEvent(s, ev, arng);
  }
  steps.push({ state: s, event: null, action: completeAction() });
  return { goal: pick.goal, steps };
}

/** Renders a trace into AITW steps (screens rendered concurrently; sharp works off the main thread). */
export async function renderTrace(trace: EpisodeTrace, size: ScreenSize): Promise<AitwStep[]> {
  const screens = await Promise.all(trace.steps.map((st) => rasterizeScreen(st.state, size)));
  return trace.steps.map((st, i) => ({
    episodeId: trace.episodeId,
    episodeLength: trace.steps.length,
    stepId: i,
    goal: trace.goal,
    image: screens[i]!.image,
    annotations: screens[i]!.annotations,
    action: st.action,
    currentActivity: activityOf(st.state),
    deviceType: st.state.world.deviceType,
    androidApiLevel: st.state.world.androidApiLevel,
  }));
}
