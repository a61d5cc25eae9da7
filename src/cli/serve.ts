import type { Command } from 'commander';
import { Predictor } from '../infer/predict.js';
import { DEFAULT_MAX_PIXELS } from '../infer/request.js';
import { DEFAULT_BODY_LIMIT, startServer } from '../infer/server.js';
import { InputError } from '../util/errors.js';
import { checkpointDirs, ensembleOption, intOption, tapFromOption, textBeamsOption, textStartOption } from './common.js';
import type { TapSource } from '../model/pointer.js';

interface ServeCliOptions {
  checkpoint: string;
  ensemble?: string[];
  host: string;
  port: number;
  token?: string;
  encoder?: string;
  tapFrom: TapSource | 'auto';
  textBeams: number;
  textStart: boolean;
  maxBodyMb: number;
  maxPixels: number;
  maxBatch: number;
  batchWaitMs: number;
  maxQueue: number;
  queueTimeoutMs: number;
  log?: boolean;
}

/** `autoui serve --checkpoint DIR [--host 127.0.0.1] [--port 8080] [--token T]` */
export function registerServe(parent: Command): void {
  parent
    .command('serve')
    .description('serve next-action predictions over HTTP (POST /v1/predict, GET /v1/model, GET /healthz, and a page at /)')
    .requiredOption('--checkpoint <dir>', 'checkpoint directory (a training output dir resolves to its best/)')
    .option('--host <host>', 'address to bind (use 0.0.0.0 to accept other machines, ideally with --token)', '127.0.0.1')
    .option('--port <n>', 'port (0 = any free port)', intOption('--port', 0), 8080)
    .option('--token <token>', 'require "Authorization: Bearer <token>" on /v1/* (or set AUTOUI_TOKEN)')
    .option('--encoder <spec>', "vision encoder, when the checkpoint's is not built in")
    .option('--max-body-mb <n>', 'largest request body / uploaded file in MiB (larger → 413)', intOption('--max-body-mb', 1), DEFAULT_BODY_LIMIT / 1024 / 1024)
    .option('--max-pixels <n>', 'largest image in pixels (larger → 413)', intOption('--max-pixels', 1), DEFAULT_MAX_PIXELS)
    .option('--max-batch <n>', 'requests decoded together at most', intOption('--max-batch', 1), 8)
    .option('--batch-wait-ms <n>', 'wait this long for more requests before starting a batch', intOption('--batch-wait-ms', 0), 0)
    .option('--max-queue <n>', 'requests waiting at most (more → 503)', intOption('--max-queue', 1), 256)
    .option('--queue-timeout-ms <n>', 'a request waiting longer than this gets 503', intOption('--queue-timeout-ms', 1), 30_000)
    .option('--log', 'log every request on stderr')
    .addOption(tapFromOption())
    .addOption(textBeamsOption())
    .addOption(textStartOption())
    .addOption(ensembleOption())
    .addHelpText(
      'after',
      `
POST /v1/predict takes JSON {"goal", "image": base64 | "image_url": "data:image/png;base64,...", "history"?: [actions]}
or multipart/form-data with a file field "image" and text fields "goal" and "history" (JSON), and answers
{"action", "plan", "pixels", "commands": {"adb", "pyautogui"}, "latency_ms", "timings"}.
Errors are {"error": {"code", "message"}} with 400/401/404/405/413/415, or 503 when overloaded.`,
    )
    .action(async (opts: ServeCliOptions) => {
      const token = opts.token ?? (process.env.AUTOUI_TOKEN || undefined);
      if (token !== undefined && token.trim().length < 8) throw new InputError('the token must be at least 8 characters', '--token');
      const predictor = await Predictor.load(checkpointDirs(opts), { encoder: opts.encoder, maxPixels: opts.maxPixels, tapFrom: opts.tapFrom, textBeams: opts.textBeams, textStart: opts.textStart });
      const server = await startServer(predictor, {
        host: opts.host,
        port: opts.port,
        token,
        bodyLimit: opts.maxBodyMb * 1024 * 1024,
        maxBatch: opts.maxBatch,
        maxWaitMs: opts.batchWaitMs,
        maxQueue: opts.maxQueue,
        queueTimeoutMs: opts.queueTimeoutMs,
        log: opts.log,
      });
      const info = predictor.info();
      process.stderr.write(
        `autoui serve: ${info.checkpoint}${info.ensemble ? ` and ${info.ensemble.length - 1} more answering as one` : ''} (${(info.parameters / 1e6).toFixed(1)}M parameters, encoder ${info.encoder.id}, backend ${info.backend.backend})\n` +
          `autoui serve: listening on ${server.url}${token ? ' (bearer token required on /v1/*)' : ''}; open ${server.url}/ in a browser\n`,
      );
      const stop = (): void => {
        process.stderr.write('autoui serve: shutting down\n');
        void server.close().then(() => {
          predictor.dispose();
          process.exit(0);
        });
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
