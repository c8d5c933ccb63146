/**
 * Polls `condition` until it holds, failing after `timeoutMs`: for tests that wait on processes and files. The
 * deadline only bounds a failure; it is generous because a loaded machine (two suites at once) is slow, not wrong.
 */
import { Effect } from "effect"

export const waitUntil = (condition: () => boolean, what: string, timeoutMs = 60_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })
