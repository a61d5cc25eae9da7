/** A worker thread of ParallelEncoder (parallel.ts): encodes a chunk of screens with the built-in encoder. */
import { Piscina } from 'piscina';
import type { RawImage } from '../types.js';
import { BuiltinEncoder } from './builtin.js';

const encoder = new BuiltinEncoder();

/** The chunk's features side by side in one buffer, moved (not copied) back to the caller. */
export default async function encode(images: RawImage[]): Promise<Float32Array> {
  const features = await encoder.encode(images);
  const size = encoder.info.dim * encoder.info.patches;
  const out = new Float32Array(features.length * size);
  features.forEach((f, i) => out.set(f, i * size));
  return Piscina.move(out) as Float32Array;
}
