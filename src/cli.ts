#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { registerDataInspect } from './cli/data-inspect.js';
import { registerDataPrepare } from './cli/data-prepare.js';
import { registerDataSynth } from './cli/data-synth.js';
import { registerDataWeb } from './cli/data-web.js';
import { registerDemo } from './cli/demo.js';
import { registerEval } from './cli/eval.js';
import { registerInfo } from './cli/info.js';
import { registerPredict } from './cli/predict.js';
import { registerRun } from './cli/run.js';
import { registerServe } from './cli/serve.js';
import { registerViz } from './cli/viz.js';
import { registerTrain } from './cli/train.js';
import { registerScore } from './cli/score.js';
import { InputError } from './util/errors.js';
import { AUTOUI_VERSION } from './util/version.js';

const program = new Command('autoui')
  .description('Auto-UI: a multimodal chain-of-action agent for phone UIs (AITW train / eval / serve)')
  .version(AUTOUI_VERSION)
  .showHelpAfterError('(run with --help for usage)');

registerInfo(program);
const data = program.command('data').description('read, synthesise and prepare AITW data');
registerDataSynth(data);
registerDataWeb(data);
registerDataInspect(data);
registerDataPrepare(data);
registerTrain(program);
registerEval(program);
registerScore(program);
registerDemo(program);
registerPredict(program);
registerServe(program);
registerRun(program);
registerViz(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof InputError) {
    process.stderr.write(`autoui: error: ${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof CommanderError) process.exit(err.exitCode);
  throw err;
});
