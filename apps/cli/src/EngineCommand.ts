/**
 * `cairn engine install [version]`: installs an OpenClaw version before any agent needs it, with no server running,
 * into the engines directory the server uses (`OPENCLAW_ENGINES_DIR`, `DATA_DIR/engines` by default), printing the
 * install's progress. Without a version, the one the server would give a new agent (the newest offered, within
 * `OPENCLAW_VERSIONS` when set). Then it fills the version's compile cache, as the server would at the version's first
 * start (`OPENCLAW_COMPILE_CACHE=off`: not).
 */
import { Config, Console, Effect, Option } from "effect"
import { Argument, Command } from "effect/cli"
import * as Path from "node:path"
import { Refused } from "./CliErrors.ts"

const install = Command.make(
  "install",
  {
    version: Argument.String("version").pipe(
      Argument.withDescription("The OpenClaw version; the one the server would use when omitted"),
      Argument.optional
    )
  },
  ({ version }) =>
    Effect.gen(function*() {
      const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./data"))
      const enginesDir = yield* Config.String("OPENCLAW_ENGINES_DIR").pipe(Config.withDefault(Path.join(dataDir, "engines")))
      const allowlist = yield* Config.option(Config.String("OPENCLAW_VERSIONS"))
      const nodePath = yield* Config.option(Config.String("OPENCLAW_NODE"))
      const compileCache = yield* Config.Literals(["on", "off"], "OPENCLAW_COMPILE_CACHE").pipe(Config.withDefault("on" as const))
      // Imported when the command runs: the other commands do not load the engine's package.
      const { OpenClawEngineInstall } = yield* Effect.promise(() => import("@cairn/agent-engine-openclaw"))
      const installed = yield* OpenClawEngineInstall.install({
        enginesDir,
        report: (line) => Console.log(line),
        compileCache: compileCache === "on",
        ...Option.match(version, { onNone: () => ({}), onSome: (v) => ({ version: v }) }),
        ...Option.match(nodePath, { onNone: () => ({}), onSome: (path) => ({ nodePath: path }) }),
        ...Option.match(allowlist, {
          onNone: () => ({}),
          onSome: (list) => ({ versions: list.split(",").map((v) => v.trim()).filter((v) => v !== "") })
        })
      }).pipe(
        Effect.catchTags({
          VersionNotOffered: (error) =>
            Effect.fail(new Refused({ detail: `OpenClaw ${error.version} is not offered (a stable release on the npm registry, within OPENCLAW_VERSIONS when set)` })),
          EngineUnavailable: (error) => Effect.fail(new Refused({ detail: `the engine could not be installed: ${String(error.cause)}` }))
        })
      )
      yield* Console.log(installed.already
        ? `OpenClaw ${installed.version} is already installed in ${installed.dir}`
        : `OpenClaw ${installed.version} is installed in ${installed.dir}: agents on it start without waiting for an install`)
    })
).pipe(Command.withDescription("Install an OpenClaw version ahead of time (no server needed), printing its progress"))

export const engine = Command.make("engine").pipe(
  Command.withDescription("The agents' engine (OpenClaw) on this machine"),
  Command.withSubcommands([install])
)
