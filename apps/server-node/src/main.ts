/**
 * Cairn's Node server entry point (`npm start`). It sets up what makes a start fast before anything large is loaded,
 * then loads the server (Server.ts), whose imports are most of a start's time (docs/performance.md, "Start"):
 * - Node's compile cache: the compiled code of every module, and the type-stripped source of every TypeScript
 *   file, kept on disk between starts (in the system's temporary directory; `NODE_COMPILE_CACHE` picks another,
 *   `NODE_DISABLE_COMPILE_CACHE=1` turns it off). A module changed since is compiled again.
 * - On the embedded database, the database opened in a worker thread (PgliteWorker.ts): PGlite's start runs on the
 *   other core while the modules load. `PGLITE_WORKER=off` opens it on the main thread as before (then only its
 *   WebAssembly module and file-system bundle are read and compiled ahead, on V8's background threads).
 * Static imports would all be loaded before any of this runs, hence the dynamic imports.
 */
import * as Module from "node:module"

// Bun, which also runs this file (its tests), has no compile cache to enable.
Module.enableCompileCache?.()
if (process.env["DATABASE_URL"] === undefined && process.env["PGLITE_WORKER"] !== "off") {
  const { openEarly } = await import("@cairn/event-store-pg/PgliteWorker")
  openEarly()
} else if (process.env["DATABASE_URL"] === undefined) {
  const { prefetch } = await import("@cairn/event-store-pg/PgliteArtifacts")
  void prefetch()
}
await import("./Server.ts")
