/**
 * autoui as a library: the whole pipeline, a verb per stage, and the types at its boundaries.
 *
 *   import { load } from 'autoui';
 *   const agent = await load('checkpoints/demo/best');
 *   const { result } = await agent.predict({ image: pngBytes, goal: 'open the Clock app', history: [] });
 *   agent.dispose();
 *
 * Everything else is internal: package.json's `exports` allows no deep imports.
 */
import { Predictor, type PredictorOptions } from './infer/predict.js';

// Data: the built-in synthetic set and shard preparation.
export { synthesize, type SynthOptions, type SynthResult } from './data/synth/writer.js';
export { prepareFromFiles as prepare, type PrepareRequest, type PrepareSummary } from './data/prepare.js';
// Screen features.
export { loadEncoder, ENCODER_SPECS } from './screen/vision/index.js';
export type { EncoderInfo, VisionEncoder } from './screen/vision/encoder.js';
// The model and how to train it.
export { PRESETS, type ModelConfig, type PresetName } from './model/config.js';
export { RECIPES, type RecipeName, type TrainRecipe } from './train/recipes.js';
export { recipeOptions, type TrainOptions, type TrainResult } from './train/trainer.js';
export { train } from './pipeline/train.js';
export { runDemo, type DemoOptions, type DemoResult } from './pipeline/demo.js';
// Scoring: AITW action matching and Auto-UI's accuracies.
export { checkActionsMatch } from './eval/action_matching.js';
export { scoreItems, type Report, type Metrics, type ScoredItem } from './eval/metrics.js';
export { evaluateCheckpoint, type EvalOptions } from './eval/run.js';
// Inference and serving.
export { Predictor, type PredictorOptions, type PredictInput, type PredictionResult, type ModelInfo } from './infer/predict.js';
export { startServer, type ServeOptions, type AutouiServer } from './infer/server.js';
// The action space.
export { ActionType, type AitwAction, type ActionTypeId, type ActionTypeName, type YX, type Box, type RawImage } from './data/types.js';
export { InputError } from './util/errors.js';

/**
 * Loads a checkpoint directory (or a training output with best/) and its vision encoder: `predict()`, `info()`,
 * `dispose()`. Several directories: checkpoints that answer as one (infer/ensemble.ts).
 */
export function load(checkpoint: string | readonly string[], opts: PredictorOptions = {}): Promise<Predictor> {
  return Predictor.load(checkpoint, opts);
}
