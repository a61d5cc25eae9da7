import type { Command } from 'commander';

/** Placeholder: filled in by its owner. */
export function registerDataSynth(parent: Command): void {
  void parent;
}
