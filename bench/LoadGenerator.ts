/**
 * One long-lived load generator process (bench/load.ts, serving) for a benchmark's paired blocks: a load
 * generator sharing the servers' event loop skews them, and starting a process per block would add its start-up
 * to every block.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { LoadResult, LoadSpec } from "./LoadSpec.ts"

export interface LoadGenerator {
  /** Runs one spec; fails when any request was not answered 2xx. */
  readonly run: (title: string, spec: LoadSpec) => Promise<LoadResult>
  readonly close: () => void
}

export const start = (): LoadGenerator => {
  const child = spawn(process.execPath, [fileURLToPath(new URL("load.ts", import.meta.url))], { stdio: ["pipe", "pipe", "inherit"] })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  let queue: Promise<unknown> = Promise.resolve()
  const once = async (title: string, spec: LoadSpec) => {
    child.stdin.write(`${JSON.stringify(spec)}\n`)
    const line = await lines.next()
    if (line.done) throw new Error(`${title}: the load generator exited (${child.exitCode})`)
    const result = JSON.parse(line.value) as LoadResult
    if (result.non2xx > 0 || result.errors > 0) {
      throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ${result.total}`)
    }
    return result
  }
  return {
    // One run at a time: each answer line belongs to the spec written before it.
    run: (title, spec) => {
      const result = queue.then(() => once(title, spec))
      queue = result.catch(() => undefined)
      return result
    },
    close: () => child.stdin.end()
  }
}
