/**
 * `npm run bench:timetravel`: an agent at a point far back in a big log (`GET /v0/agents/{id}?at=`), against reading
 * the same streams with no folding, on the same database in the same run. PGlite in a temporary directory by
 * default; a fresh database on the server when DATABASE_URL is set.
 *
 * The log is the worst case for folding: every event of it is one agent's, spread over the streams its state is
 * folded from (its own, channels, domains, runtime config, tasks), appended 1,000 at a time. Its size is
 * `BENCH_EVENTS` (1,000,000 by default) and the point is `BENCH_BACK` events before its end (100,000), so the fold
 * takes in everything up to there.
 *
 * `cold` is the first travel to the point: no snapshot yet, so AgentsAt reads the streams, decodes and folds every
 * event up to the point, and keeps a snapshot every `SnapshotEvery` events (10,000) on the way (decision 0048).
 * `measured` is every travel after it, to the same point and to points around it (from the latest snapshot before the
 * point: at most SnapshotEvery events read and folded). `raw` reads the same streams through the store's readStream
 * and does nothing with them; `sql` is one plain SELECT of the same rows. Each side runs `BENCH_ROUNDS` times (3),
 * alternating; the table shows the median time of each and the ratios. `BENCH_SNAPSHOT_EVERY` changes N.
 *
 * A server keeps snapshots as the log grows (AgentsAt's background snapshotter), so before the first travel the bench
 * runs its rounds until it has caught up with the log, timed apart: `first` is then the first travel to the point
 * with those snapshots there. `BENCH_BACKGROUND=off` skips that, and `first` is the cold fold from the start.
 */
import { AgentsAt, SnapshotEvery } from "@cairn/application"
import { Agent, Channel, Domain, RuntimeConfig, ScheduledTask } from "@cairn/domain"
import { EventStore, ExpectedVersion, formatPosition, type LogPosition } from "@cairn/event-store"
import { PgDatabase, PgEventStore } from "@cairn/event-store-pg"
import { layerFreshPostgres } from "@cairn/event-store-pg/testing"
import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"

const url = process.env["DATABASE_URL"] || undefined
const tempDir = url === undefined ? mkdtempSync(join(tmpdir(), "cairn-bench-timetravel-")) : undefined
const database = url === undefined ? PgDatabase.layerPglite(join(tempDir!, "pg")) : layerFreshPostgres(url, 10)

const total = Number(process.env["BENCH_EVENTS"] ?? 1_000_000)
const back = Number(process.env["BENCH_BACK"] ?? 100_000)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const batch = 1000
const every = Number(process.env["BENCH_SNAPSHOT_EVERY"] ?? 10_000)

const agentId = `bench${Date.now().toString(36)}`
const workspaceId = "ws-bench"
const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
const sealed = { keyId: "dk", nonce: "bm9uY2U=", ciphertext: "Y2lwaGVydGV4dA==" }

const encode = <S extends Schema.Top>(schema: S) => Schema.encodeUnknownSync(schema as unknown as Schema.Codec<unknown, unknown>)
const encoders = {
  agent: encode(Agent.AgentEvent),
  channel: encode(Channel.ChannelEvent),
  domain: encode(Domain.DomainEvent),
  config: encode(RuntimeConfig.RuntimeConfigEvent),
  task: encode(ScheduledTask.TaskEvent)
}

/** The i-th event of the log: which stream it is on and what it says (each stream's share of the log in turn). */
const eventAt = (i: number): { stream: string; type: string; data: unknown } => {
  if (i === 0) {
    return { stream: Agent.stream(agentId), type: "AgentCreated", data: encoders.agent(new Agent.AgentCreated({ agentId, workspaceId, userId: "u", name: "bench", engineVersion: "1.0.0", at: at(i) })) }
  }
  if (i === 1) {
    return { stream: Domain.stream(agentId), type: "DomainAdded", data: encoders.domain(new Domain.DomainAdded({ domainId: "d1", agentId, workspaceId, kind: "subdomain", name: "bench", targetPort: 3000, protected: false, status: "active", at: at(i) })) }
  }
  switch (Math.floor(i / batch) % 5) {
    case 0:
      return i % 2 === 0
        ? { stream: Agent.stream(agentId), type: "AgentProfileChanged", data: encoders.agent(new Agent.AgentProfileChanged({ agentId, name: `bench-${i}`, at: at(i) })) }
        : { stream: Agent.stream(agentId), type: "AgentStarted", data: encoders.agent(new Agent.AgentStarted({ agentId, engineVersion: "1.0.0", at: at(i) })) }
    case 1:
      return { stream: Channel.stream(agentId), type: "ChannelConfigured", data: encoders.channel(new Channel.ChannelConfigured({ agentId, workspaceId, channel: "telegram", settings: { enabled: i % 2 === 0, dmPolicy: "pairing", allowFrom: [String(i)], botToken: { sealingId: `s${i}`, sealed, hint: "abcd" } }, at: at(i) })) }
    case 2:
      return { stream: Domain.stream(agentId), type: "DomainChanged", data: encoders.domain(new Domain.DomainChanged({ domainId: "d1", agentId, targetPort: 3000 + (i % 1000), protected: i % 2 === 0, at: at(i) })) }
    case 3:
      return { stream: RuntimeConfig.stream(agentId), type: "RuntimeConfigWritten", data: encoders.config(new RuntimeConfig.RuntimeConfigWritten({ agentId, workspaceId, changedPaths: ["agents"], hash: `h${i}`, at: at(i) })) }
    default:
      return i % 2 === 0
        ? { stream: ScheduledTask.stream(agentId), type: "TaskCreated", data: encoders.task(new ScheduledTask.TaskCreated({ agentId, workspaceId, taskId: `t${i % 100}`, name: `task ${i}`, schedule: { kind: "every", everyMs: 60_000 }, payloadKind: "systemEvent", enabled: true, at: at(i) })) }
        : { stream: ScheduledTask.stream(agentId), type: "TaskDeleted", data: encoders.task(new ScheduledTask.TaskDeleted({ agentId, taskId: `t${(i - 1) % 100}`, name: `task ${i - 1}`, at: at(i) })) }
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const started = performance.now()
    const value = yield* effect
    return { value, ms: performance.now() - started }
  })

const program = Effect.gen(function*() {
  const store = yield* EventStore
  const sql = yield* SqlClient.SqlClient
  const agentsAt = yield* AgentsAt.make

  // Fill: 1,000 events at a time on one stream (events i..i+999 are all on the same stream).
  const filling = performance.now()
  let point: LogPosition | undefined
  // The position of each batch's last event, by the count of events up to it: the nearby points.
  const ends: Array<{ readonly end: number; readonly position: LogPosition }> = []
  for (let start = 0; start < total; start += batch) {
    const events = []
    let stream = ""
    for (let i = start; i < Math.min(start + batch, total); i++) {
      const event = eventAt(i)
      // Events 0 and 1 open their streams; a batch never mixes streams otherwise.
      if (stream !== "" && event.stream !== stream) {
        yield* store.append([{ stream, expected: ExpectedVersion.Any, events }])
        events.length = 0
      }
      stream = event.stream
      events.push({ type: event.type, data: event.data })
    }
    const { events: appended } = yield* store.append([{ stream, expected: ExpectedVersion.Any, events }])
    const end = Math.min(start + batch, total)
    ends.push({ end, position: appended.at(-1)!.position })
    if (end <= total - back && end + batch > total - back) point = appended.at(-1)!.position
    if (start % 100_000 === 0 && start > 0) console.log(`filled ${start.toLocaleString("en")} events in ${((performance.now() - filling) / 1000).toFixed(0)} s`)
  }
  const fillSeconds = (performance.now() - filling) / 1000
  console.log(`filled ${total.toLocaleString("en")} events in ${fillSeconds.toFixed(0)} s; the point is ${formatPosition(point!)} (${back.toLocaleString("en")} events before the end)`)

  const streams = [Agent.stream(agentId), Channel.stream(agentId), Domain.stream(agentId), RuntimeConfig.stream(agentId), ScheduledTask.stream(agentId)]
  const measured = agentsAt.anywhere(agentId, { _tag: "Position", position: point! })
  const raw = Effect.forEach(streams, (stream) => store.readStream(stream), { concurrency: "unbounded" }).pipe(Effect.map((read) => read.flat().length))
  const plain = sql<{ n: number }>`SELECT stream_id, version, global_position, transaction_id::text AS transaction_id, event_id, type, data, metadata, recorded_at
    FROM cairn_events WHERE stream_id = ANY(${streams}::text[])`.pipe(Effect.map((rows) => rows.length))

  const background = process.env["BENCH_BACKGROUND"] !== "off"
  if (background) {
    const caughtUp = yield* timed(Effect.gen(function*() {
      while ((yield* agentsAt.keepSnapshots) > 0) { /* rounds until the log is caught up */ }
    }))
    console.log(`background: the snapshotter caught up with the ${total.toLocaleString("en")}-event log in ${(caughtUp.ms / 1000).toFixed(1)} s`)
  }
  const cold = yield* timed(measured)
  console.log(`first: ${cold.ms.toFixed(0)} ms (the first travel there, ${background ? "from the background snapshotter's snapshots" : "no snapshot yet: folds from the start"})`)
  // Other points near it: each from the latest snapshot before it.
  const others: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const target = total - back - 1 - Math.floor(Math.random() * 3 * every)
    const nearby = ends.find((e) => e.end >= target)!
    others.push((yield* timed(agentsAt.anywhere(agentId, { _tag: "Position", position: nearby.position }))).ms)
  }

  const times: Record<"measured" | "raw" | "sql", Array<number>> = { measured: [], raw: [], sql: [] }
  let shown: unknown
  for (let round = 0; round < rounds; round++) {
    const m = yield* timed(measured)
    // From a snapshot, the same answer as the whole fold gave (the snapshot's JSON may come back with its keys reordered).
    if (!isDeepStrictEqual(m.value, cold.value)) return yield* Effect.die("a travel from a snapshot answered otherwise than the whole fold")
    times.measured.push(m.ms)
    shown = m.value.agent.name
    const r = yield* timed(raw)
    if (r.value !== total) return yield* Effect.die(`read ${r.value} of ${total} events`)
    times.raw.push(r.ms)
    times.sql.push((yield* timed(plain)).ms)
  }
  const m = median(times.measured)
  const r = median(times.raw)
  const s = median(times.sql)
  const where = url === undefined ? "embedded PGlite (temporary directory)" : "PostgreSQL (fresh database)"
  console.log(`\nbench:timetravel on ${where}, Node ${process.version}: an agent ${back.toLocaleString("en")} events back in a ${total.toLocaleString("en")}-event log (its name then: ${String(shown)})\n`)
  console.table([
    { side: background ? "first: AgentsAt, the first travel (from the background snapshotter's snapshots)" : "first: AgentsAt, the first travel (no snapshot yet: folds from the start, keeps snapshots)", "median ms": cold.ms.toFixed(0), runs: cold.ms.toFixed(0), "vs raw": `${(cold.ms / r).toFixed(2)}x` },
    { side: `nearby: AgentsAt at other points up to ${(3 * every).toLocaleString("en")} events before it`, "median ms": median(others).toFixed(0), runs: others.map((t) => t.toFixed(0)).join(", "), "vs raw": `${(median(others) / r).toFixed(2)}x` },
    { side: "measured: AgentsAt at the point again (from its latest snapshot)", "median ms": m.toFixed(0), runs: times.measured.map((t) => t.toFixed(0)).join(", "), "vs raw": `${(m / r).toFixed(2)}x` },
    { side: "raw: readStream of the same streams, nothing done", "median ms": r.toFixed(0), runs: times.raw.map((t) => t.toFixed(0)).join(", "), "vs raw": "1.00x" },
    { side: "sql: one plain SELECT of the same rows", "median ms": s.toFixed(0), runs: times.sql.map((t) => t.toFixed(0)).join(", "), "vs raw": `${(s / r).toFixed(2)}x` }
  ])
  console.log(`\ntarget: <= 1000 ms: ${m <= 1000 && median(others) <= 1000 && (!background || cold.ms <= 1000) ? "met" : "not met"}${background ? ", the first travel included" : " once snapshots are kept"}; snapshot every ${every.toLocaleString("en")} events`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provideService(SnapshotEvery, every),Effect.provide(PgEventStore.layer().pipe(Layer.provideMerge(database))), Effect.scoped)
).finally(() => tempDir && rmSync(tempDir, { recursive: true, force: true }))
