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
