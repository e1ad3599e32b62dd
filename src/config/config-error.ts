/** A configuration problem: start-up stops with this one message, naming the file and the field. */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly field: string | null,
    detail: string,
  ) {
    super(field === null ? `${source}: ${detail}` : `${source}: ${field}: ${detail}`);
    this.name = 'ConfigError';
  }
}
