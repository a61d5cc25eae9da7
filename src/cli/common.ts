import { InputError } from '../util/errors.js';

/** Prints one JSON document on stdout (the `--json` contract: stdout holds nothing else). */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

/** Parses a positive integer option, naming the option when it is not one. */
export function intOption(name: string, min = 0): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InputError(`expected an integer ≥ ${min}, got '${v}'`, name);
    return n;
  };
}

export function floatOption(name: string): (v: string) => number {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new InputError(`expected a number, got '${v}'`, name);
    return n;
  };
}
