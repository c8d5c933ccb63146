/**
 * Cairn's Node server entry point (`npm start` runs it through start.mjs, which turns the compile cache on before this
 * file is type-stripped). It sets up what makes a start fast before anything large is loaded, then loads the server
 * (Server.ts), whose imports are most of a start's time (docs/performance.md, "Start"):
 * - Node's compile cache: the compiled code of every module, and the type-stripped source of every TypeScript
 *   file, kept on disk between starts (in the system's temporary directory; `NODE_COMPILE_CACHE` picks another,
 *   `NODE_DISABLE_COMPILE_CACHE=1` turns it off). A module changed since is compiled again.
 * - On the embedded database, PGlite's WebAssembly module and file-system bundle, read and compiled on the other
 *   core while the modules load. With `PGLITE_WORKER=on` the whole database opens in a worker thread instead
 *   (PgliteWorker.ts): 0.3–0.8 s less of the main thread's CPU before ready, though no shorter a start on a quiet
 *   2-core machine, and each statement then crosses threads (through shared memory), which makes a lone statement
 *   1.3–2.6 times slower in wall time (docs/performance.md, "The worker's shared channel"), so it is not the default.
 * - The server's bundle (Bundle.ts): one module instead of ~1,550, used while it is current, else built in the
 *   background for the next start. `CAIRN_BUNDLE=off` turns it off.
 * Static imports would all be loaded before any of this runs, hence the dynamic imports.
 */
import * as Module from "node:module"

// Bun, which also runs this file (its tests), has no compile cache to enable.
Module.enableCompileCache?.()
if (process.env["DATABASE_URL"] === undefined && process.env["PGLITE_WORKER"] === "on") {
  const { openEarly } = await import("@cairn/event-store-pg/PgliteWorker")
  openEarly()
} else if (process.env["DATABASE_URL"] === undefined) {
  const { prefetch } = await import("@cairn/event-store-pg/PgliteArtifacts")
  void prefetch()
}
// The server from its bundle while it is current; else from the sources, and the bundle built once ready (Bundle.ts).
const Bundle = await import("./Bundle.ts")
const bundled = Bundle.fresh()
if (bundled !== undefined) await import(bundled)
else void (await import("./Server.ts")).ready.then(() => Bundle.buildLater())
