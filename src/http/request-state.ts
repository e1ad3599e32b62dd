/** What the pipeline attaches to a Fastify request. */
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import type { SdkName } from '../auth/sdk.js';

/** What the access log reports beyond the request itself. */
export interface RequestAudit {
  model?: string;
  provider?: string;
  upstreamModel?: string;
  promptTokens?: number;
  completionTokens?: number;
  errorCode?: string;
  /** Upstream time to first byte: the whole answer, or a stream's headers. */
  upstreamFirstByteMs?: number;
  /** Upstream time to a stream's first chunk. */
  upstreamFirstTokenMs?: number;
  /** What the gateway added before the first byte of the answer, upstream time excluded. */
  overheadMs?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The endpoint's name for key and tier endpoint scopes (e.g. `chat/completions`). */
    endpoint?: string;
    /** A POST whose path and method are the whole request (a video's cancel): an empty body labelled JSON is taken as none. */
    takesNoBody?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    sdk: SdkName;
    /** Created on first write, so that requests with nothing to add cost nothing. */
    audit: RequestAudit | null;
    /** Size of the JSON body in bytes (0 without one). */
    bodyBytes: number;
  }
}

export function auditOf(request: FastifyRequest): RequestAudit {
  return (request.audit ??= {});
}
