/**
 * The FreeSpace port on Node's `statfs`: the bytes an unprivileged writer may still write on the file system that
 * holds the data directory (`bavail × bsize`, which leaves out the blocks the file system keeps for root). A statfs
 * is one cheap system call; its answer is still kept for a second, so a burst of uploads asks once. When it cannot be
 * asked (the directory is gone, a runtime without statfs) the free space is unknown, said once in the log, and the
 * reserve refuses nothing.
 */
import { FreeSpace } from "@cairn/application"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs/promises"

/** How long one measurement stands. */
const keptMillis = 1000

export const make = (dataDir: string): FreeSpace["Service"] => {
  let measured: { readonly at: number; readonly bytes: number | undefined } | undefined
  let warned = false
  const measure = Effect.tryPromise(() => Fs.statfs(dataDir)).pipe(
    Effect.map((stats) => stats.bavail * stats.bsize),
    Effect.catch((error) =>
      Effect.gen(function*() {
        if (!warned) {
          warned = true
          yield* Effect.logWarning(`The free space on ${dataDir}'s disk cannot be measured; DISK_RESERVE holds nothing back`, error)
        }
        return undefined
      })
    )
  )
  return {
    freeBytes: Effect.suspend(() => {
      const now = Date.now()
      if (measured !== undefined && now - measured.at < keptMillis) return Effect.succeed(measured.bytes)
      return Effect.map(measure, (bytes) => {
        measured = { at: now, bytes }
        return bytes
      })
    })
  }
}

export const layer = (dataDir: string): Layer.Layer<FreeSpace> => Layer.sync(FreeSpace, () => make(dataDir))
