/**
 * Per-block histograms (`width` bins each, row-major blocks of `block × block` pixels) that know
 * which of their bins are non-zero: a block of a UI screen holds a handful of colour pairs or
 * patterns out of hundreds, and every entry is ≥ 0, so summing only the non-zero ones gives the
 * very same sums (adding +0 changes nothing) at a fraction of the cost.
 *
 * Windows: the window of patch (pr, pc) is the patch and half a patch around it, so any object up to
 * one patch across lies wholly inside the window of the patch holding its centre, wherever it sits
 * against the grid.
 */
export class SparseBlocks {
  private readonly values: Float64Array;
  private readonly nonzero: Uint16Array;
  private readonly counts: Uint16Array;
  private blockRows = 0;
  private blockCols = 0;
  private imageWidth = 0;
  private imageHeight = 0;

  constructor(
    maxBlocks: number,
    readonly width: number,
    /** Block side in pixels. */
    readonly block: number,
  ) {
    this.values = new Float64Array(maxBlocks * width);
    this.nonzero = new Uint16Array(this.values.length);
    this.counts = new Uint16Array(maxBlocks);
  }

  /** Empties every block and sizes the grid for a `width × height` pixel image. */
  reset(width: number, height: number): void {
    this.imageWidth = width;
    this.imageHeight = height;
    this.blockCols = Math.ceil(width / this.block);
    this.blockRows = Math.ceil(height / this.block);
    const used = this.blockRows * this.blockCols;
    if (used > this.counts.length) throw new Error(`image ${width}×${height} needs ${used} blocks, more than ${this.counts.length}`);
    // Zero only the entries the last image set: a few per block, where a full fill writes megabytes.
    for (let blk = 0; blk < this.counts.length; blk++) {
      const base = blk * this.width;
      for (let j = 0; j < this.counts[blk]!; j++) this.values[base + this.nonzero[base + j]!] = 0;
      this.counts[blk] = 0;
    }
  }

  /** The block holding pixel (x, y). */
  blockOf(x: number, y: number): number {
    return ((y / this.block) | 0) * this.blockCols + ((x / this.block) | 0);
  }

  /** Adds `v` > 0 to bin k of block `blk`, noting the bin the first time it becomes non-zero. */
  add(blk: number, k: number, v: number): void {
    const i = blk * this.width + k;
    if (this.values[i] === 0) this.nonzero[blk * this.width + this.counts[blk]!++] = k;
    this.values[i] += v;
  }

  /**
   * Sums the histograms of the window of patch (pr, pc), `per` blocks a patch side (even), clipped
   * to the image, into `into`. Returns how many image pixels the window covers.
   */
  sumWindow(per: number, pr: number, pc: number, into: Float64Array): number {
    const w = this.width;
    into.fill(0);
    const br0 = Math.max(0, pr * per - per / 2), br1 = Math.min(this.blockRows, (pr + 1) * per + per / 2);
    const bc0 = Math.max(0, pc * per - per / 2), bc1 = Math.min(this.blockCols, (pc + 1) * per + per / 2);
    for (let br = br0; br < br1; br++) {
      for (let bc = bc0; bc < bc1; bc++) {
        const blk = br * this.blockCols + bc;
        const base = blk * w;
        for (let j = 0; j < this.counts[blk]!; j++) {
          const k = this.nonzero[base + j]!;
          into[k] += this.values[base + k]!;
        }
      }
    }
    const span = (lo: number, hi: number, size: number) => Math.min(size, hi * this.block) - lo * this.block;
    return span(br0, br1, this.imageHeight) * span(bc0, bc1, this.imageWidth);
  }
}
