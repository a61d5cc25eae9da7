import type { RawImage } from '../types.js';

/**
 * What a frozen vision encoder produces. `id` is its identity: shards and checkpoints record it,
 * and features from two encoders with different ids must never be mixed.
 */
export interface EncoderInfo {
  /** e.g. 'builtin-v5'; bump the version whenever the features change. */
  id: string;
  /** Feature vectors per screen (1 when pooled). */
  patches: number;
  /** Width of each feature vector. */
  dim: number;
  /** Patch layout, row-major (`patches === rows * cols`); null for pooled or non-grid encoders. */
  grid: [rows: number, cols: number] | null;
  /** True when the encoder gives one vector per screen (BLIP-2 style), false for patch grids. */
  pooled: boolean;
}

/** A frozen image encoder: screens in, `patches × dim` row-major features out. Never trained. */
export interface VisionEncoder {
  readonly info: EncoderInfo;
  /** One Float32Array of length `patches * dim` per image, in input order. */
  encode(images: RawImage[]): Promise<Float32Array[]>;
  dispose?(): void;
}

/** True when two encoders give interchangeable features. */
export function sameEncoder(a: EncoderInfo, b: EncoderInfo): boolean {
  return (
    a.id === b.id &&
    a.patches === b.patches &&
    a.dim === b.dim &&
    a.pooled === b.pooled &&
    JSON.stringify(a.grid) === JSON.stringify(b.grid)
  );
}
