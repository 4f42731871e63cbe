import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';

/** Structured JSON logs. Secrets never reach them: the Authorization header is redacted wherever it appears. */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'erp-api' },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.secret', 'secret'],
      censor: '[redacted]',
    },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}

export type { Logger };
