/** How the supervisor spaces its attempts to bring a crashed agent back. */

export interface RecoveryBackoff {
  readonly initialMs: number
  readonly maxMs: number
}

/**
 * How long the supervisor waits before recovery attempt `attempt` of a crash that is the `recentCrashes`-th in a
 * row (crashes close together): doubling from `initialMs`, capped at `maxMs`, so a gateway that keeps crashing
 * costs less and less CPU.
 */
export const recoveryDelay = (backoff: RecoveryBackoff, recentCrashes: number, attempt: number): number =>
  Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(30, recentCrashes + attempt))
