/**
 * One process at a time in a directory. A server holds `DATA_DIR/server.lock` while it runs (two nodes on one
 * `DATA_DIR` would share its `node-id`, and with it every agent's gateway, home and port, its keys and its embedded
 * stores; with `DATABASE_URL` set nothing else notices), and the embedded database holds `<its directory>.lock`
 * (PGlite has no lock of its own, and two processes writing one directory corrupt it). A lock is created
 * exclusively and atomically (written aside, then hard-linked into place), holding its pid and, on Linux, the boot
 * and the process's start time. A lock whose process no longer runs (killed, crashed, a reboot since, or its pid
 * reused by another process) is taken over; one held by a live process refuses with `DataDirInUse`, which names the
 * pid and how to run a second node.
 */
import { Effect, Schema } from "effect"
import * as Path from "node:path"
import * as LockFile from "./DataDirLockFile.ts"

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  dir: Schema.String,
  pid: Schema.Number
}) {
  override get message() {
    return `The data directory ${this.dir} is in use by process ${this.pid} (another Cairn server): stop it first, ` +
      `or give this node a data directory of its own (DATA_DIR=<another directory> npm start)`
  }
}

/** The server's lock in its data directory. */
export const serverLock = (dir: string) => Path.join(dir, "server.lock")

/**
 * Holds `dir`'s lock (`file`, the server's by default) for the scope's lifetime; fails with `DataDirInUse` when a
 * live process holds it.
 */
export const acquire = (dir: string, file: string = serverLock(dir)) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const outcome = LockFile.acquireSync(Path.resolve(file))
      return "heldBy" in outcome
        ? Effect.fail(new DataDirInUse({ dir: Path.resolve(dir), pid: outcome.heldBy }))
        : Effect.succeed(outcome)
    }),
    (held) => Effect.sync(() => LockFile.releaseSync(held))
  )
