/**
 * `npm run bench:audit`: the tamper-evident log (decision 0053) on a big log, against a raw copy of the same rows, on
 * the same database in the same run. PGlite in a temporary directory by default; a fresh database on the server
 * when DATABASE_URL is set (then `psql`'s `\copy` is the raw side, as an operator would dump the table).
 *
 * The log is `BENCH_EVENTS` events (1,000,000 by default), appended 1,000 at a time over 100 streams, nine in ten of
 * them one workspace's (their data names it, as a secret's or a file's does). Measured, each `BENCH_ROUNDS` times (3):
 *
 *   seal     the whole log sealed from nothing (what a first start after the upgrade does in the background)
 *   export   the workspace's export with its proofs (`GET /v0/audit/export`'s stream), written to a file
 *   check    the offline verifier (`examples/verify-audit-export/verify.mjs`) on that file, as a third party runs it
 *   verify   the server's own check of the whole log (`cairn verify`)
 *   raw      the same rows copied out in log order: `\copy (SELECT … ORDER BY …) TO file` on Postgres, one plain
 *            SELECT of them through the driver on PGlite
 *
 * The table shows the median time of each and its rate against raw (raw's time over its own: above 1 is faster).
 */
import { AuditLog, LogSeals } from "@cairn/application"
import { TokenSigner } from "@cairn/auth"
import { JoseTokenSigner } from "@cairn/auth/node"
import { EventStore, ExpectedVersion, start } from "@cairn/event-store"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { Duration, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { createWriteStream, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const url = process.env["DATABASE_URL"] || undefined
const tempDir = mkdtempSync(join(tmpdir(), "cairn-bench-audit-"))
const database = url === undefined ? PgDatabase.layerPglite(join(tempDir, "pg")) : layerFreshPostgres(url, 10)

const total = Number(process.env["BENCH_EVENTS"] ?? 1_000_000)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const batch = 1000
const streams = 100
const workspaceId = "ws-audited"
const verifier = fileURLToPath(new URL("../examples/verify-audit-export/verify.mjs", import.meta.url))

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
/** An effect's value and how long it took (Effect.timed), in milliseconds. */
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.timed(effect), ([duration, value]) => ({ value, millis: Duration.toMillis(duration) }))

const program = Effect.gen(function*() {
  const store = yield* EventStore
  const sql = yield* SqlClient.SqlClient
  const signer = yield* TokenSigner
  const seals = yield* LogSeals.make
  const audit = yield* AuditLog.make.pipe(Effect.provideService(LogSeals, seals))

  const appended = yield* timed(Effect.gen(function*() {
    const versions = new Array<number>(streams).fill(0)
    for (let first = 0; first < total; first += batch) {
      const appends = Array.from({ length: 10 }, (_, k) => {
        const stream = (first / batch * 10 + k) % streams
        const events = Array.from({ length: batch / 10 }, (_, j) => {
          const i = first + k * (batch / 10) + j
          return { type: "SomethingHappened", data: { workspaceId: stream % 10 === 9 ? "ws-other" : workspaceId, n: i, name: `thing-${i}`, note: "a line of an audited log" } }
        })
        const expected = ExpectedVersion.Exact(versions[stream]!)
        versions[stream]! += events.length
        return { stream: `bench-${stream}`, expected, events }
      })
      yield* store.append(appends)
    }
  }))
  console.log(`${total.toLocaleString("en")} events appended in ${(appended.millis / 1000).toFixed(1)} s`)

  // The fresh database's own URL, for psql.
  const [{ db }] = yield* sql<{ db: string }>`SELECT current_database() AS db`
  const databaseUrl = url === undefined ? "" : Object.assign(new URL(url), { pathname: `/${db}` }).toString()
  const jwks = join(tempDir, "jwks.json")
  writeFileSync(jwks, JSON.stringify(yield* signer.jwks))
  const car = join(tempDir, "audit.car")

  const times: Record<string, Array<number>> = { seal: [], export: [], check: [], verify: [], raw: [] }
  let exported = 0
  for (let round = 0; round < rounds; round++) {
    // Sealed from nothing each round: the seals' tables emptied (the events stay).
    yield* sql`TRUNCATE cairn_log_seals, cairn_log_chain`
    const sealed = yield* timed(seals.sealPending)
    if (sealed.value !== total) return yield* Effect.die(`sealed ${sealed.value} of ${total} events`)
    times["seal"]!.push(sealed.millis)

    const written = yield* timed(Effect.gen(function*() {
      const out = createWriteStream(car)
      yield* audit.exportCar(workspaceId, { _tag: "Position", position: start }).pipe(
        Stream.runForEach((chunk) => Effect.promise(() => new Promise<void>((resolve) => out.write(chunk) ? resolve() : out.once("drain", resolve))))
      )
      yield* Effect.promise(() => new Promise<void>((resolve) => out.end(resolve)))
    }))
    times["export"]!.push(written.millis)
    exported = statSync(car).size

    const checked = yield* timed(Effect.sync(() => execFileSync(process.execPath, [verifier, car, "--jwks", jwks], { encoding: "utf8" })))
    if (!checked.value.startsWith("OK: ")) return yield* Effect.die(`the verifier said: ${checked.value}`)
    times["check"]!.push(checked.millis)

    const verified = yield* timed(audit.verify)
    if (!verified.value.ok || verified.value.events !== total) return yield* Effect.die(`verify: ${JSON.stringify(verified.value)}`)
    times["verify"]!.push(verified.millis)

    const raw = yield* timed(url === undefined
      ? Effect.asVoid(sql`SELECT global_position, transaction_id::text AS transaction_id, stream_id, version, event_id, type, data, metadata, recorded_at
          FROM cairn_events ORDER BY transaction_id, global_position`)
      : Effect.sync(() =>
        execFileSync("psql", [databaseUrl, "-q", "-c",
          `\\copy (SELECT * FROM cairn_events ORDER BY transaction_id, global_position) TO '${join(tempDir, "raw.copy")}'`])
      ))
    times["raw"]!.push(raw.millis)
  }

  const raw = median(times["raw"]!)
  const where = url === undefined ? "embedded PGlite (temporary directory)" : "PostgreSQL (fresh database)"
  console.log(`\nbench:audit on ${where}, ${total.toLocaleString("en")} events (${(total * 0.9).toLocaleString("en")} the workspace's), ` +
    `export ${(exported / 1024 / 1024).toFixed(0)} MiB, Node ${process.version}\n`)
  console.table(Object.entries(times).map(([side, values]) => ({
    side,
    "median s": (median(values) / 1000).toFixed(2),
    "events/s": Math.round(total / (median(values) / 1000)).toLocaleString("en"),
    "vs raw": (raw / median(values)).toFixed(2) + "x"
  })))
  const both = median(times["export"]!) + median(times["check"]!)
  console.log(`export + offline check: ${(both / 1000).toFixed(2)} s, ${(raw / both).toFixed(2)}x raw (goal >= 0.5x)`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(Layer.mergeAll(
      PgEventStore.layer(),
      Layer.effect(TokenSigner, Effect.flatMap(JoseTokenSigner.generate, JoseTokenSigner.make))
    ).pipe(Layer.provideMerge(database))),
    Effect.scoped
  )
).finally(() => rmSync(tempDir, { recursive: true, force: true }))
