/**
 * How a server stops on a signal, within a bound. The first SIGINT or SIGTERM starts the graceful stop (the runtime
 * interrupts the main fiber: the listener closes, agents' gateways get SIGTERM and then SIGKILL after their grace,
 * the database closes). Should that stop still be under way after `SHUTDOWN_GRACE` (30 s), or another signal come,
 * the process exits at once; its exit handlers SIGKILL every gateway's process group first (OpenClawAgentEngine),
 * and a gateway that outlived even that stops itself when its pipe to Cairn closes (parent-watch.mjs).
 *
 * Under `npm start` a terminal's Ctrl-C reaches npm and the server alike, and npm forwards its own copy: signals
 * that come within `echoMs` of the first are that same Ctrl-C. Once that time is over, the server says that
 * another one forces the stop (the line `Still stopping`), so a second Ctrl-C is never taken for the first.
 */
import { Config, Duration, Effect, Layer } from "effect"
import { constants } from "node:os"

/** How long after the first signal further ones are taken for copies of it (npm's forwarded Ctrl-C). */
export const echoMs = 1_000

/** `SHUTDOWN_GRACE`: how long a graceful stop may take before the process exits regardless (a duration, "30 seconds"). */
const grace = Config.Duration("SHUTDOWN_GRACE").pipe(Config.withDefault(Duration.seconds(30)))

/** Installs the signal handling for the life of the process (they must outlast the scope: closing it is the stop). */
export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const graceDuration = yield* grace
  const graceMs = Duration.toMillis(graceDuration)
  const graceText = Duration.format(graceDuration)
  const context = yield* Effect.context<never>()
  const log = (effect: Effect.Effect<void>) => Effect.runSyncWith(context)(effect)
  let stopping = false
  let forceable = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stopping) {
      stopping = true
      log(Effect.logInfo(`${signal}: stopping (requests, agents' gateways, the database), at most ${graceText}`))
      setTimeout(() => {
        forceable = true
        log(Effect.logInfo("Still stopping: press Ctrl-C again (or send another SIGTERM) to stop at once"))
      }, echoMs).unref()
      setTimeout(() => {
        log(Effect.logError(`Not stopped within SHUTDOWN_GRACE (${graceText}): exiting now, agents' gateways killed`))
        process.exit(1)
      }, graceMs).unref()
      return
    }
    // The same Ctrl-C, forwarded by npm.
    if (!forceable) return
    log(Effect.logWarning(`${signal} again: exiting now, agents' gateways killed`))
    process.exit(128 + (constants.signals[signal] ?? 0))
  }
  yield* Effect.sync(() => {
    process.on("SIGINT", onSignal)
    process.on("SIGTERM", onSignal)
  })
}))
