import protobuf from 'protobufjs';
import { InputError } from '../util/errors.js';

/**
 * tf.train.Example, schema built in code from the public field numbers of
 * tensorflow/core/example/{feature,example}.proto (proto3: repeated scalars packed, but the
 * decoder also accepts unpacked encodings as protobuf requires).
 */
const root = protobuf.Root.fromJSON({
  nested: {
    tensorflow: {
      nested: {
        BytesList: { fields: { value: { rule: 'repeated', type: 'bytes', id: 1 } } },
        FloatList: { fields: { value: { rule: 'repeated', type: 'float', id: 1, options: { packed: true } } } },
        Int64List: { fields: { value: { rule: 'repeated', type: 'int64', id: 1, options: { packed: true } } } },
        Feature: {
          oneofs: { kind: { oneof: ['bytes_list', 'float_list', 'int64_list'] } },
          fields: {
            bytes_list: { type: 'BytesList', id: 1 },
            float_list: { type: 'FloatList', id: 2 },
            int64_list: { type: 'Int64List', id: 3 },
          },
        },
        Features: { fields: { feature: { keyType: 'string', type: 'Feature', id: 1 } as protobuf.IMapField } },
        Example: { fields: { features: { type: 'Features', id: 1 } } },
      },
    },
  },
});
const ExampleType = root.lookupType('tensorflow.Example');

export type Feature =
  | { kind: 'bytes'; value: Uint8Array[] }
  | { kind: 'float'; value: number[] }
  | { kind: 'int64'; value: number[] };
export type Features = Map<string, Feature>;

/** int64 as protobufjs hands it over: a number, or a Long-like object when `long` is installed. */
type Int64Like = number | { low: number; high: number; unsigned: boolean; toString(): string };

interface ExampleMessage {
  features?: { feature?: Record<string, FeatureMessage> } | null;
}
interface FeatureMessage {
  bytes_list?: { value?: Uint8Array[] } | null;
  float_list?: { value?: number[] } | null;
  int64_list?: { value?: Int64Like[] } | null;
}

function int64ToNumber(v: Int64Like, name: string): number {
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new InputError(`int64 value ${v} is not a safe integer`, `feature '${name}'`);
    return v;
  }
  // Long: high word is signed; only values within ±2^53 survive as a JS number.
  const n = v.high * 0x100000000 + (v.low >>> 0);
  if (!Number.isSafeInteger(n)) throw new InputError(`int64 value ${v.toString()} is outside the safe integer range`, `feature '${name}'`);
  return n;
}

/** Decodes a serialized tf.train.Example. Throws InputError (without location: the caller adds file/record). */
export function decodeExample(bytes: Uint8Array): Features {
  let msg: ExampleMessage;
  try {
    msg = ExampleType.decode(bytes) as unknown as ExampleMessage;
  } catch (err) {
    throw new InputError(`not a valid tf.train.Example protobuf (${(err as Error).message})`);
  }
  const out: Features = new Map();
  const map = msg.features?.feature ?? {};
  for (const name of Object.keys(map)) {
    const f = map[name]!;
    if (f.bytes_list != null) out.set(name, { kind: 'bytes', value: f.bytes_list.value ?? [] });
    else if (f.float_list != null) out.set(name, { kind: 'float', value: f.float_list.value ?? [] });
    else if (f.int64_list != null)
      out.set(name, { kind: 'int64', value: (f.int64_list.value ?? []).map((v) => int64ToNumber(v, name)) });
    // A Feature with no kind set is what TF writes for an empty, untyped feature: report it as absent.
  }
  return out;
}

/** Serializes features as a tf.train.Example. Throws on int64 values that are not safe integers. */
export function encodeExample(features: Features): Uint8Array {
  const feature: Record<string, FeatureMessage> = {};
  for (const [name, f] of features) {
    switch (f.kind) {
      case 'bytes':
        feature[name] = { bytes_list: { value: f.value } };
        break;
      case 'float':
        feature[name] = { float_list: { value: f.value } };
        break;
      case 'int64':
        for (const v of f.value)
          if (!Number.isSafeInteger(v)) throw new RangeError(`feature '${name}': int64 value ${v} is not a safe integer`);
        feature[name] = { int64_list: { value: f.value } };
        break;
    }
  }
  // Plain objects encode directly: fromObject would only copy them.
  return ExampleType.encode({ features: { feature } }).finish();
}

/** Convenience constructors for writers. */
export const bytesFeature = (...value: Uint8Array[]): Feature => ({ kind: 'bytes', value });
export const textFeature = (...value: string[]): Feature => ({ kind: 'bytes', value: value.map((s) => Buffer.from(s, 'utf8')) });
export const floatFeature = (...value: number[]): Feature => ({ kind: 'float', value });
export const int64Feature = (...value: number[]): Feature => ({ kind: 'int64', value });
