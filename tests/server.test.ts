import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Batcher, QueueError } from '../src/infer/batcher.js';
import { Predictor } from '../src/infer/predict.js';
import { decodeBase64 } from '../src/infer/request.js';
import { createServer, startServer, type AutouiServer } from '../src/infer/server.js';
import { makeScreenshot, pngHeaderOnly } from './helpers/screens.js';
import { makeTinyCheckpoint } from './helpers/tiny_checkpoint.js';

let dir: string;
let predictor: Predictor;
let server: AutouiServer;
let shot: Buffer;
const BODY_LIMIT = 512 * 1024;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'autoui-server-'));
  await makeTinyCheckpoint(join(dir, 'ck'));
  predictor = await Predictor.load(join(dir, 'ck'));
  server = await createServer(predictor, { bodyLimit: BODY_LIMIT });
  shot = await makeScreenshot(540, 1200);
});

afterAll(async () => {
  await server?.close();
  predictor?.dispose();
  await rm(dir, { recursive: true, force: true });
});

const post = (payload: unknown, headers: Record<string, string> = {}) =>
  server.app.inject({ method: 'POST', url: '/v1/predict', payload: typeof payload === 'string' || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });

async function multipart(fields: Record<string, string | Blob>): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string') fd.append(k, v);
    else fd.append(k, v, 'shot.png');
  }
  const req = new Request('http://localhost/', { method: 'POST', body: fd });
  return { payload: Buffer.from(await req.arrayBuffer()), headers: { 'content-type': req.headers.get('content-type')! } };
}

function expectPrediction(body: Record<string, unknown>, width: number, height: number): void {
  const action = body.action as { action_type: string; action_type_id: number; touch_point: number[] };
  expect(typeof action.action_type).toBe('string');
  expect([3, 4, 5, 6, 7, 10, 11]).toContain(action.action_type_id);
  expect(Array.isArray(body.plan)).toBe(true);
  expect(body.pixels).toMatchObject({ width, height });
  expect(typeof body.latency_ms).toBe('number');
  expect(body.commands).toMatchObject({ adb: expect.any(String), pyautogui: expect.any(String) });
}

describe('routes', () => {
  test('GET /healthz and GET /v1/model', async () => {
    const h = await server.app.inject({ method: 'GET', url: '/healthz' });
    expect(h.statusCode).toBe(200);
    expect(h.json()).toMatchObject({ ok: true });
    const m = await server.app.inject({ method: 'GET', url: '/v1/model' });
    expect(m.statusCode).toBe(200);
    expect(m.json()).toMatchObject({ model: { dModel: 128 }, encoder: { id: 'builtin-v6' }, backend: { backend: expect.any(String) }, training: { recipe: 'scratch', preset: 'tiny' }, token_required: false });
  });

  test('GET / serves the page', async () => {
    const r = await server.app.inject({ method: 'GET', url: '/' });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/html/);
    expect(r.body).toContain('id="overlay"');
  });

  test('POST /v1/predict with base64 JSON, a data: URL, and multipart', async () => {
    const a = await post({ goal: 'open the settings app', image: shot.toString('base64') });
    expect(a.statusCode).toBe(200);
    expectPrediction(a.json(), 540, 1200);
    const jpeg = await makeScreenshot(300, 500, 'jpeg');
    const b = await post({ goal: 'turn on wifi', image_url: `data:image/jpeg;base64,${jpeg.toString('base64')}`, history: [{ action_type: 'PRESS_HOME' }] });
    expect(b.statusCode).toBe(200);
    expectPrediction(b.json(), 300, 500);
    const mp = await multipart({ goal: 'search for hotels in paris 🏨', history: '[{"action_type": 4, "touch_yx": [0.5, 0.5], "lift_yx": [0.5, 0.5]}]', image: new Blob([shot], { type: 'image/png' }) });
    const c = await server.app.inject({ method: 'POST', url: '/v1/predict', ...mp });
    expect(c.statusCode).toBe(200);
    expectPrediction(c.json(), 540, 1200);
    // The same request gives the same action whichever way it came.
    const d = await post({ goal: 'search for hotels in paris 🏨', image: shot.toString('base64'), history: [{ action_type: 4, touch_yx: [0.5, 0.5], lift_yx: [0.5, 0.5] }] });
    expect(d.json().action).toEqual(c.json().action);
  });
});

describe('hostile input gets a clear 4xx and the server keeps serving', () => {
  const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
  const cases: Array<[string, () => Promise<{ payload: string | Buffer; headers?: Record<string, string>; url?: string; method?: string }>, number, RegExp]> = [
    ['malformed JSON', async () => ({ payload: '{"goal": "x", "image": ' }), 400, /not valid JSON/],
    ['empty body', async () => ({ payload: '' }), 400, /empty/],
    ['a JSON array', async () => ({ payload: '[1,2]' }), 400, /body: the body must be a JSON object/],
    ['goal of the wrong type', async () => ({ payload: JSON.stringify({ goal: 5, image: b64(shot) }) }), 400, /goal: must be a string/],
    ['missing goal', async () => ({ payload: JSON.stringify({ image: b64(shot) }) }), 400, /goal: is missing/],
    ['missing image', async () => ({ payload: JSON.stringify({ goal: 'x' }) }), 400, /image: is missing/],
    ['image of the wrong type', async () => ({ payload: JSON.stringify({ goal: 'x', image: [1, 2] }) }), 400, /image: must be a base64 string/],
    ['bad base64', async () => ({ payload: JSON.stringify({ goal: 'x', image: '@@@###' }) }), 400, /image: is not valid base64/],
    ['non-image bytes', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(Buffer.from('hello, I am not a picture')) }) }), 400, /image: is not a PNG, JPEG or WebP/],
    ['truncated PNG', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(shot.subarray(0, shot.length >> 1)) }) }), 400, /image: /],
    ['a 50-megapixel PNG', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(pngHeaderOnly(10_000, 5_000)) }) }), 413, /50\.0 MP/],
    ['a 0×0 PNG', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(pngHeaderOnly(0, 0)) }) }), 400, /image: /],
    ['an http URL', async () => ({ payload: JSON.stringify({ goal: 'x', image_url: 'http://example.com/a.png' }) }), 400, /only data: URLs/],
    ['a body over the limit', async () => ({ payload: JSON.stringify({ goal: 'x', image: 'A'.repeat(BODY_LIMIT + 10) }) }), 413, /larger than the limit/],
    ['too many history steps', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(shot), history: Array(65).fill({ action_type: 5 }) }) }), 400, /too many history steps/],
    ['history of the wrong type', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(shot), history: { a: 1 } }) }), 400, /history: must be a list/],
    ['a bad history point', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(shot), history: [{ action_type: 4, touch_yx: [2, 0], lift_yx: [0, 0] }] }) }), 400, /history\[0\]\.touch_yx/],
    ['a bad action to avoid', async () => ({ payload: JSON.stringify({ goal: 'x', image: b64(shot), avoid: [{ action_type: 4, touch_yx: [0.5, 0.5] }] }) }), 400, /avoid\[0\]/],
    ['a lone surrogate in the goal', async () => ({ payload: '{"goal": "a\\ud800b", "image": "' + b64(shot) + '"}' }), 400, /goal: .*surrogate/],
    ['__proto__ poisoning', async () => ({ payload: '{"goal": "x", "__proto__": {"a": 1}}' }), 400, /./],
    ['an unsupported content type', async () => ({ payload: 'x', headers: { 'content-type': 'application/xml' } }), 415, /Content-Type/],
    ['text/plain', async () => ({ payload: 'hello', headers: { 'content-type': 'text/plain' } }), 400, /must be a JSON object/],
    ['an unknown route', async () => ({ payload: '', url: '/v2/ünknöwn?q=🙂', method: 'GET' }), 404, /no route/],
    ['GET on the predict route', async () => ({ payload: '', url: '/v1/predict', method: 'GET' }), 405, /use POST/],
    ['multipart without an image', async () => multipart({ goal: 'x' }), 400, /image: is missing/],
    ['multipart with an oversized file', async () => multipart({ goal: 'x', image: new Blob([Buffer.alloc(BODY_LIMIT + 10)]) }), 413, /larger than the limit/],
    ['multipart with bad avoid JSON', async () => multipart({ goal: 'x', avoid: '{', image: new Blob([shot]) }), 400, /avoid: is not valid JSON/],
    ['multipart with bad history JSON', async () => multipart({ goal: 'x', history: '[{', image: new Blob([shot]) }), 400, /history: is not valid JSON/],
  ];

  test.each(cases)('%s', async (_name, make, status, message) => {
    const c = await make();
    const r = await server.app.inject({ method: (c.method ?? 'POST') as 'POST', url: c.url ?? '/v1/predict', payload: c.payload, headers: { 'content-type': 'application/json', ...c.headers } });
    expect(r.statusCode).toBe(status);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    const body = r.json() as { error: { code: string; message: string } };
    expect(body.error.message).toMatch(message);
    expect(body.error.code).toEqual(expect.any(String));
    // ...and the next valid request still succeeds.
    const ok = await post({ goal: 'ünïcödé goal — שלום 🙂 e\u0301', image: shot.toString('base64') });
    expect(ok.statusCode).toBe(200);
  });
});

describe('over real HTTP', () => {
  test('binds to 127.0.0.1 by default; concurrent requests are batched; slow and aborted clients do not block it', async () => {
    const live = await startServer(predictor, { port: 0, maxBatch: 8 });
    try {
      expect(live.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const port = Number(new URL(live.url).port);
      // A client that sends half its headers and stalls, and one that promises a body and vanishes.
      const stalled = connect(port, '127.0.0.1', () => stalled.write('POST /v1/predict HTTP/1.1\r\nHost: x\r\n'));
      const aborted = connect(port, '127.0.0.1', () => {
        aborted.write('POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"goal": "x", "ima');
        setTimeout(() => aborted.destroy(), 20);
      });
      const body = JSON.stringify({ goal: 'open the settings app', image: shot.toString('base64') });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => fetch(`${live.url}/v1/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => ({ status: r.status, json: (await r.json()) as { action: unknown } }))),
      );
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
      // One model, one input: every answer is the same, however it was batched.
      expect(new Set(results.map((r) => JSON.stringify(r.json.action))).size).toBe(1);
      expect(live.batcher.stats.maxBatchSeen).toBeGreaterThan(1);
      stalled.destroy();
    } finally {
      await live.close();
    }
  });

  test('--token requires a bearer token on /v1/*', async () => {
    const s = await createServer(predictor, { token: 's3cret' });
    try {
      const body = JSON.stringify({ goal: 'x', image: shot.toString('base64') });
      const headers = { 'content-type': 'application/json' };
      const none = await s.app.inject({ method: 'POST', url: '/v1/predict', payload: body, headers });
      expect(none.statusCode).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer');
      expect(none.json().error.code).toBe('unauthorized');
      expect((await s.app.inject({ method: 'GET', url: '/v1/model', headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      expect((await s.app.inject({ method: 'POST', url: '/v1/predict', payload: body, headers: { ...headers, authorization: 'Bearer s3cret' } })).statusCode).toBe(200);
      expect((await s.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('Batcher', () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test('batches requests that arrive while a batch runs, in order, up to maxBatch', async () => {
    const sizes: number[] = [];
    const b = new Batcher<number, number>(async (xs) => {
      sizes.push(xs.length);
      await sleep(10);
      return xs.map((x) => x * 2);
    }, { maxBatch: 3 });
    const out = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((x) => b.submit(x)));
    expect(out).toEqual([2, 4, 6, 8, 10, 12, 14]);
    expect(sizes).toEqual([3, 3, 1]);
  });

  test('a failing batch rejects only its own requests', async () => {
    const b = new Batcher<number, number>(async (xs) => {
      await sleep(5);
      if (xs.includes(13)) throw new Error('unlucky');
      return xs;
    }, { maxBatch: 1 });
    const r = await Promise.allSettled([b.submit(1), b.submit(13), b.submit(2)]);
    expect(r.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  test('refuses when the queue is full or a request waited too long', async () => {
    const b = new Batcher<number, number>(async (xs) => {
      await sleep(40);
      return xs;
    }, { maxBatch: 1, maxQueue: 2, queueTimeoutMs: 30 });
    const r = await Promise.allSettled([b.submit(1), b.submit(2), b.submit(3)]);
    // 1 runs at once; 2 waits 40 ms > 30 ms and times out; 3 finds the queue full (1 and 2 waiting).
    expect(r[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect((r[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'queue_timeout', status: 503 });
    expect((r[2] as PromiseRejectedResult).reason).toBeInstanceOf(QueueError);
    expect(b.stats.refused).toBe(2);
  });
});

test('decodeBase64 accepts standard and URL-safe alphabets and refuses anything else', () => {
  const bytes = Buffer.from([0xfb, 0xff, 0xfe, 1, 2]);
  expect(Buffer.from(decodeBase64(bytes.toString('base64'), 'f'))).toEqual(bytes);
  expect(Buffer.from(decodeBase64(bytes.toString('base64url'), 'f'))).toEqual(bytes);
  expect(Buffer.from(decodeBase64(' ' + bytes.toString('base64').replace(/(..)/g, '$1\n'), 'f'))).toEqual(bytes);
  expect(() => decodeBase64('ab+_', 'f')).toThrow(/f: is not valid base64/);
  expect(() => decodeBase64('abcde', 'f')).toThrow(/bad length/);
});
