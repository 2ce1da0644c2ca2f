/** Extension name → the module (package subpath) that exports it under that name. */
export declare const PGLITE_EXTENSION_MODULES: Record<string, string>;
/** The `extensions` option of PGlite.create() for every entry of PGLITE_EXTENSION_MODULES. */
export declare function pgliteExtensions(): Promise<Record<string, import('@electric-sql/pglite').Extension>>;
