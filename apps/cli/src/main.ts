/**
 * Cairn's admin CLI. `replay [projection]` rebuilds read models from the log; `stats` prints what the log
 * holds per stream category. It opens the database itself (DATABASE_URL, or the PGlite in DATA_DIR, which must
 * not be in use by a running server).
 */
import { CategoryStats } from "@cairn/event-store-pg"
import { CairnRuntime, Main, ReadModels } from "@cairn/runtime"
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Logger, Option } from "effect"
import { Argument, Command } from "effect/cli"

const Store = Layer.unwrap(Effect.map(CairnRuntime.databaseFromConfig, CairnRuntime.layerStore))

const replay = Command.make(
  "replay",
  {
    projection: Argument.String("projection").pipe(
      Argument.withDescription(`A read model to rebuild (${ReadModels.names().join(", ")}); all when omitted`),
      Argument.optional
    )
  },
  ({ projection }) =>
    Effect.gen(function*() {
      const replayed = yield* ReadModels.replay(Option.getOrUndefined(projection))
      for (const { projection, events } of replayed) yield* Console.log(`${projection}: rebuilt from ${events} events`)
    }).pipe(Effect.provide(Store))
).pipe(Command.withDescription("Rebuild read models from the event log"))

const stats = Command.make("stats", {}, () =>
  Effect.gen(function*() {
    const rows = yield* CategoryStats.read
    if (rows.length === 0) yield* Console.log("The log is empty (or category-stats has not caught up: run replay)")
    for (const row of rows) {
      yield* Console.log(`${row.category}\t${row.streams} streams\t${row.events} events\tlast ${row.lastRecordedAt.toISOString()}`)
    }
  }).pipe(Effect.provide(Store))
).pipe(Command.withDescription("Print streams and events per stream category"))

Command.make("cairn").pipe(
  Command.withDescription("Administer a Cairn installation"),
  Command.withSubcommands([replay, stats]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  // stdout carries the command's output; logs go to stderr.
  Effect.provideService(Logger.LogToStderr, true),
  Main.reportFailure,
  NodeRuntime.runMain
)
