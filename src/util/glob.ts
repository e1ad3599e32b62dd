/**
 * Lists of exact names or `*` / `?` patterns, as tiers and scopes write them ("gpt-4o*", "*").
 * Compiled once when a tier or key is loaded, so a check on the hot path is a Set lookup or one
 * precompiled regular expression.
 */
export class GlobList {
  private readonly exact = new Set<string>();
  private readonly patterns: RegExp[] = [];
  private readonly matchesAll: boolean;

  constructor(readonly source: readonly string[]) {
    for (const entry of source) {
      if (entry.includes('*') || entry.includes('?')) {
        const body = entry.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
        this.patterns.push(new RegExp(`^${body}$`));
      } else {
        this.exact.add(entry);
      }
    }
    this.matchesAll = source.includes('*');
  }

  matches(name: string): boolean {
    if (this.matchesAll || this.exact.has(name)) return true;
    for (const pattern of this.patterns) if (pattern.test(name)) return true;
    return false;
  }
}
