/** What the pipeline attaches to a Fastify request. */
import type { Principal } from '../auth/principal.js';
import type { SdkName } from '../auth/sdk.js';

export interface RequestAudit {
  model?: string;
  provider?: string;
  upstreamModel?: string;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    sdk: SdkName;
    audit: RequestAudit;
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request arrived. */
    startedAt: number;
  }
}
