/**
 * How entry points end on a failure. A typed failure (a busy data directory, an unknown projection, an
 * unreachable database) carries a message written for the operator: print it alone and exit 1, or with the code
 * the error names (`Runtime.errorExitCode`: the CLI's 3 for a server it cannot reach). A command line the CLI
 * parser refused exits 2, as usage errors do by convention, and so does a command named without its subcommand
 * (help shown though not asked for); help asked for (`--help`) is no failure and exits 0. Defects keep their full
 * report from the runtime.
 */
import { Cause, Config, Console, Effect, Layer, References, Runtime } from "effect"
import { CliError } from "effect/cli"

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)

/**
 * 2 for a command line the parser refused or that names no command to run (`--help`, which exits 0, is handled
 * before and fails nothing), else the error's own code or 1.
 */
const exitCodeOf = (error: unknown): number => CliError.isCliError(error) ? 2 : Runtime.getErrorExitCode(error)

export const reportFailure = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A | void, never, R> =>
  program.pipe(
    Effect.catch((error) =>
      // The CLI parser has already printed its own errors and help.
      (CliError.isCliError(error) ? Effect.void : Console.error(`cairn: ${messageOf(error)}`)).pipe(
        Effect.andThen(Effect.sync(() => {
          process.exitCode = exitCodeOf(error)
        }))
      )
    )
  )

/**
 * A server stopped by SIGTERM or SIGINT ends in an interruption once it has shut down gracefully: that is a clean
 * stop, so exit 0 (the default would be 130) and let orchestrators tell it from a crash.
 */
export const serverTeardown: Runtime.Teardown = (exit, onExit) =>
  exit._tag === "Failure" && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)

/** `LOG_LEVEL` (Info by default): the least severe log lines a process writes (`Debug` for more, `Warn` for less). */
export const layerLogLevel = Layer.unwrap(Effect.map(
  Config.Literals(["All", "Trace", "Debug", "Info", "Warn", "Error", "Fatal", "None"], "LOG_LEVEL").pipe(Config.withDefault("Info" as const)),
  (level) => Layer.succeed(References.MinimumLogLevel, level)
))
