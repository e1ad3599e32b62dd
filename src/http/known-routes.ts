/**
 * The routes this server has, by path pattern, so that a request with the wrong method can be told
 * which methods the path takes instead of a bare 404.
 */
export class KnownRoutes {
  private readonly routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];

  add(url: string, methods: string | string[]): void {
    const pattern = new RegExp(`^${url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
    let entry = this.routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) {
      entry = { pattern, methods: new Set() };
      this.routes.push(entry);
    }
    for (const method of Array.isArray(methods) ? methods : [methods]) entry.methods.add(method);
  }

  methodsFor(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) if (route.pattern.test(path)) for (const m of route.methods) methods.add(m);
    return [...methods].sort();
  }
}
