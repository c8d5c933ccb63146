/**
 * Waiting in end-to-end tests: polls a check until it gives something, bounded; on a timeout the failure names what
 * was awaited and the end of the servers' output, which is where the reason usually is.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export interface WaitOptions {
  /** What to show of the servers when the wait fails (their output, say); its last 4,000 characters are shown. */
  readonly output?: () => string
  readonly timeoutMs?: number
  readonly intervalMs?: number
}

/** Polls `check` until it gives something other than `undefined`; the deadline only bounds a failure. */
export const waitUntil = async <A>(what: string, check: () => Promise<A | undefined> | A | undefined, options: WaitOptions = {}): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 120_000)
  while (Date.now() < deadline) {
    const result = await check()
    if (result !== undefined) return result
    await sleep(options.intervalMs ?? 100)
  }
  throw new Error(`timed out waiting until ${what}\n${options.output?.().slice(-4_000) ?? ""}`)
}
