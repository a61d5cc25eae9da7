/** A worker thread of ParallelEncoder (parallel.ts): encodes a chunk of screens with the built-in encoder. */
import { Piscina } from 'piscina';
import type { RawImage } from '../types.js';
import { BuiltinEncoder } from './builtin.js';

const encoder = new BuiltinEncoder();

/** The chunk's features side by side in one buffer, moved (not copied) back to the caller. */
export default async function encode(images: RawImage[]): Promise<Float32Array> {
  const out = await encoder.encodeInto(images, new Float32Array(images.length * encoder.info.dim * encoder.info.patches));
  return Piscina.move(out) as Float32Array;
}
