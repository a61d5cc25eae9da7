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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Strict base64 (standard or URL-safe alphabet, whitespace ignored); Buffer.from alone skips bad characters silently. */
export function decodeBase64(s: string, where: string): Uint8Array {
  const clean = s.replace(/\s+/g, '');
  if (clean.length === 0) throw new InputError('is empty', where);
  const url = !BASE64_RE.test(clean);
  if (url && !BASE64URL_RE.test(clean)) throw new InputError('is not valid base64', where);
  if (clean.replace(/=+$/, '').length % 4 === 1) throw new InputError('is not valid base64 (bad length)', where);
  return Buffer.from(clean, url ? 'base64url' : 'base64');
}

/** `data:[<type>];base64,<data>` only: the server never fetches URLs. */
export function decodeDataUrl(s: string, where: string): Uint8Array {
  const m = /^data:([^,]*?),/i.exec(s.slice(0, 256));
  if (!m) throw new InputError(`only data: URLs are accepted (the server fetches nothing), got ${JSON.stringify(s.slice(0, 40))}`, where);
  if (!/;base64$/i.test(m[1]!)) throw new InputError('the data: URL must be base64-encoded (data:image/png;base64,...)', where);
  return decodeBase64(s.slice(m[0].length), where);
}

interface RawPredictInput {
  image: Uint8Array;
  goal: unknown;
  history: unknown;
}

/** The JSON form: {goal, image (base64) | image_url (data: URL), history?}. */
export function parseJsonRequest(body: unknown): RawPredictInput {
  if (!isObject(body)) throw new InputError(`the body must be a JSON object, got ${Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body}`, 'body');
  const { image, image_url: imageUrl } = body;
  if (image !== undefined && imageUrl !== undefined) throw new InputError("give 'image' or 'image_url', not both", 'body');
  let bytes: Uint8Array;
  if (image !== undefined) {
    if (typeof image !== 'string') throw new InputError(`must be a base64 string, got ${typeof image}`, 'image');
    bytes = image.startsWith('data:') ? decodeDataUrl(image, 'image') : decodeBase64(image, 'image');
  } else if (imageUrl !== undefined) {
    if (typeof imageUrl !== 'string') throw new InputError(`must be a data: URL string, got ${typeof imageUrl}`, 'image_url');
    bytes = decodeDataUrl(imageUrl, 'image_url');
  } else {
    throw new InputError("is missing: send 'image' (base64) or 'image_url' (data: URL)", 'image');
  }
  return { image: bytes, goal: body.goal, history: body.history };
}

/** The multipart form: file field `image`, text fields `goal` and `history` (JSON). */
async function readMultipart(request: FastifyRequest, fileLimit: number): Promise<RawPredictInput> {
  let image: Uint8Array | undefined;
  const fields: Record<string, string> = {};
  for await (const part of request.parts({ limits: { files: 1, fields: 8, fieldSize: 256 * 1024, fileSize: fileLimit } })) {
    if (part.type === 'file') {
      const buf = await part.toBuffer();
      if (part.fieldname !== 'image') throw new InputError(`unexpected file field '${part.fieldname}' (send the screenshot as 'image')`, 'multipart');
      image = buf;
    } else {
      if (typeof part.value !== 'string') throw new InputError('must be a text field', `multipart field '${part.fieldname}'`);
      fields[part.fieldname] = part.value;
    }
  }
  if (!image) {
    if (fields.image !== undefined) return { ...parseJsonRequest({ image: fields.image }), goal: fields.goal, history: parseHistoryField(fields.history) };
    throw new InputError("is missing: attach the screenshot as file field 'image'", 'image');
  }
  return { image, goal: fields.goal, history: parseHistoryField(fields.history) };
}

function parseHistoryField(v: string | undefined): unknown {
  if (v === undefined || v.trim() === '') return undefined;
  try {
    return JSON.parse(v);
  } catch (err) {
    throw new InputError(`is not valid JSON (${(err as Error).message})`, 'history');
  }
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

  const batcher = new Batcher((rows: PreparedRequest[]) => predictor.predictBatch(rows), opts);
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
    const { result, timings } = await batcher.submit(prepared);
    const queueMs = performance.now() - queuedAt - timings.features_ms - timings.model_ms;
    const latency = performance.now() - (started.get(request) ?? queuedAt);
    const round = (v: number): number => Math.round(v * 10) / 10;
    const t = { decode_ms: round(timings.decode_ms), features_ms: round(timings.features_ms), model_ms: round(timings.model_ms), batch_size: timings.batch_size, queue_ms: round(Math.max(0, queueMs)) };
    const size = { width: prepared.image.width, height: prepared.image.height };
    const body: PredictResponse = result.ok
      ? {
          action: result.action,
          plan: result.plan,
          plan_ids: result.plan_ids,
          pixels: result.pixels,
          commands: { adb: toAdbCommand(result.aitw, size), pyautogui: toPyAutoGui(result.aitw, size) },
          latency_ms: round(latency),
          timings: t,
        }
      : { action: null, plan: null, plan_ids: null, pixels: null, commands: null, invalid: result.error, latency_ms: round(latency), timings: t };
    return reply.send(body);
  });

  const server: AutouiServer = {
    app,
    batcher,
    async close() {
      await batcher.close();
      await app.close();
    },
  };
  return server;
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
