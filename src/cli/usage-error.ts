/** A mistake on the command line: printed with a hint to run `tollgate help`, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
