// Serves the web console (web/dist, built by `npm run build:web`) at /. Files are registered one by
// one at start-up, so unknown paths reach the not-found handler, which answers console routes
// (GET, HTML wanted, outside the API's prefixes) with index.html for the browser-side router.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { NotFoundFallback } from './error-handler.js';

export const DEFAULT_CONSOLE_DIR = path.resolve(import.meta.dirname, '../../web/dist');

/** Paths the console's page never answers: the API, its documents, the probes, and missing assets. */
const NOT_CONSOLE_PAGES = ['/api/', '/docs', '/openapi.json', '/healthz', '/readyz', '/assets/'];

const NOT_BUILT_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The web console is not built</h1><p>Run <code>npm run build:web</code> (it runs on <code>npm install</code>) and restart.
The API is at <a href="/docs">/docs</a>.</p></body></html>`;

// The console loads nothing from elsewhere and runs no inline script; the QR code is a data: image.
const PAGE_HEADERS = {
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  // no-store, not no-cache: it also keeps the page out of the back-forward cache, so Back after a
  // sign-out cannot show a signed-in page as it was (web/src/session/session.tsx handles the rest).
  'Cache-Control': 'no-store',
};

/** Registers the console's files and returns the fallback the not-found handler consults first. */
export async function installConsole(app: FastifyInstance, dir: string): Promise<NotFoundFallback> {
  const indexFile = path.join(dir, 'index.html');
  const built = existsSync(indexFile);
  if (built) {
    await app.register(fastifyStatic, {
      root: dir,
      wildcard: false,
      index: false,
      schemaHide: true,
      cacheControl: false,
      setHeaders(res, filePath) {
        // Vite names assets by content hash, so they never change; index.html must always be fresh.
        if (filePath.includes(`${path.sep}assets${path.sep}`)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
        else for (const [name, value] of Object.entries(PAGE_HEADERS)) res.setHeader(name, value);
      },
    });
  }
  const page = built ? readFileSync(indexFile) : Buffer.from(NOT_BUILT_PAGE);
  return (request, reply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    const pathname = request.url.split('?')[0]!;
    if (NOT_CONSOLE_PAGES.some((prefix) => pathname === prefix.replace(/\/$/, '') || pathname.startsWith(prefix))) return null;
    if (pathname !== '/' && !(request.headers.accept ?? '').includes('text/html')) return null;
    return reply.status(200).type('text/html; charset=utf-8').headers(PAGE_HEADERS).send(page);
  };
}
