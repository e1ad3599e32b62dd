/**
 * The process logger (pino, JSON lines on stdout). Secrets never reach it: keys are logged by
 * their public id only, and these paths are redacted as a second line of defence.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'tollgate' },
    redact: {
      paths: ['authorization', '*.authorization', 'headers.authorization', '*.headers.authorization', 'api_key', '*.api_key', 'key', '*.key', 'admin_token', '*.admin_token'],
      censor: '[redacted]',
    },
  });
}

/**
 * The access log: one line per request, from fields the HTTP layer picks itself (the public key
 * id, never the key), so it skips redaction, which costs more than the rest of the line. Lines
 * are buffered and written 4 KiB at a time rather than one write call each; `flush` on shutdown.
 */
export function createAccessLogger(level: string): Logger {
  return pino({ level, base: { service: 'tollgate' } }, pino.destination({ dest: 1, sync: false, minLength: 4096 }));
}
