/** The copy pointer (model/copy.ts): typed text drawn from the vocabulary and from the goal's positions. */
import * as tf from '@tensorflow/tfjs-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../src/backend.js';
import { ActionType, type AitwAction } from '../src/data/types.js';
import { greedyDecode } from '../src/infer/generate.js';
import { AutoUiModel } from '../src/model/autoui.js';
import { goalMaskBatch, inputBatch, padIds } from '../src/model/batch.js';
import { ActionCodec } from '../src/model/codec.js';
import { modelConfig } from '../src/model/config.js';
import { TargetConstraint } from '../src/model/constrained.js';
import { copyLogProbs, copyLoss, copyPositionLoss, copySource, pointCopy, pointedPiece, type CopyWeights } from '../src/model/copy.js';
import { buildWordTokenizer } from '../src/model/tokenizer.js';
import '../src/model/register_gradients.js';
import { disposeBatch, microConfig, randomBatch, rng } from './model_fixtures.js';

beforeAll(async () => {
  await initBackend('wasm');
});

const zeroWeights = (d: number): CopyWeights => ({
  pointer: tf.zeros([d, d]) as tf.Tensor2D, gate: tf.zeros([1, d]) as tf.Tensor2D, gateBias: tf.zeros([1]) as tf.Tensor1D, stop: tf.zeros([1, d]) as tf.Tensor2D, stopBias: tf.zeros([1]) as tf.Tensor1D,
});
const EOS = 1;

describe('copyLogProbs', () => {
  it('untrained (zero weights): half the vocabulary softmax, half a uniform look at the goal and the place after it, each position copied or stopped at even odds', () => {
    // Input ids 5 7 5 | 9 (history): the goal holds 5 twice and 7 once; the place after it (id 9) only stops.
    const source = copySource(tf.randomNormal([1, 4, 3], 0, 1, 'float32', 1) as tf.Tensor3D, tf.tensor2d([[5, 7, 5, 9]], [1, 4], 'int32'), tf.tensor2d([[1, 1, 1, 0]], [1, 4], 'int32'));
    const p = tf.exp(copyLogProbs(tf.ones([1, 1, 3]) as tf.Tensor3D, tf.zeros([1, 1, 10]) as tf.Tensor3D, source, zeroWeights(3), EOS)).arraySync()[0]![0]!;
    expect(p[5]).toBeCloseTo(0.05 + 0.5 * (2 / 4) * 0.5, 5);
    expect(p[7]).toBeCloseTo(0.05 + 0.5 * (1 / 4) * 0.5, 5);
    expect(p[EOS]).toBeCloseTo(0.05 + 0.5 * ((3 / 4) * 0.5 + 1 / 4), 5);
    expect(p[9]).toBeCloseTo(0.05, 5);
    expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
  });

  it('a pointer at the place after the goal stops: the text ends with the goal', () => {
    const source = copySource(tf.tensor3d([[[1, 0], [0, 1]]]), tf.tensor2d([[4, 9]], [1, 2], 'int32'), tf.tensor2d([[1, 0]], [1, 2], 'int32'));
    const w: CopyWeights = { ...zeroWeights(2), pointer: tf.mul(tf.eye(2), 40) as tf.Tensor2D, gateBias: tf.tensor1d([-30]), stopBias: tf.tensor1d([-30]) };
    const lp = copyLogProbs(tf.tensor3d([[[-1, 1]]]), tf.zeros([1, 1, 10]) as tf.Tensor3D, source, w, EOS).arraySync()[0]![0]!;
    expect(lp[EOS]).toBeGreaterThan(-1e-3);
  });

  it('with the gate shut and a pointer that agrees with one position, it copies that position\'s token', () => {
    const source = copySource(tf.tensor3d([[[1, 0], [0, 1], [1, 1]]]), tf.tensor2d([[4, 6, 8]], [1, 3], 'int32'), tf.ones([1, 3], 'int32') as tf.Tensor2D);
    const w: CopyWeights = { ...zeroWeights(2), pointer: tf.mul(tf.eye(2), 40) as tf.Tensor2D, gateBias: tf.tensor1d([-30]), stopBias: tf.tensor1d([-30]) };
    const lp = copyLogProbs(tf.tensor3d([[[-1, 1]]]), tf.zeros([1, 1, 9]) as tf.Tensor3D, source, w, EOS).arraySync()[0]![0]!;
    expect(lp[6]).toBeGreaterThan(-1e-3);
    expect(lp[4]).toBeLessThan(-10);
  });

  it('its loss has the gradient finite differences give (gate and stop biases, pointer weight)', () => {
    const source = copySource(tf.randomNormal([2, 5, 4], 0, 1, 'float32', 2) as tf.Tensor3D, tf.tensor2d([[3, 4, 5, 3, 2], [6, 6, 2, 7, 1]], [2, 5], 'int32'), tf.tensor2d([[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]], [2, 5], 'int32'));
    const hidden = tf.randomNormal([2, 3, 4], 0, 1, 'float32', 3) as tf.Tensor3D;
    const logits = tf.randomNormal([2, 3, 8], 0, 1, 'float32', 4) as tf.Tensor3D;
    const labels = tf.tensor2d([[3, 5, 1], [6, 7, 0]], [2, 3], 'int32');
    const steps = tf.tensor2d([[1, 1, 1], [1, 0, 0]], [2, 3], 'int32');
    const pointer = tf.randomNormal([4, 4], 0, 0.5, 'float32', 5) as tf.Tensor2D;
    const gate = tf.randomNormal([1, 4], 0, 0.5, 'float32', 6) as tf.Tensor2D;
    const stop = tf.randomNormal([1, 4], 0, 0.5, 'float32', 7) as tf.Tensor2D;
    const loss = (p: tf.Tensor, b: tf.Tensor, sb: tf.Tensor) =>
      copyLoss(copyLogProbs(hidden, logits, source, { pointer: p as tf.Tensor2D, gate, gateBias: b as tf.Tensor1D, stop, stopBias: sb as tf.Tensor1D }, EOS), labels, steps);
    const bias = tf.tensor1d([0.3]);
    const stopBias = tf.tensor1d([-0.2]);
    const [gp, gb, gs] = tf.grads(loss)([pointer, bias, stopBias]);
    const eps = 1e-2;
    const at = (p: tf.Tensor, b: tf.Tensor, sb: tf.Tensor) => loss(p, b, sb).dataSync()[0]!;
    expect(gb!.dataSync()[0]).toBeCloseTo((at(pointer, tf.add(bias, eps), stopBias) - at(pointer, tf.sub(bias, eps), stopBias)) / (2 * eps), 2);
    expect(gs!.dataSync()[0]).toBeCloseTo((at(pointer, bias, tf.add(stopBias, eps)) - at(pointer, bias, tf.sub(stopBias, eps))) / (2 * eps), 2);
    const bump = tf.tensor2d([[0, 0, 0, 0], [0, 0, eps, 0], [0, 0, 0, 0], [0, 0, 0, 0]]);
    const numP = (at(tf.add(pointer, bump), bias, stopBias) - at(tf.sub(pointer, bump), bias, stopBias)) / (2 * eps);
    expect(gp!.arraySync()[1]![2]).toBeCloseTo(numP, 2);
  });
});

describe('the copy context (copyContext)', () => {
  // Four ids the embeddings tell apart; keys H the same at every position, so only the context moves the pointer.
  const embeddings = tf.tensor2d([[0, 0], [1, 0], [0, 1], [1, 1]]);
  const weight = tf.tensor2d([[3, 0, 0, 0], [0, 0, 0, 2]]); // W_x [d=2, 2d]: the first unit reads x_i−1's first coordinate, the second x_i−2's second
  const keys = tf.ones([1, 5, 2]) as tf.Tensor3D;
  const goal = tf.ones([1, 5], 'int32') as tf.Tensor2D;
  const weights = (context: boolean): CopyWeights => ({ ...zeroWeights(2), pointer: tf.eye(2) as tf.Tensor2D, ...(context ? { context: { embeddings, weight } } : {}) });
  const look = (ids: number[], context = true) => pointCopy(tf.tensor3d([[[1, 1]]]), copySource(keys, tf.tensor2d([ids], [1, 5], 'int32'), goal, weights(context).context), weights(context)).a.arraySync()[0]![0]!;

  it('a position\'s score moves with the two ids before it, not with its own or later ones', () => {
    const base = look([0, 0, 0, 0, 0]);
    expect(base.every((p) => Math.abs(p - 0.2) < 1e-6)).toBe(true);
    // Id 1 at position 1 raises position 2 (its x_i−1) alone: 2 and 3 (x_i−2) read its second coordinate, 0.
    const one = look([0, 1, 0, 0, 0]);
    const ratio = one.map((p) => p / one[0]!);
    expect(ratio[2]).toBeCloseTo(Math.exp(3 / Math.SQRT2), 4);
    for (const i of [1, 3, 4]) expect(ratio[i]).toBeCloseTo(1, 5);
    // Id 2 at position 1 raises position 3 alone (x_i−2's second coordinate).
    const two = look([0, 2, 0, 0, 0]).map((p, _, a) => p / a[0]!);
    expect(two[3]).toBeCloseTo(Math.exp(2 / Math.SQRT2), 4);
    for (const i of [1, 2, 4]) expect(two[i]).toBeCloseTo(1, 5);
    // Without the context the ids do not move the pointer at all.
    expect(look([0, 1, 2, 3, 1], false).every((p) => Math.abs(p - 0.2) < 1e-6)).toBe(true);
  });

  // Fused states H, zero but at position 1 (W_x's first unit reads H_i−1's first coordinate, ×3), and any ids: 'states' reads no ids.
  const states = tf.tensor3d([[[0, 0], [1, 0], [0, 0], [0, 0], [0, 0]]]);
  const stateIds = tf.tensor2d([[0, 1, 2, 3, 1]], [1, 5], 'int32');

  it("'states': a position's score moves with the fused states of the two places before it, and the pointer's loss reaches them", () => {
    const w: CopyWeights = { ...zeroWeights(2), pointer: tf.eye(2) as tf.Tensor2D, context: { weight } };
    const a = pointCopy(tf.tensor3d([[[1, 1]]]), copySource(states, stateIds, goal, w.context), w).a.arraySync()[0]![0]!;
    const ratio = a.map((p) => p / a[0]!);
    expect(ratio[1]).toBeCloseTo(Math.exp(1 / Math.SQRT2), 4); // its own H
    expect(ratio[2]).toBeCloseTo(Math.exp(3 / Math.SQRT2), 4); // H_i−1 through W_x
    for (const i of [3, 4]) expect(ratio[i]).toBeCloseTo(1, 5);
    // The gradient of the pointed weight at position 2 reaches H_1 through W_x, not only H_2.
    const grad = tf.grad((h: tf.Tensor) => tf.slice(pointCopy(tf.tensor3d([[[1, 1]]]), copySource(h as tf.Tensor3D, stateIds, goal, w.context), w).a, [0, 0, 2], [1, 1, 1]).sum())(states);
    expect(grad.arraySync()[0]![1]![0]).toBeGreaterThan(0.1);
  });

  it("with the stop context: a place's stop moves with the fused state before it, which the stop alone does not read", () => {
    // The stop reads the first coordinate: of H_i alone, or of K_i = H_i + W_x [H_i−1; H_i−2].
    const stops = (stop: boolean): number[] => {
      const w: CopyWeights = { ...zeroWeights(2), stop: tf.tensor2d([[1, 0]]), context: { weight, stop } };
      return Array.from(pointCopy(tf.tensor3d([[[1, 1]]]), copySource(states, stateIds, goal, w.context), w).stop.dataSync());
    };
    const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
    const alone = stops(false);
    expect(alone[1]).toBeCloseTo(sigmoid(1), 5);
    expect(alone[2]).toBeCloseTo(0.5, 5);
    const context = stops(true);
    expect(context[1]).toBeCloseTo(sigmoid(1), 5);
    expect(context[2]).toBeCloseTo(sigmoid(3), 5); // the place after the one whose state says "a word ended here"
    for (const i of [0, 3, 4]) expect(context[i]).toBeCloseTo(0.5, 5);
  });

  it('in the model: W_x starts at zero, so the loss is the plain pointer\'s; the position loss trains it', () => {
    const plain = new AutoUiModel(microConfig({ copyPointer: true }), 5);
    const model = new AutoUiModel(microConfig({ copyPointer: true, copyContext: true }), 5);
    const wx = model.namedWeights().get('copy_context.weight')!;
    expect(wx.shape).toEqual([16, 32]);
    expect(tf.abs(wx).sum().dataSync()[0]).toBe(0);
    const batch = randomBatch(model, 2, 5, 4, 6, 9);
    const goal = tf.tensor2d([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], [2, 5], 'int32');
    const copy = { steps: tf.tensor2d([[0, 0, 1, 1], [0, 0, 0, 1]], [2, 4], 'int32'), goal, at: tf.tensor2d([[-1, -1, 2, 1], [-1, -1, -1, 1]], [2, 4], 'int32') };
    const weights = { ground: 0, refer: 0, copy: 1 };
    const loss = (m: AutoUiModel) => tf.tidy(() => m.loss({ ...batch, copy }, false, weights).dataSync()[0]!);
    expect(loss(model)).toBeCloseTo(loss(plain), 5);
    // W_c is zero at first too, and with it every key's gradient: give the pointer a look first.
    model.namedWeights().get('copy_pointer.weight')!.assign(tf.randomNormal([16, 16], 0, 0.5, 'float32', 3));
    const { grads } = tf.variableGrads(() => model.loss({ ...batch, copy }, true, weights), [wx]);
    expect(tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]).toBeGreaterThan(0);
    expect(() => new AutoUiModel(microConfig({ copyContext: true }), 5)).toThrow(/copyContext needs copyPointer/);
    // A checkpoint's config reads true or 'states'; any other value is named, not read as on.
    expect(() => new AutoUiModel(microConfig({ copyPointer: true, copyContext: 'ids' as unknown as 'states' }), 5)).toThrow(/copyContext must be a boolean or 'states', got "ids"/);
    expect(() => new AutoUiModel(microConfig({ copyPointer: true, copyStopContext: true }), 5)).toThrow(/copyStopContext needs copyContext/);
    expect(() => new AutoUiModel(microConfig({ copyPointer: true, copyContext: 'states', copyStopContext: 'yes' as unknown as boolean }), 5)).toThrow(/copyStopContext must be a boolean, got "yes"/);
    tf.dispose([...Object.values(grads), copy.steps, copy.at, goal]);
    disposeBatch(batch);
    plain.dispose();
    model.dispose();
  });
});

describe('copyLoss', () => {
  it('sums −log p of the marked steps only', () => {
    const lp = tf.log(tf.tensor3d([[[0.5, 0.25, 0.25], [0.1, 0.8, 0.1]]]));
    const v = copyLoss(lp, tf.tensor2d([[0, 1]], [1, 2], 'int32'), tf.tensor2d([[1, 0]], [1, 2], 'int32')).dataSync()[0]!;
    expect(v).toBeCloseTo(Math.log(2), 5);
  });
});

describe('copyPositionLoss', () => {
  it('sums −log of the pointer at each known position and of its stop: shut on copied ids, open at the end', () => {
    const a = [[[0.6, 0.3, 0.1], [0.2, 0.1, 0.7], [0.3, 0.3, 0.4]]];
    const s = [0.1, 0.4, 0.9];
    const pointing = { a: tf.tensor3d(a), stop: tf.tensor3d([s.map((v) => [v])]) };
    // Step 0 copies position 0, step 1 ends at position 2, step 2 has no known position.
    const v = copyPositionLoss(pointing, tf.tensor2d([[0, 2, -1]], [1, 3], 'int32'), tf.tensor2d([[0, 1, 0]], [1, 3], 'int32')).dataSync()[0]!;
    expect(v).toBeCloseTo(-(Math.log(0.6) + Math.log(1 - 0.1)) - (Math.log(0.7) + Math.log(0.9)), 4);
  });
});

describe('pointedPiece', () => {
  it('of the places a word stands at, the one the pointer weighs most; pieces placed after the ids before them', () => {
    // "look up ada and go to ada ito", one id per piece: " ada" at pieces (and places) 2 and 6.
    const ones = [1, 1, 1, 1, 1, 1, 1, 1];
    expect(pointedPiece([2, 6], ones, [0, 0, 0.8, 0, 0, 0, 0.2, 0, 0])).toBe(2);
    expect(pointedPiece([2, 6], ones, [0, 0, 0.1, 0, 0, 0, 0.2, 0.7, 0])).toBe(6);
    // Pieces of 2, 1 and 3 ids start at places 0, 2 and 3.
    expect(pointedPiece([0, 2], [2, 1, 3], [0.2, 0, 0.5, 0.3])).toBe(2);
    expect(pointedPiece([0, 2], [2, 1, 3], [0.4, 0, 0.5, 0.3])).toBe(0);
  });
});

describe('the copy pointer in the model', () => {
  it('without text steps the loss is the plain model\'s; with them it differs and trains W_c (zero at first)', () => {
    const plain = new AutoUiModel(microConfig(), 5);
    const model = new AutoUiModel(microConfig({ copyPointer: true }), 5);
    const w = model.namedWeights().get('copy_pointer.weight')!;
    expect(tf.abs(w).sum().dataSync()[0]).toBe(0);
    const random = randomBatch(model, 2, 5, 4, 6, 9);
    // The text steps' labels are goal tokens, so the pointer has something to find.
    const ids = random.inputIds.arraySync();
    const labels = random.labels.arraySync().map((row, b) => row.map((v, t) => (t >= 2 ? ids[b]![t - 2]! : v)));
    tf.dispose(random.labels);
    const batch = { ...random, labels: tf.tensor2d(labels, [2, 4], 'int32') };
    const goal = tf.tensor2d([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], [2, 5], 'int32');
    const none = { steps: tf.zeros([2, 4], 'int32') as tf.Tensor2D, goal };
    const some = { steps: tf.tensor2d([[0, 0, 1, 1], [0, 0, 0, 1]], [2, 4], 'int32'), goal };
    const loss = (m: AutoUiModel, b: typeof batch) => tf.tidy(() => m.loss(b, false).dataSync()[0]!);
    expect(loss(model, { ...batch, copy: none })).toBeCloseTo(loss(plain, batch), 5);
    expect(loss(model, { ...batch, copy: some })).not.toBeCloseTo(loss(plain, batch), 3);
    // Known positions add weight × L_pos (linear in the weight); without a weight they change nothing.
    const at = tf.tensor2d([[-1, -1, 0, 3], [-1, -1, -1, 2]], [2, 4], 'int32');
    const weighted = (w: number) => tf.tidy(() => model.loss({ ...batch, copy: { ...some, at } }, false, { ground: 0, refer: 0, copy: w }).dataSync()[0]!);
    expect(weighted(0)).toBeCloseTo(loss(model, { ...batch, copy: some }), 5);
    expect(weighted(1)).toBeGreaterThan(weighted(0) + 1e-3);
    expect(weighted(2) - weighted(0)).toBeCloseTo(2 * (weighted(1) - weighted(0)), 4);
    at.dispose();
    const { grads } = tf.variableGrads(() => model.loss({ ...batch, copy: some }, true), [w]);
    expect(tf.abs(Object.values(grads)[0]!).sum().dataSync()[0]).toBeGreaterThan(0);
    tf.dispose([...Object.values(grads), none.steps, some.steps, goal]);
    disposeBatch(batch);
    plain.dispose();
    model.dispose();
  });
});

describe('codec.textSteps', () => {
  it('marks a TYPE action\'s text and its eos, nothing for other actions', () => {
    const codec = new ActionCodec(buildWordTokenizer(['search for cats', 'cats'], { minCount: 1 }), { copyText: true });
    const type: AitwAction = { action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: 'cats' };
    const target = codec.encodeTarget([ActionType.TYPE, ActionType.PRESS_ENTER], type, 'search for cats');
    const text = target.length - 1 - (target.indexOf(codec.actId) + 2);
    expect(codec.textSteps(target)).toEqual(Array.from({ length: text + 1 }, (_, k) => target.indexOf(codec.actId) + 2 + k));
    expect(target[codec.textSteps(target).at(-1)!]).toBe(codec.eosId);
    const back: AitwAction = { action_type: ActionType.PRESS_BACK, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: '' };
    expect(codec.textSteps(codec.encodeTarget([ActionType.PRESS_BACK], back))).toEqual([]);
  });
});

/**
 * A copy task no vocabulary can learn by heart: goals name two made-up words, and the text to type
 * is the one after "for". Names are spelled in bytes; the test names never occur in training.
 */
describe('copying names training never saw', () => {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const name = (r: () => number) => Array.from({ length: 4 + Math.floor(r() * 3) }, () => letters[Math.floor(r() * 26)]).join('');
  const task = (r: () => number) => {
    const [app, query] = [name(r), name(r)];
    return { goal: `open ${app} and search for ${query}`, text: query };
  };
  const codec = new ActionCodec(buildWordTokenizer(Array.from({ length: 20 }, () => 'open and search for'), { minCount: 1 }), { copyText: true, coordBins: 10 });
  const typeAction = (text: string): AitwAction => ({ action_type: ActionType.TYPE, touch_yx: [-1, -1], lift_yx: [-1, -1], typed_text: text });

  /** Exact typed texts on unseen names, decoded greedily and with the text beam (width 4). */
  // A search goal whose name to open repeats the query, before or after another name: the query is told by its place alone.
  const searchTask = (r: () => number) => {
    const [other, query] = [name(r), name(r)];
    return { goal: `search for ${query} and open ${r() < 0.5 ? `${other} ${query}` : `${query} ${other}`}`, text: query };
  };
  const trainAndType = (copyPointer: boolean, copyContext = false, draw = task): { greedy: number; beam: number } => {
    const config = modelConfig('tiny', { vocabSize: codec.vocabSize, screenDim: 4, dModel: 32, dKv: 8, numHeads: 4, dFf: 64, dropoutRate: 0, copyPointer, copyContext });
    const model = new AutoUiModel(config, 1);
    const opt = tf.train.adam(1e-2);
    const r = rng(7);
    const batchOf = (tasks: { goal: string; text: string }[]) => {
      const inputs = tasks.map((t) => codec.encodeInput(t.goal, []));
      const targets = tasks.map((t) => codec.encodeTarget([ActionType.TYPE], typeAction(t.text), t.goal));
      const { ids, len } = padIds(targets, -100);
      const steps = new Int32Array(ids.length);
      targets.forEach((t, b) => codec.textSteps(t).forEach((k) => (steps[b * len + k] = 1)));
      return {
        ...inputBatch(inputs, codec.tokenizer.padId),
        screen: tf.zeros([tasks.length, 2, 4]) as tf.Tensor3D,
        labels: tf.tensor2d(ids, [tasks.length, len], 'int32'),
        copy: { steps: tf.tensor2d(steps, [tasks.length, len], 'int32'), goal: goalMaskBatch(inputs, codec) },
        inputs,
      };
    };
    for (let step = 0; step < 120; step++) {
      const b = batchOf(Array.from({ length: 16 }, () => draw(r)));
      tf.dispose(opt.minimize(() => model.loss(b, true), true, model.trainableVariables()));
      tf.dispose([b.inputIds, b.inputMask, b.screen, b.labels, b.copy.steps, b.copy.goal]);
    }
    const test = Array.from({ length: 24 }, () => draw(rng(99 + Math.floor(r() * 1e6))));
    const b = batchOf(test);
    const decode = (textBeams: number) => greedyDecode(model, codec, new TargetConstraint(codec), b, { textBeams });
    const exact = (gens: ReturnType<typeof decode>) => gens.filter((g, i) => g.result.ok && g.result.action.typed_text === test[i]!.text).length / test.length;
    const [greedy, beam] = [decode(1), decode(4)];
    // Once more, counted: the first decoding also fills the model's weight caches.
    const tensors = tf.memory().numTensors;
    decode(1);
    decode(4);
    const leaked = tf.memory().numTensors - tensors;
    // The beam's choices: the typed text first, each text once; greedy decoding lists none.
    const typing = beam.filter((g) => g.result.ok && g.result.action.action_type === ActionType.TYPE);
    const choicesListed = typing.length > 0 && typing.every((g) => g.result.ok && g.textChoices[0]?.text === g.result.action.typed_text && new Set(g.textChoices.map((c) => c.text)).size === g.textChoices.length);
    const rates = { greedy: exact(greedy), beam: exact(beam), choicesListed, greedyChoices: greedy.flatMap((g) => g.textChoices).length, leaked };
    tf.dispose([b.inputIds, b.inputMask, b.screen, b.labels, b.copy.steps, b.copy.goal]);
    opt.dispose();
    model.dispose();
    return rates;
  };

  it('the copy pointer types the query after "for" exactly; the vocabulary alone, in the same steps, mostly does not', () => {
    const withPointer = trainAndType(true);
    const without = trainAndType(false);
    expect(withPointer.greedy).toBeGreaterThanOrEqual(0.9);
    expect(withPointer.beam).toBeGreaterThanOrEqual(0.9);
    expect(withPointer.choicesListed).toBe(true);
    expect(withPointer.greedyChoices).toBe(0);
    expect(withPointer.leaked).toBe(0);
    expect(without.greedy).toBeLessThan(0.75);
  }, 180_000);

  it('with the copy context, the pointer types a search\'s query where the name to open repeats it (its keys made once a batch, and freed)', () => {
    const typed = trainAndType(true, true, searchTask);
    expect(typed.greedy).toBeGreaterThanOrEqual(0.9);
    expect(typed.leaked).toBe(0);
  }, 180_000);
});
