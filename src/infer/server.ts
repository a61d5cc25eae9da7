/**
 * HTTP server for next-action prediction (fastify). One model, loaded once; concurrent requests
 * are validated and decoded in parallel, then batched through the model (batcher.ts).
 *
 * Routes: POST /v1/predict (JSON or multipart), GET /v1/model, GET /healthz, GET / (the page).
 * Every error is JSON `{error: {code, message}}` with a 4xx for anything the client did
 * (400 bad input, 401 token, 404/405 route, 413 too large, 415 content type) and 503 when the
 * queue is full. Hostile input fails its own request only.
 */
import fastifyMultipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { timingSafeEqual, createHash } from 'node:crypto';
import { InputError } from '../util/errors.js';
import { toAdbCommand, toPyAutoGui } from './adapters.js';
import { Batcher, QueueError, type BatcherOptions } from './batcher.js';
import { PAGE_HTML } from './page.js';
import type { PredictionResult, Predictor, PreparedRequest, Timings } from './predict.js';
import { parseJsonRequest, readMultipart } from './request.js';

export interface ServeOptions extends BatcherOptions {
  host?: string;
  port?: number;
  /** When set, /v1/* requires `Authorization: Bearer <token>`. */
  token?: string;
  /** Request body limit in bytes (JSON body or uploaded file); default 16 MiB. */
  bodyLimit?: number;
  /** Whole-request receive limit in ms (slow clients are cut off); default 30 000. */
  requestTimeoutMs?: number;
  /** fastify request logging on stderr. */
  log?: boolean;
}

export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;

export interface PredictResponse {
  action: (PredictionResult & { ok: true })['action'] | null;
  plan: string[] | null;
  plan_ids: number[] | null;
  /** The model's probability of each action type as its next action. */
  type_probs: (PredictionResult & { ok: true })['type_probs'] | null;
  /** A TYPE action's texts the text beam finished, best first with their mean log-probability per token (the first is typed). */
  typed_text_choices: (PredictionResult & { ok: true })['typed_text_choices'] | null;
  pixels: (PredictionResult & { ok: true })['pixels'] | null;
  /** How to execute it: an adb command line and a PyAutoGUI line (pixels of the given image). */
  commands: { adb: string; pyautogui: string } | null;
  /** Set when the model's output could not be parsed into an action (action is then null). */
  invalid?: string;
  latency_ms: number;
  timings: Timings & { queue_ms: number };
}

type ErrorCode = string;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

function sendError(reply: FastifyReply, status: number, code: ErrorCode, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { code, message } });
}

/** Maps anything thrown while handling a request to a status and a message safe to show. */
function classify(err: unknown, bodyLimit: number): { status: number; code: ErrorCode; message: string } {
  if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof QueueError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof InputError) {
    const status = (err as InputError & { status?: number }).status ?? 400;
    return { status, code: status === 413 ? 'too_large' : 'bad_request', message: err.message };
  }
  const e = err as { statusCode?: number; code?: string; message?: string };
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const messages: Record<string, string> = {
      FST_ERR_CTP_BODY_TOO_LARGE: `request body is larger than the limit of ${formatBytes(bodyLimit)}`,
      FST_REQ_FILE_TOO_LARGE: `uploaded file is larger than the limit of ${formatBytes(bodyLimit)}`,
      FST_FILES_LIMIT: "multipart: send one file (field 'image')",
      FST_FIELDS_LIMIT: 'multipart: too many fields',
      FST_PARTS_LIMIT: 'multipart: too many parts',
      FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported Content-Type: send application/json or multipart/form-data',
      FST_ERR_CTP_EMPTY_JSON_BODY: 'the JSON body is empty',
    };
    const code = e.statusCode === 413 ? 'too_large' : e.statusCode === 415 ? 'unsupported_media_type' : 'bad_request';
    const base = (e.code && messages[e.code]) ?? e.message ?? 'bad request';
    const detail = e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' ? `the body is not valid JSON (${e.message})` : base;
    return { status: e.statusCode, code, message: detail };
  }
  return { status: 500, code: 'internal', message: 'internal error' };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MiB` : `${Math.round(n / 1024)} KiB`;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  // Hashing first gives equal-length buffers, so the comparison time says nothing about the token.
  const a = createHash('sha256').update(m[1]!.trim()).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

export interface AutouiServer {
  app: FastifyInstance;
  batcher: Batcher<PreparedRequest, { result: PredictionResult; timings: Timings }>;
  /** Base URL once listening. */
  url?: string;
  close(): Promise<void>;
}

/** Builds the app (not listening yet: tests can `app.inject`). */
export async function createServer(predictor: Predictor, opts: ServeOptions = {}): Promise<AutouiServer> {
  const bodyLimit = opts.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const app = await buildApp(opts, bodyLimit);
  const batcher = new Batcher((rows: PreparedRequest[]) => predictor.predictBatch(rows), opts);
  const started = guardRequests(app, opts, bodyLimit);
  app.get('/', (_req, reply) => reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(PAGE_HTML));
  app.get('/healthz', () => ({ ok: true, queue: batcher.pending }));
  app.get('/v1/model', () => ({ ...predictor.info(), batching: batcher.stats, token_required: Boolean(opts.token) }));
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH'] as const) {
    app.route({ method, url: '/v1/predict', handler: (_req, reply) => sendError(reply.header('Allow', 'POST'), 405, 'method_not_allowed', 'use POST /v1/predict') });
  }
  app.post('/v1/predict', async (request, reply) => {
    const input = request.isMultipart() ? await readMultipart(request, bodyLimit) : parseJsonRequest(request.body);
    const prepared = await predictor.prepare(input);
    const queuedAt = performance.now();
    const answer = await batcher.submit(prepared);
    return reply.send(predictResponse(prepared, answer, queuedAt, started.get(request) ?? queuedAt));
  });
  return {
    app,
    batcher,
    async close() {
      await batcher.close();
      await app.close();
    },
  };
}

/** Fastify with the limits a public endpoint needs: body size, slow clients, prototype poisoning. */
async function buildApp(opts: ServeOptions, bodyLimit: number): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.log ? { level: 'info' } : false,
    bodyLimit,
    requestTimeout: opts.requestTimeoutMs ?? 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 5_000,
    return503OnClosing: true,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
  });
  // Headers must arrive fast; the body gets requestTimeout.
  app.server.headersTimeout = 10_000;
  await app.register(fastifyMultipart, { limits: { fileSize: bodyLimit, files: 1 } });
  return app;
}

/** The token check, the JSON error contract for every failure and unknown route; returns each request's start time. */
function guardRequests(app: FastifyInstance, opts: ServeOptions, bodyLimit: number): WeakMap<FastifyRequest, number> {
  const started = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', async (request, reply) => {
    started.set(request, performance.now());
    reply.header('X-Content-Type-Options', 'nosniff');
    if (opts.token && request.url.startsWith('/v1/') && !tokenMatches(request.headers.authorization, opts.token)) {
      reply.header('WWW-Authenticate', 'Bearer');
      return sendError(reply, 401, 'unauthorized', 'this server needs Authorization: Bearer <token>');
    }
  });
  app.setErrorHandler((err, request, reply) => {
    const c = classify(err, bodyLimit);
    if (c.status >= 500 && c.code === 'internal') request.log.error(err);
    return sendError(reply, c.status, c.code, c.message);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, 'not_found', `no route ${request.method} ${request.url.slice(0, 200)} (try POST /v1/predict, GET /v1/model, GET /healthz, GET /)`),
  );
  return started;
}

/** The response body of one prediction, with its latency split into decode, queue, features and model time. */
function predictResponse(prepared: PreparedRequest, answer: { result: PredictionResult; timings: Timings }, queuedAt: number, startedAt: number): PredictResponse {
  const { result, timings } = answer;
  const round = (v: number): number => Math.round(v * 10) / 10;
  const queueMs = performance.now() - queuedAt - timings.features_ms - timings.model_ms;
  const t = { decode_ms: round(timings.decode_ms), features_ms: round(timings.features_ms), model_ms: round(timings.model_ms), batch_size: timings.batch_size, queue_ms: round(Math.max(0, queueMs)) };
  const latency_ms = round(performance.now() - startedAt);
  if (!result.ok) return { action: null, plan: null, plan_ids: null, type_probs: null, typed_text_choices: null, pixels: null, commands: null, invalid: result.error, latency_ms, timings: t };
  const size = { width: prepared.image.width, height: prepared.image.height };
  return {
    action: result.action,
    plan: result.plan,
    plan_ids: result.plan_ids,
    type_probs: result.type_probs,
    typed_text_choices: result.typed_text_choices,
    pixels: result.pixels,
    commands: { adb: toAdbCommand(result.aitw, size), pyautogui: toPyAutoGui(result.aitw, size) },
    latency_ms,
    timings: t,
  };
}

/** Creates the server and listens (127.0.0.1:8080 by default; port 0 = any free port). */
export async function startServer(predictor: Predictor, opts: ServeOptions = {}): Promise<AutouiServer & { url: string }> {
  const server = await createServer(predictor, opts);
  const host = opts.host ?? '127.0.0.1';
  await server.app.listen({ host, port: opts.port ?? 8080 });
  const addr = server.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return Object.assign(server, { url: `http://${shown}:${port}` });
}
