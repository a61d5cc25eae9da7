import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { toAdbCommand, toPyAutoGui } from '../infer/adapters.js';
import { Predictor } from '../infer/predict.js';
import { MAX_HISTORY_STEPS } from '../infer/request.js';
import { InputError } from '../util/errors.js';
import { checkpointDirs, ensembleOption, printJson, tapFromOption, textBeamsOption, textStartOption } from './common.js';
import type { TapSource } from '../model/pointer.js';

interface PredictCliOptions {
  checkpoint: string;
  ensemble?: string[];
  image: string;
  goal: string;
  history?: string;
  avoid?: string;
  texts?: string;
  uiTree?: string;
  encoder?: string;
  json?: boolean;
  tapFrom: TapSource | 'auto';
  textBeams: number;
  textStart: boolean;
}

async function readInput(file: string, what: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new InputError(`cannot read ${what} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, file);
  }
}

async function readJsonFile(file: string, what: string): Promise<unknown> {
  const text = (await readInput(file, what)).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InputError(`not valid JSON (${(err as Error).message})`, file);
  }
}

/** `autoui predict --checkpoint DIR --image SHOT --goal TEXT [--history FILE] [--json]` */
export function registerPredict(parent: Command): void {
  parent
    .command('predict')
    .description('predict the next UI action for a screenshot and a goal (AITW form, plan, pixels, adb and PyAutoGUI lines)')
    .requiredOption('--checkpoint <dir>', 'checkpoint directory (a training output dir resolves to its best/)')
    .requiredOption('--image <file>', 'the screenshot: PNG, JPEG or WebP of any size')
    .requiredOption('--goal <text>', 'what the user wants done')
    .option('--history <file>', `JSON list of the previous actions, oldest first (at most ${MAX_HISTORY_STEPS}; the model reads the last 8)`)
    .option('--avoid <file>', 'JSON list of actions seen to do nothing on this screen, which the answer must not repeat (history form)')
    .option('--texts <file>', 'JSON list of the screen\'s texts [{"text", "box": [y, x, h, w]}] (normalised), for a checkpoint that reads text; default: OCR of the image')
    .option('--ui-tree <file>', 'an Android `uiautomator dump` XML of the screen, as the source of its texts instead of OCR')
    .option('--encoder <spec>', "vision encoder, when the checkpoint's is not built in")
    .option('--json', 'print one JSON object on stdout')
    .addOption(tapFromOption())
    .addOption(textBeamsOption())
    .addOption(textStartOption())
    .addOption(ensembleOption())
    .addHelpText(
      'after',
      `
History actions: {"action_type": 4 | "DUAL_POINT", "touch_yx" | "touch_point": [y, x], "lift_yx" | "lift_point": [y, x],
"typed_text": "..."}; points are normalised to the screen (y down, x right, both in [0, 1]).
Output points are [y, x] in [0, 1]; pixels are {x, y} in the given image.`,
    )
    .action(async (opts: PredictCliOptions) => {
      const image = await readInput(opts.image, 'the image');
      const history = opts.history ? await readJsonFile(opts.history, 'the history') : undefined;
      const avoid = opts.avoid ? await readJsonFile(opts.avoid, 'the actions to avoid') : undefined;
      const texts = opts.texts ? await readJsonFile(opts.texts, 'the texts') : undefined;
      const ui_tree = opts.uiTree ? (await readInput(opts.uiTree, 'the UI tree')).toString('utf8') : undefined;
      const predictor = await Predictor.load(checkpointDirs(opts), { encoder: opts.encoder, tapFrom: opts.tapFrom, textBeams: opts.textBeams, textStart: opts.textStart });
      let out;
      try {
        const prepared = await predictor.prepare({ image, goal: opts.goal, history, texts, ui_tree, avoid }).catch((e: unknown) => {
          // Name the file the bad value came from, not just the field.
          if (!(e instanceof InputError)) throw e;
          if (e.message.startsWith('image:')) throw new InputError(e.message.slice('image: '.length), opts.image);
          const files: [string, string | undefined][] = [['history', opts.history], ['avoid', opts.avoid], ['texts', opts.texts], ['ui_tree', opts.uiTree]];
          const file = files.find(([field, f]) => f !== undefined && e.message.startsWith(field))?.[1];
          throw file === undefined ? e : new InputError(e.message, file);
        });
        const t0 = performance.now();
        const [r] = await predictor.predictBatch([prepared]);
        out = { ...r!, latency_ms: performance.now() - t0 + prepared.decodeMs, size: { width: prepared.image.width, height: prepared.image.height } };
      } finally {
        predictor.dispose();
      }
      const { result, timings, latency_ms, size } = out;
      if (!result.ok) {
        if (opts.json) printJson({ action: null, invalid: result.error, latency_ms, timings });
        else process.stderr.write(`autoui predict: the model gave no valid action (${result.error})\n`);
        process.exitCode = 1;
        return;
      }
      const commands = { adb: toAdbCommand(result.aitw, size), pyautogui: toPyAutoGui(result.aitw, size) };
      if (opts.json) {
        printJson({ action: result.action, plan: result.plan, plan_ids: result.plan_ids, type_probs: result.type_probs, typed_text_choices: result.typed_text_choices, pixels: result.pixels, commands, latency_ms, timings });
        return;
      }
      const a = result.action;
      const lines = [`action:    ${a.action_type} (${a.action_type_id})${a.gesture === 'tap' || a.gesture === 'scroll' ? ` ${a.gesture}${a.scroll_direction ? ` ${a.scroll_direction}` : ''}` : ''}`];
      if (a.action_type_id === 4) {
        lines.push(`touch:     [${a.touch_point.join(', ')}]  → pixel x=${result.pixels.touch!.x} y=${result.pixels.touch!.y}`);
        lines.push(`lift:      [${a.lift_point.join(', ')}]  → pixel x=${result.pixels.lift!.x} y=${result.pixels.lift!.y}`);
      }
      if (a.action_type_id === 3) lines.push(`text:      ${JSON.stringify(a.typed_text)}`);
      const others = result.typed_text_choices.slice(1).map((c) => `${JSON.stringify(c.text)} ${c.score.toFixed(2)}`);
      if (others.length > 0) lines.push(`or:        ${others.join(', ')} (other texts the beam finished; mean log-probability per token, ${result.typed_text_choices[0]!.score.toFixed(2)} for the one typed)`);
      const sure = Object.entries(result.type_probs).sort(([, x], [, y]) => y - x).map(([type, p]) => `${type} ${(p * 100).toFixed(0)} %`);
      lines.push(`plan:      ${result.plan.join(' → ')}`, `next:      ${sure.slice(0, 3).join(', ')} (the model's probability of each action type)`, `adb:       ${commands.adb}`, `pyautogui: ${commands.pyautogui}`, `latency:   ${latency_ms.toFixed(0)} ms (${size.width}×${size.height} image)`);
      process.stdout.write(lines.join('\n') + '\n');
    });
}
