import type { Command } from 'commander';

/** Placeholder: filled in by its owner. */
export function registerDataPrepare(parent: Command): void {
  void parent;
}
