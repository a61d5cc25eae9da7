import { crc32c } from '@node-rs/crc32';

const MASK_DELTA = 0xa282ead8;

/** CRC-32C (Castagnoli) masked as TFRecord frames store it, so CRCs of CRCs do not degenerate. */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data) >>> 0;
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}
