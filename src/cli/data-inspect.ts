import type { Command } from 'commander';

/** Placeholder: filled in by its owner. */
export function registerDataInspect(parent: Command): void {
  void parent;
}
