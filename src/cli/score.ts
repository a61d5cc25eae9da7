import type { Command } from 'commander';

/** Placeholder: filled in by its owner. */
export function registerScore(parent: Command): void {
  void parent;
}
