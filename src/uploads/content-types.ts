/** Which content types an upload may have (`uploads.content_types`): globs such as `audio/*`, matched without parameters. */
export class ContentTypeFilter {
  private readonly patterns: readonly RegExp[];

  constructor(private readonly globs: readonly string[]) {
    this.patterns = globs.map((glob) => new RegExp(`^${glob.toLowerCase().replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^;]*')}$`));
  }

  allows(contentType: string): boolean {
    const bare = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
    return this.patterns.some((pattern) => pattern.test(bare));
  }

  describe(): string {
    return this.globs.join(', ');
  }
}
