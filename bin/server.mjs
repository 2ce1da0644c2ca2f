#!/usr/bin/env node
/**
 * Starts jobdeck's server (`npm start`: `node --max-semi-space-size=4 bin/server.mjs`).
 *
 * Runs the bundle scripts/build-server.mjs made (`.jobdeck-server/server.mjs`) when no source file
 * it was made of changed since, else the TypeScript sources (server.ts) with tsx's loader hooks —
 * the same code; the bundle starts on about half the CPU (bench/README.md "Measured choices"), which
 * a restart's recovery waits for. Paths are resolved from this file's location; the server itself
 * expects the project folder as its working directory, as `npm start` gives it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleFresh, registerTsx } from './bundle.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DIR = path.join(root, '.jobdeck-server');
const BUNDLE = path.join(DIR, 'server.mjs');

if (bundleFresh(root, DIR, 'server.mjs')) {
  await import(new URL(`file://${BUNDLE}`).href);
} else {
  await registerTsx();
  await import(new URL('../server.ts', import.meta.url).href);
}
