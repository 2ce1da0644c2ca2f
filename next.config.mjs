/** @type {import('next').NextConfig} */
const nextConfig = {
  // Route handlers must load the same node_modules copies as server.ts, not bundled ones: two
  // PGlite instances on one data folder corrupt it, and the objects route handlers get from the
  // server (docs/design.md §9) must be instances of the same classes.
  serverExternalPackages: ['@electric-sql/pglite', 'pglite-prisma-adapter', '@prisma/client', '@prisma/adapter-pg', 'pg', 'pino', 'pino-pretty', 'ws'],
  // Lets several builds (tests, benchmarks, developers) live side by side.
  distDir: process.env.JOBDECK_NEXT_DIST || '.next',
  poweredByHeader: false,
  // No gzip of API answers in the server process: on loopback and behind a TLS proxy (which
  // compresses itself) it only costs CPU — measured 190 → 258–280 submissions/s on PostgreSQL
  // (bench/README.md, "Submissions").
  compress: false,
  reactStrictMode: true,
};
export default nextConfig;
