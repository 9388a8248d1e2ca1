// pino options: JSON lines in production, pretty output when writing to a terminal.
// Credentials never reach the log: the request serializer logs no headers, and the
// headers that carry secrets are redacted in case anything logs them.
import type { FastifyServerOptions } from 'fastify';
import type { LogLevel } from './config.js';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'password',
  'body.password',
];

export function loggerOptions(level: LogLevel): FastifyServerOptions['logger'] {
  const pretty = process.stdout.isTTY && process.env.NODE_ENV !== 'production';
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard', ignore: 'pid,hostname' } } } : {}),
  };
}
