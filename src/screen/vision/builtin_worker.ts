/** A worker thread of ParallelEncoder (parallel.ts): encodes a chunk of screens with the built-in encoder. */
import type { RawImage } from '../types.js';
import { BuiltinEncoder } from './builtin.js';

const encoder = new BuiltinEncoder();

export default function encode(images: RawImage[]): Promise<Float32Array[]> {
  return encoder.encode(images);
}
