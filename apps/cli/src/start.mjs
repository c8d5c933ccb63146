/**
 * The admin CLI's entry point (`./cairn`, `npm run cli`), in JavaScript so that Node's compile cache is on before any
 * TypeScript is read (as the server's start.mjs). Every CLI call is a process of its own, and loading the CLI from
 * its sources is most of its time: it answers from its bundle (one module, apps/server-node/src/Bundle.ts, target
 * `cli`) while that is current; else from the sources, and the bundle is built in the background, at the lowest
 * priority, for the next call. `CAIRN_BUNDLE=off` turns the bundle off. `npm run bench:cli` measures it.
 */
import * as Module from "node:module"

Module.enableCompileCache?.()
const Bundle = await import("@cairn/server-node/Bundle")
const bundled = Bundle.fresh(Bundle.cli)
if (bundled !== undefined) await import(bundled)
else {
  Bundle.buildLater(Bundle.cli)
  await import("./main.ts")
}
