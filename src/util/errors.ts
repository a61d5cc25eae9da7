/**
 * An error caused by the user's input (a file, a field, a request), as opposed to a bug.
 * The CLI prints `message` alone (no stack) and exits 2; servers map it to a 4xx.
 */
export class InputError extends Error {
  override name = 'InputError';
  constructor(
    message: string,
    /** What is at fault: a file path, `file#record 12`, a JSON field, a request. */
    readonly where?: string,
  ) {
    super(where ? `${where}: ${message}` : message);
  }
}
