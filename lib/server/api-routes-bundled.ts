/**
 * The API route modules compiled into the server's bundle (scripts/build-server.mjs replaces this
 * module's text with one static import per `app/api/**\/route.ts`). From the TypeScript sources it
 * is null, and lib/server/api-router.ts finds and imports the routes on disk.
 */
export const BUNDLED_API_ROUTES: ReadonlyArray<{ file: string; mod: Record<string, unknown> }> | null = null;
