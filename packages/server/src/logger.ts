// pino options: JSON lines in production, pretty output when writing to a terminal.
// Credentials never reach the log: the request serializer logs no headers, and the
// headers that carry secrets are redacted in case anything logs them.
import type { FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { LogLevel } from './kernel/config.js';

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
  const base = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (pretty) return { ...base, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:standard', ignore: 'pid,hostname' } } };
  // Asynchronous writes: a slow log reader must not stall request handling
  // (synchronous writes block the event loop whenever the stdout pipe is full).
  // server.ts flushes it on shutdown.
  return { ...base, stream: logDestination() };
}

/** The service's logger, built before anything that logs, so every part gets the same one. */
export function createLogger(level: LogLevel): pino.Logger {
  const options = loggerOptions(level) as pino.LoggerOptions & { stream?: pino.DestinationStream };
  const { stream, ...rest } = options;
  return stream ? pino(rest, stream) : pino(rest);
}

let destination: ReturnType<typeof pino.destination> | undefined;
export function logDestination(): ReturnType<typeof pino.destination> {
  // Past 64 MiB of unwritten lines, pino drops lines rather than grow without bound.
  destination ??= pino.destination({ dest: 1, sync: false, maxLength: 64 * 1024 * 1024 });
  return destination;
}

/** Writes out buffered log lines (on shutdown, before exit). */
export function flushLogs(): void {
  destination?.flushSync();
}
