/**
 * `npm start`'s entry point, in JavaScript so that Node's compile cache is on before any TypeScript is read. An
 * entry point in TypeScript is type-stripped before its first line runs, and that loads Node's type stripper (amaro,
 * a WebAssembly build of swc) at every start: ~0.1–0.15 s of CPU, before anything else (docs/performance.md, "Start").
 * From here, main.ts and what it imports come type-stripped from the cache (compiled again only when changed).
 * `node apps/server-node/src/main.ts` starts the same server, paying the type stripper.
 */
import * as Module from "node:module"

// Bun, which can also run this file, has no compile cache to enable.
Module.enableCompileCache?.()
await import("./main.ts")
