// The web console (packages/console), served by the service itself at /console/: the files Vite
// built, with security headers on every console answer (a CSP that allows scripts and styles from
// this origin only, no framing, no referrer). A person opening the bare address in a browser is
// sent there; API clients asking for JSON at / keep getting the index. When the console was not
// built (npm run build), /console/ answers 503 saying so.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { ApiError } from './http/problems.js';

/**
 * Where the built console is: `console/` inside this package when it was installed from its
 * tarball (`npm run release` copies the build there), else packages/console/dist beside this
 * package in the workspace (or the image).
 */
export function consoleDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // src/ (sources under tsx) or dist/src/ (built): both sit below packages/server.
  const server = here.includes(`${path.sep}dist${path.sep}`) ? path.resolve(here, '..', '..') : path.resolve(here, '..');
  const packaged = path.join(server, 'console');
  return fs.existsSync(path.join(packaged, 'index.html')) ? packaged : path.resolve(server, '..', 'console', 'dist');
}

export const CONSOLE_CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  fontSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

export async function registerConsole(app: FastifyInstance, dir = consoleDir()): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(helmet, {
      contentSecurityPolicy: { useDefaults: false, directives: CONSOLE_CSP },
      referrerPolicy: { policy: 'no-referrer' },
      frameguard: { action: 'deny' },
      crossOriginEmbedderPolicy: false,
    });
    if (!fs.existsSync(path.join(dir, 'index.html'))) {
      scope.get('/console/*', { schema: { hide: true } }, async () => {
        throw new ApiError(503, 'service_unavailable', 'The console was not built: run npm run build');
      });
      return;
    }
    await scope.register(fastifyStatic, { root: dir, prefix: '/console/', index: ['index.html'], wildcard: true, cacheControl: true, maxAge: '1h', immutable: false });
    scope.get('/console', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console/', 302));
  });
}

/** Whether a request to / comes from a browser that wants a page (rather than an API client that wants JSON). */
export const wantsPage = (accept: string | undefined) => typeof accept === 'string' && accept.includes('text/html');
