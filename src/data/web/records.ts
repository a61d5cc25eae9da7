/**
 * An executed episode as AITW records (one tf.train.Example per step, PNG screens), as a task
 * suite line with the same id, so offline action matching and online success can be compared on
 * the same tasks, and as a gold script line, so `autoui run --script` checks the tasks are solvable.
 */
import { exampleFromEncodedStep } from '../aitw.js';
import { taskLine, type TaskSpec } from '../suite.js';
import type { SiteEpisode } from './runner.js';
import { pageOf, type SiteModel } from './site_model.js';

/** The serialized records of one episode, in step order. */
export function episodeRecords(m: SiteModel, ep: SiteEpisode): Uint8Array[] {
  return ep.steps.map((s, i) =>
    exampleFromEncodedStep({
      episodeId: ep.id,
      episodeLength: ep.steps.length,
      stepId: i,
      goal: ep.goal,
      image: { height: s.shot.height, width: s.shot.width, channels: 3, encoded: s.shot.png },
      annotations: s.shot.annotations,
      action: s.action,
      currentActivity: `${m.site}/${pageOf(m, s.shot.view.url) ?? ''}`,
      deviceType: ep.setup.device.name,
      // Not Android: 0 keeps these screens out of any split by Android version.
      androidApiLevel: 0,
    }),
  );
}

/** The episodes' gold actions as an `autoui run --script` file: one {"id", "actions"} line per episode. */
export function goldScriptText(eps: readonly SiteEpisode[]): string {
  return eps.map((e) => JSON.stringify({ id: e.id, actions: e.steps.map((s) => s.action) }) + '\n').join('');
}

/**
 * The episode as a task. `prefix` is the path from the suite file's folder to the site folder
 * ('' for OUT/SITE/suite-*.jsonl, 'SITE/' for OUT/suite-*.jsonl).
 */
export function episodeTask(m: SiteModel, ep: SiteEpisode, prefix: string): TaskSpec {
  return {
    id: ep.id,
    goal: ep.goal,
    start_url: `${prefix}pages/${ep.start}`,
    home_url: `${prefix}pages/${m.start}`,
    viewport: { width: ep.setup.device.width, height: ep.setup.device.height, dpr: ep.setup.device.dpr },
    // Room for a few wrong turns: twice the gold length plus two.
    max_steps: ep.steps.length * 2 + 2,
    success: ep.success,
    meta: { kind: ep.kind, site: m.site, gold_steps: ep.steps.length, color_scheme: ep.setup.scheme },
  };
}

export function suiteText(m: SiteModel, eps: readonly SiteEpisode[], prefix: string): string {
  return eps.map((e) => taskLine(episodeTask(m, e, prefix)) + '\n').join('');
}
