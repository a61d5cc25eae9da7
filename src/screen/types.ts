/**
 * What the screen-feature room works on: decoded pixels and boxes on the screen. Everything above
 * (AITW records, the model, the agent) reuses these types.
 */

/** Decoded pixels: uint8, row-major H×W×C. */
export interface RawImage {
  height: number;
  width: number;
  channels: number;
  data: Uint8Array;
}

/** A box on the screen as AITW stores UI annotations: (y, x, height, width), normalised by screen height and width. */
export type Box = [number, number, number, number];
