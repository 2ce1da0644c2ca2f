/** JOBDECK_NEXT_TYPECHECK (lib/config.ts): `0` or `1` (default 1); anything else stops the build, naming it. */
function typecheckOff() {
  const v = (process.env.JOBDECK_NEXT_TYPECHECK ?? '').trim();
  if (v !== '' && v !== '0' && v !== '1') throw new Error(`JOBDECK_NEXT_TYPECHECK: expected 0 or 1, got "${v}"`);
  return v === '0';
}

/** @type {import('next').NextConfig} */
const nextConfig = {
  // Route handlers must load the same node_modules copies as server.ts, not bundled ones: two
  // PGlite instances on one data folder corrupt it, and the objects route handlers get from the
  // server (docs/design.md §9) must be instances of the same classes.
  serverExternalPackages: ['@electric-sql/pglite', 'pglite-prisma-adapter', '@prisma/client', '@prisma/adapter-pg', 'pg', 'pino', 'pino-pretty', 'ws'],
  // Lets several builds (tests, benchmarks, developers) live side by side. JOBDECK_NEXT_DIST is
  // documented with every setting in lib/config.ts; this file, plain JavaScript, reads it itself.
  distDir: process.env.JOBDECK_NEXT_DIST || '.next',
  poweredByHeader: false,
  // JOBDECK_NEXT_TYPECHECK=0 (lib/config.ts): no TypeScript pass of Next's own in this build —
  // `npm test` builds first and then runs the project's tsc, which covers the build's route types
  // too, so the ~7 s pass would check the same sources twice.
  typescript: { ignoreBuildErrors: typecheckOff() },
  // No gzip of API answers in the server process: on loopback and behind a TLS proxy (which
  // compresses itself) it only costs CPU — measured 190 → 258–280 submissions/s on PostgreSQL
  // (bench/README.md, "Submissions").
  compress: false,
  reactStrictMode: true,
  // Pages load on their first request, not all at start: a start (and so a restart's recovery,
  // which waits for the port) costs ~1 s less CPU and the idle server ~25 MB less memory; the
  // first view of each page after a start takes ~1 s longer once (bench/README.md "Measured choices").
  experimental: { preloadEntriesOnStart: false },
};
export default nextConfig;
