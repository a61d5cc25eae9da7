/**
 * Where the `cpu` and `wasm` backends keep tensor values, seen as typed arrays the addon can use
 * in place. Both keep a tensor as one contiguous array (cpu: in its data store; wasm: a range of
 * the module's heap), so kernels read inputs and write outputs with no copies.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { MathBackendCPU } from '@tensorflow/tfjs-backend-cpu';
import type { BackendWasm } from '@tensorflow/tfjs-backend-wasm';
import type { MaskArray } from './blas.js';

/** Backends whose tensors the addon can read in place. */
export type NativeBackendName = 'cpu' | 'wasm';

export interface TensorMemory {
  /**
   * A new float32 output tensor and its (uninitialised or zeroed) values. On wasm, `values` is
   * valid only until the next allocation: kernels with several outputs take views after the last.
   */
  allocate(shape: readonly number[]): { info: tf.TensorInfo; values: Float32Array };
  /** The values of a float32 tensor, or undefined when the tensor is something else. */
  view(t: tf.TensorInfo): Float32Array | undefined;
  /** The values of an int32 tensor, or undefined when the tensor is something else. */
  viewInt32(t: tf.TensorInfo): Int32Array | undefined;
}

function cpuMemory(backend: MathBackendCPU): TensorMemory {
  const values = (t: tf.TensorInfo) => backend.data.get(t.dataId)?.values;
  return {
    allocate(shape) {
      const v = new Float32Array(tf.util.sizeFromShape([...shape]));
      return { info: backend.makeTensorInfo([...shape], 'float32', v), values: v };
    },
    view(t) {
      const v = t.dtype === 'float32' ? values(t) : undefined;
      return v instanceof Float32Array ? v : undefined;
    },
    viewInt32(t) {
      const v = t.dtype === 'int32' ? values(t) : undefined;
      return v instanceof Int32Array ? v : undefined;
    },
  };
}

function wasmMemory(backend: BackendWasm): TensorMemory {
  return {
    allocate(shape) {
      const info = backend.makeOutput([...shape], 'float32');
      return { info, values: backend.typedArrayFromHeap(info) as Float32Array };
    },
    // Views of the heap are valid only until the next allocation (which may grow, and move, the
    // memory): kernels allocate every output first and take views after.
    view(t) {
      return t.dtype === 'float32' ? (backend.typedArrayFromHeap(t) as Float32Array) : undefined;
    },
    viewInt32(t) {
      return t.dtype === 'int32' ? (backend.typedArrayFromHeap(t) as Int32Array) : undefined;
    },
  };
}

export function memoryOf(name: NativeBackendName, backend: unknown): TensorMemory {
  return name === 'cpu' ? cpuMemory(backend as MathBackendCPU) : wasmMemory(backend as BackendWasm);
}

/** Typed views of a kernel's tensors, with errors that name the kernel and the input. */
export class KernelViews {
  constructor(private readonly mem: TensorMemory, private readonly kernel: string) {}

  f32(t: tf.TensorInfo, name: string): Float32Array {
    const v = this.mem.view(t);
    if (!v) throw new Error(`${this.kernel}: ${name} must be float32, got ${t.dtype}`);
    return v;
  }

  /** The values of an output allocated by this kernel (take after the kernel's last allocation). */
  out(o: { info: tf.TensorInfo }): Float32Array {
    return this.f32(o.info, 'output');
  }

  /** An optional output, or null. */
  outOpt(o: { info: tf.TensorInfo } | undefined): Float32Array | null {
    return o ? this.out(o) : null;
  }

  /** A float32 input, or null when the tensor is absent. */
  f32Opt(t: tf.TensorInfo | undefined, name: string): Float32Array | null {
    return t ? this.f32(t, name) : null;
  }

  i32(t: tf.TensorInfo, name: string): Int32Array {
    const v = this.mem.viewInt32(t);
    if (!v) throw new Error(`${this.kernel}: ${name} must be int32, got ${t.dtype}`);
    return v;
  }

  /** A 0/1 mask as int32 or float32, or null when absent. */
  mask(t: tf.TensorInfo | undefined, name: string): MaskArray | null {
    if (!t) return null;
    const v = t.dtype === 'int32' ? this.mem.viewInt32(t) : this.mem.view(t);
    if (!v) throw new Error(`${this.kernel}: ${name} must be int32 or float32, got ${t.dtype}`);
    return v;
  }
}
