/**
 * A task's executed steps as an AITW episode: one GZIP TFRecord per task (the project's writer and
 * AITW encoding, data/tfrecord.ts and data/aitw.ts), so `eval`, `viz`, `data prepare` and training
 * read runs like AITW. The episode id is the task id, the goal the task's goal, each step's image
 * the screen the agent saw (PNG), its action the one executed; UI annotations are the screen texts
 * the environment knew (an Android UI tree; none for a browser); `current_activity` holds the URL.
 */
import { exampleFromStep } from '../../data/aitw.js';
import { TfRecordWriter } from '../../data/tfrecord.js';
import type { AitwAction, AitwStep } from '../../data/types.js';
import type { Observation } from '../../env/environment.js';

export interface ExecutedStep {
  observation: Observation;
  action: AitwAction;
  url: string;
}

export interface TrajectoryMeta {
  episodeId: string;
  goal: string;
  /** The environment kind ('chromium', 'adb'), stored as `device_type`. */
  deviceType: string;
}

/** The steps as AITW steps (images decoded one at a time by the caller's iteration). */
export async function* aitwSteps(steps: readonly ExecutedStep[], meta: TrajectoryMeta): AsyncGenerator<AitwStep> {
  for (const [i, s] of steps.entries()) {
    const texts = s.observation.texts;
    yield {
      episodeId: meta.episodeId,
      episodeLength: steps.length,
      stepId: i,
      goal: meta.goal,
      image: await s.observation.image(),
      annotations: { positions: texts.map((t) => t.box), text: texts.map((t) => t.text), types: texts.map(() => 'TEXT') },
      action: s.action,
      currentActivity: s.url,
      deviceType: meta.deviceType,
      androidApiLevel: 0,
    };
  }
}

/** Writes the episode to `path` (atomically: the writer renames on close); false when there is no step. */
export async function writeTrajectory(path: string, steps: readonly ExecutedStep[], meta: TrajectoryMeta): Promise<boolean> {
  if (steps.length === 0) return false;
  const writer = await TfRecordWriter.open(path, { gzip: true });
  try {
    for await (const step of aitwSteps(steps, meta)) await writer.write(await exampleFromStep(step, { imageFormat: 'png' }));
    await writer.close();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  return true;
}
