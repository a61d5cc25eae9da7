/** A typed array's own bytes: encoders may hand back views into one batch-wide buffer, whose `.buffer` is the whole batch. */
export const bytesOf = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
