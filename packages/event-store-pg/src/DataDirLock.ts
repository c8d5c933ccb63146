/**
 * One process at a time in an embedded database directory: PGlite has no lock of its own, and two processes
 * writing one directory corrupt it. The lock is a file beside the directory holding the owner's pid; a lock left
 * by a process that no longer runs is taken over.
 */
import { Effect, Schema } from "effect"
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from "node:fs"
import { dirname } from "node:path"

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  dir: Schema.String,
  pid: Schema.Number
}) {
  override get message() {
    return `The data directory ${this.dir} is in use by process ${this.pid}; stop it first, or set DATA_DIR to another directory`
  }
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const tryCreate = (lockFile: string): boolean => {
  try {
    const fd = openSync(lockFile, "wx")
    writeSync(fd, String(process.pid))
    closeSync(fd)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  }
}

/** Holds `<dir>.lock` for the scope's lifetime. */
export const acquire = (dir: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lockFile = `${dir}.lock`
      yield* Effect.sync(() => mkdirSync(dirname(lockFile), { recursive: true }))
      for (let attempt = 0; attempt < 2; attempt++) {
        if (yield* Effect.try(() => tryCreate(lockFile))) return lockFile
        const pid = Number(yield* Effect.try(() => readFileSync(lockFile, "utf8")))
        if (pid !== process.pid && Number.isInteger(pid) && pid > 0 && isRunning(pid)) {
          return yield* new DataDirInUse({ dir, pid })
        }
        yield* Effect.sync(() => rmSync(lockFile, { force: true }))
      }
      return yield* new DataDirInUse({ dir, pid: 0 })
    }),
    (lockFile) => Effect.sync(() => rmSync(lockFile, { force: true }))
  )
