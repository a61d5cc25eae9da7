import {
  AutoImageProcessor, AutoModel, CLIPVisionModel, LogLevel, RawImage as HfRawImage, SiglipVisionModel, Tensor, env,
} from '@huggingface/transformers';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { RawImage } from '../types.js';
import { InputError } from '../../util/errors.js';
import { checkRawImage } from './builtin.js';
import type { EncoderInfo, VisionEncoder } from './encoder.js';
import type { FeatureMode, TransformersKind } from './feature_modes.js';

/**
 * Frozen ONNX vision towers from a local Hugging Face folder, run by transformers.js on
 * onnxruntime-node (CPU). Remote loading is switched off: nothing is ever downloaded.
 *
 * Folder layout (what `optimum-cli export onnx` and the Xenova/* repos produce):
 *   config.json               model_type clip_vision_model / siglip_vision_model / clip / siglip …
 *   preprocessor_config.json  resize, crop, rescale, normalise (applied by transformers.js)
 *   onnx/vision_model.onnx    (CLIP/SigLIP repos with both towers) or onnx/model.onnx
 *
 * Outputs: `last_hidden_state` [B, T, D] and `pooler_output` [B, D] (or `image_embeds`).
 * Which of them become features is the FeatureMode (feature_modes.ts).
 */

export type { FeatureMode, TransformersKind } from './feature_modes.js';

interface OutputTensor {
  dims: number[];
  data: Float32Array;
}
type VisionModel = ((inputs: { pixel_values: Tensor }) => Promise<Record<string, OutputTensor>>) & { dispose(): Promise<unknown> };
type ImageProcessor = (images: HfRawImage[]) => Promise<{ pixel_values: Tensor }>;

type Json = Record<string, unknown>;

async function readJson(path: string): Promise<Json> {
  if (!existsSync(path)) throw new InputError('missing (a transformers.js vision model folder needs config.json and preprocessor_config.json)', path);
  try {
    const j = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (typeof j !== 'object' || j === null || Array.isArray(j)) throw new Error('not a JSON object');
    return j as Json;
  } catch (err) {
    throw new InputError(`not valid JSON (${(err as Error).message})`, path);
  }
}

/** Streams files into one digest: the identity must change whenever weights or preprocessing do. */
async function digest(paths: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const p of paths) {
    h.update(`${p.split('/').pop()}\0`);
    for await (const chunk of createReadStream(p)) h.update(chunk as Buffer);
  }
  return h.digest('hex').slice(0, 16);
}

/** Our screens → 3-channel RGB (grey replicated, alpha dropped), as every CLIP-family processor expects. */
export function toRgb(img: RawImage): HfRawImage {
  const { width, height, channels, data } = img;
  if (channels === 3) return new HfRawImage(new Uint8ClampedArray(data.buffer, data.byteOffset, data.length), width, height, 3);
  const n = width * height;
  const out = new Uint8ClampedArray(n * 3);
  for (let i = 0; i < n; i++) {
    const j = i * channels;
    const grey = channels <= 2;
    out[i * 3] = data[j]!;
    out[i * 3 + 1] = grey ? data[j]! : data[j + 1]!;
    out[i * 3 + 2] = grey ? data[j]! : data[j + 2]!;
  }
  return new HfRawImage(out, width, height, 3);
}

/** Which ONNX file of the folder holds the image tower. */
function modelFile(dir: string): string {
  for (const name of ['vision_model', 'model']) if (existsSync(join(dir, 'onnx', `${name}.onnx`))) return name;
  throw new InputError('no onnx/vision_model.onnx or onnx/model.onnx here (export one with `optimum-cli export onnx`)', dir);
}

export interface TransformersEncoderOptions {
  kind?: TransformersKind;
  mode?: FeatureMode;
}

export class TransformersEncoder implements VisionEncoder {
  private constructor(
    readonly info: EncoderInfo,
    private readonly model: VisionModel,
    private readonly processor: ImageProcessor,
    private readonly layout: { tokens: number; skip: number; pooledKey: string | null },
    private readonly mode: FeatureMode,
    private readonly where: string,
  ) {}

  /** Loads a folder and runs one blank screen through it to learn the output shapes. */
  static async load(dir: string, opts: TransformersEncoderOptions = {}): Promise<TransformersEncoder> {
    const kind = opts.kind ?? 'auto';
    const mode = opts.mode ?? 'patches';
    const root = resolve(dir);
    if (!existsSync(root)) throw new InputError('no such folder', dir);
    const configPath = join(root, 'config.json');
    const config = await readJson(configPath);
    await readJson(join(root, 'preprocessor_config.json'));
    const file = modelFile(root);

    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = dirname(root);
    const options = { local_files_only: true, model_file_name: file, dtype: 'fp32', device: 'cpu' } as const;
    let model: VisionModel;
    let processor: ImageProcessor;
    // transformers.js warns that vision-only model types are "not found" and falls back to the
    // encoder-only loader, which is the right one: keep that off the user's stderr.
    const logLevel = env.logLevel;
    env.logLevel = LogLevel.ERROR;
    try {
      // An absolute path is not a hub id, so transformers.js reads straight from the folder.
      const cls = kind === 'clip' ? CLIPVisionModel : kind === 'siglip' ? SiglipVisionModel : AutoModel;
      model = (await cls.from_pretrained(root, options)) as unknown as VisionModel;
      processor = (await AutoImageProcessor.from_pretrained(root, { local_files_only: true })) as unknown as ImageProcessor;
    } catch (err) {
      throw new InputError(`transformers.js cannot load this vision model: ${(err as Error).message}`, root);
    } finally {
      env.logLevel = logLevel;
    }

    const vision = (typeof config['vision_config'] === 'object' && config['vision_config'] !== null ? config['vision_config'] : config) as Json;
    const imageSize = typeof vision['image_size'] === 'number' ? vision['image_size'] : undefined;
    const patchSize = typeof vision['patch_size'] === 'number' ? vision['patch_size'] : undefined;
    const side = imageSize && patchSize ? Math.floor(imageSize / patchSize) : 0;

    // Probe: output names and shapes decide the feature layout.
    const probe = await runModel(model, processor, [{ width: 8, height: 8, channels: 3, data: new Uint8Array(192) }], root);
    const last = probe['last_hidden_state'];
    const pooledKey = probe['pooler_output'] ? 'pooler_output' : probe['image_embeds'] ? 'image_embeds' : null;
    if (!last && mode !== 'pooled') throw new InputError(`the model gives no last_hidden_state (outputs: ${Object.keys(probe).join(', ')}); use mode 'pooled'`, root);
    if (!pooledKey && mode !== 'patches') throw new InputError(`the model gives no pooler_output or image_embeds (outputs: ${Object.keys(probe).join(', ')})`, root);
    const tokens = last ? last.dims[1]! : 0;
    const dim = last ? last.dims[2]! : probe[pooledKey!]!.dims[1]!;
    // CLIP-style towers put a class token first: one more token than the patch grid.
    const skip = side > 0 && tokens === side * side + 1 ? 1 : 0;
    const patchCount = tokens - skip;
    const grid: [number, number] | null = side > 0 && patchCount === side * side ? [side, side] : null;
    if (mode === 'patches+pooled' && probe[pooledKey!]!.dims[1] !== dim) {
      throw new InputError(`${pooledKey} has width ${probe[pooledKey!]!.dims[1]}, patches ${dim}: they cannot share rows; use 'patches' or 'pooled'`, root);
    }
    const pooledDim = pooledKey ? probe[pooledKey]!.dims[1]! : 0;
    const files = [configPath, join(root, 'preprocessor_config.json'), join(root, 'onnx', `${file}.onnx`)];
    const family = kind === 'auto' ? String(config['model_type'] ?? 'hf').replace(/_vision_model$/, '') : kind;
    const info: EncoderInfo = Object.freeze({
      id: `${family}:${await digest(files)}${mode === 'patches' ? '' : `#${mode}`}`,
      patches: mode === 'pooled' ? 1 : mode === 'patches' ? patchCount : patchCount + 1,
      dim: mode === 'pooled' ? pooledDim : dim,
      grid: mode === 'patches' ? grid : null,
      pooled: mode === 'pooled',
    });
    return new TransformersEncoder(info, model, processor, { tokens, skip, pooledKey }, mode, root);
  }

  async encode(images: RawImage[]): Promise<Float32Array[]> {
    images.forEach((img, i) => checkRawImage(img, `image ${i} of the batch`));
    if (images.length === 0) return [];
    const out = await runModel(this.model, this.processor, images, this.where);
    const { tokens, skip, pooledKey } = this.layout;
    const { patches, dim } = this.info;
    return images.map((_, b) => {
      const feats = new Float32Array(patches * dim);
      if (this.mode !== 'pooled') {
        const last = out['last_hidden_state']!.data;
        const start = (b * tokens + skip) * dim;
        feats.set(last.subarray(start, start + (tokens - skip) * dim));
      }
      if (this.mode !== 'patches') {
        const pooled = out[pooledKey!]!;
        const w = pooled.dims[1]!;
        feats.set(pooled.data.subarray(b * w, (b + 1) * w), (patches - 1) * dim);
      }
      return feats;
    });
  }

  dispose(): void {
    void this.model.dispose();
  }
}

async function runModel(model: VisionModel, processor: ImageProcessor, images: RawImage[], where: string): Promise<Record<string, OutputTensor>> {
  let inputs: { pixel_values: Tensor };
  try {
    inputs = await processor(images.map(toRgb));
  } catch (err) {
    throw new InputError(`preprocessing failed: ${(err as Error).message}`, join(where, 'preprocessor_config.json'));
  }
  try {
    return await model(inputs);
  } catch (err) {
    throw new InputError(`the ONNX model failed on a batch of ${images.length}: ${(err as Error).message}`, where);
  }
}
