import type { Box, RawImage } from '../screen/types.js';

export type { Box, RawImage } from '../screen/types.js';

/** AITW action space (`results/action_type`), see docs/design.md. */
export const ActionType = {
  TYPE: 3,
  DUAL_POINT: 4,
  PRESS_BACK: 5,
  PRESS_HOME: 6,
  PRESS_ENTER: 7,
  STATUS_TASK_COMPLETE: 10,
  STATUS_TASK_IMPOSSIBLE: 11,
} as const;
export type ActionTypeName = keyof typeof ActionType;
export type ActionTypeId = (typeof ActionType)[ActionTypeName];

export const ACTION_TYPE_IDS: readonly ActionTypeId[] = Object.values(ActionType);
export const ACTION_TYPE_NAMES: Readonly<Record<ActionTypeId, ActionTypeName>> = Object.fromEntries(
  Object.entries(ActionType).map(([name, id]) => [id, name]),
) as Record<ActionTypeId, ActionTypeName>;

/** A model's probability of each action type as its next action (the types it may take). */
export type TypeProbs = Partial<Record<ActionTypeName, number>>;

/** A typed text a model weighed, with its mean log-probability per token (infer/text_beam.ts). */
export interface TypedTextChoice {
  text: string;
  score: number;
}

export function isActionTypeId(x: unknown): x is ActionTypeId {
  return typeof x === 'number' && (ACTION_TYPE_IDS as readonly number[]).includes(x);
}

/** A point as AITW stores it: (y, x), normalised by screen height and width; [-1, -1] when unused. */
export type YX = [number, number];

/** One action in AITW form: the public output of every command. */
export interface AitwAction {
  action_type: ActionTypeId;
  touch_yx: YX;
  lift_yx: YX;
  typed_text: string;
}

export interface UiAnnotations {
  positions: Box[];
  text: string[];
  types: string[];
}

/** One AITW step (one `tf.train.Example` record), fully decoded and validated. */
export interface AitwStep {
  episodeId: string;
  episodeLength: number;
  stepId: number;
  goal: string;
  image: RawImage;
  annotations: UiAnnotations;
  action: AitwAction;
  currentActivity: string;
  deviceType: string;
  androidApiLevel: number;
}

/** The steps of one episode, ordered by step id. */
export interface AitwEpisode {
  episodeId: string;
  goal: string;
  steps: AitwStep[];
}

/** The five AITW subsets, by the names Auto-UI uses. */
export const SUBSETS = ['general', 'install', 'google_apps', 'single', 'web_shopping'] as const;
export type Subset = (typeof SUBSETS)[number];
/** The subset of browser-rendered screens that `data web` records and the demo prepares beside the five. */
export const WEB_SUBSET = 'web';
/** Subset names a fraction may be given for even where the shards lack them (a recipe's, on AITW's own shards). */
export const KNOWN_SUBSETS: readonly string[] = [...SUBSETS, WEB_SUBSET];

export interface Splits {
  train: string[];
  val: string[];
  test: string[];
}
export type SplitName = keyof Splits;
