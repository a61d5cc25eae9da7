import { readFile } from 'node:fs/promises';
import { InputError } from './errors.js';

/*
 * The safetensors format by hand: npm has no maintained implementation, and the format is a
 * 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then raw
 * little-endian bytes — small enough that a dependency would cost more than it saves.
 */

export type DType = 'F32' | 'F16' | 'BF16' | 'I32' | 'I64';

export interface NamedTensor {
  dtype: DType;
  shape: number[];
  /** F32 as Float32Array; I32 as Int32Array; F16/BF16/I64 only when reading (converted to Float32 / Int32). */
  data: Float32Array | Int32Array;
}

const BYTES: Record<DType, number> = { F32: 4, F16: 2, BF16: 2, I32: 4, I64: 8 };

export function encodeSafetensors(tensors: Map<string, NamedTensor>, metadata: Record<string, string> = {}): Uint8Array {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  const names = [...tensors.keys()].sort();
  for (const name of names) {
    const t = tensors.get(name)!;
    if (t.dtype !== 'F32' && t.dtype !== 'I32') throw new Error(`safetensors: writing ${t.dtype} is not supported (${name})`);
    const size = t.data.length * 4;
    const expected = t.shape.reduce((a, b) => a * b, 1);
    if (expected !== t.data.length) throw new Error(`safetensors: ${name} has ${t.data.length} values for shape [${t.shape}]`);
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  // Pad the header with spaces so the data starts 8-byte aligned, as the reference writer does.
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const headerBytes = Buffer.from(json, 'utf8');
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let pos = 8 + headerBytes.length;
  for (const name of names) {
    const t = tensors.get(name)!;
    out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), pos);
    pos += t.data.byteLength;
  }
  return out;
}

export function decodeSafetensors(bytes: Uint8Array, where: string): { tensors: Map<string, NamedTensor>; metadata: Record<string, string> } {
  if (bytes.length < 8) throw new InputError('not a safetensors file (shorter than 8 bytes)', where);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = Number(view.getBigUint64(0, true));
  if (8 + headerLen > bytes.length) throw new InputError(`header length ${headerLen} runs past the end of the file`, where);
  let header: Record<string, { dtype: DType; shape: number[]; data_offsets: [number, number] } | Record<string, string>>;
  try {
    header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + headerLen)).toString('utf8'));
  } catch (err) {
    throw new InputError(`header is not JSON (${(err as Error).message})`, where);
  }
  const base = 8 + headerLen;
  const tensors = new Map<string, NamedTensor>();
  let metadata: Record<string, string> = {};
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = entry as Record<string, string>;
      continue;
    }
    const { dtype, shape, data_offsets } = entry as { dtype: DType; shape: number[]; data_offsets: [number, number] };
    if (!(dtype in BYTES)) throw new InputError(`tensor '${name}' has unsupported dtype ${dtype}`, where);
    const n = shape.reduce((a, b) => a * b, 1);
    const [start, end] = data_offsets;
    if (end - start !== n * BYTES[dtype] || base + end > bytes.length)
      throw new InputError(`tensor '${name}' byte range [${start}, ${end}) does not fit shape [${shape}] ${dtype}`, where);
    const raw = bytes.slice(base + start, base + end);
    tensors.set(name, { dtype, shape, data: convert(raw, dtype, n) });
  }
  return { tensors, metadata };
}

function convert(raw: Uint8Array, dtype: DType, n: number): Float32Array | Int32Array {
  const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  switch (dtype) {
    case 'F32':
      return new Float32Array(raw.buffer, raw.byteOffset, n);
    case 'I32':
      return new Int32Array(raw.buffer, raw.byteOffset, n);
    case 'I64': {
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) out[i] = Number(dv.getBigInt64(i * 8, true));
      return out;
    }
    case 'BF16': {
      const out = new Float32Array(n);
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) u[i] = dv.getUint16(i * 2, true) << 16;
      return out;
    }
    case 'F16': {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = halfToFloat(dv.getUint16(i * 2, true));
      return out;
    }
  }
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? NaN : s * Infinity;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

export async function readSafetensors(path: string): Promise<{ tensors: Map<string, NamedTensor>; metadata: Record<string, string> }> {
  return decodeSafetensors(new Uint8Array(await readFile(path)), path);
}

