/** Polls `condition` until it holds, failing after `timeoutMs`: for tests that wait on processes and files. */
import { Effect } from "effect"

export const waitUntil = (condition: () => boolean, what: string, timeoutMs = 10_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })
