/**
 * `node bench/pglite-worker.ts`: what a statement costs when the embedded database runs in a worker thread
 * (PgliteWorker.ts) against one on the main thread, paired in one process: each side its own PGlite database in a
 * temporary directory, rounds of single-row INSERTs through `@effect/sql-pg` (each its own durable commit), the
 * sides' order rotating from round to round. Prints, per statement, the wall time and the main thread's CPU
 * (`process.threadCpuUsage`), and the process's CPU (all threads). `BENCH_SPINS=0,20,100` runs a worker side for
 * each spin (microseconds the worker polls before it sleeps); `BENCH_ROUNDS`, `BENCH_STATEMENTS` the sizes;
 * `BENCH_OTHER_SRC=<checkout>/packages/event-store-pg/src` adds a worker side with another checkout's worker.
 */
import { PgDatabase } from "@cairn/event-store-pg"
import * as PgliteWorker from "@cairn/event-store-pg/PgliteWorker"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 8)
const statements = Number(process.env["BENCH_STATEMENTS"] ?? 2000)
const spins = (process.env["BENCH_SPINS"] ?? "0").split(",").filter((s) => s !== "").map(Number)
const root = mkdtempSync(join(tmpdir(), "cairn-bench-worker-"))

const side = (name: string, worker: { readonly spinMicros: number } | undefined) => {
  const dataDir = join(root, name)
  if (worker !== undefined) PgliteWorker.openEarly({ dataDir, templates: undefined }, worker)
  const runtime = ManagedRuntime.make(PgDatabase.layerPglite(dataDir))
  return { name, runtime, wall: 0, main: 0, all: 0, system: 0 }
}

const sides = [side("main thread", undefined), ...spins.map((spinMicros) => side(`worker, spin ${spinMicros} µs`, { spinMicros }))]
// `BENCH_OTHER_SRC=<another checkout>/packages/event-store-pg/src`: a worker side with that checkout's worker.
const other = process.env["BENCH_OTHER_SRC"]
if (other !== undefined) {
  const otherWorker = await import(join(other, "PgliteWorker.ts"))
  const otherDatabase = await import(join(other, "PgDatabase.ts"))
  const dataDir = join(root, "other")
  otherWorker.openEarly({ dataDir, templates: undefined })
  sides.push({ name: "worker, other checkout", runtime: ManagedRuntime.make(otherDatabase.layerPglite(dataDir)), wall: 0, main: 0, all: 0, system: 0 })
}
const setup = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE t (id bigserial PRIMARY KEY, n integer NOT NULL, body text NOT NULL)`
})
const block = (round: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (let i = 0; i < statements; i++) yield* sql`INSERT INTO t (n, body) VALUES (${round * statements + i}, ${"something weird"})`
  })

/** CPU ticks per thread of this process, from /proc (BENCH_THREADS=1 prints them per side). */
const threads = () => {
  const ticks = new Map<string, number>()
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks.set(`${tid} ${name}`, Number(fields[11]) + Number(fields[12]))
    } catch {
      // ended
    }
  }
  return ticks
}
const perThread = new Map<string, Map<string, number>>()

for (const s of sides) await s.runtime.runPromise(setup)
// A warm-up block each.
for (const s of sides) await s.runtime.runPromise(block(-1))
for (let round = 0; round < rounds; round++) {
  for (let k = 0; k < sides.length; k++) {
    const s = sides[(round + k) % sides.length]!
    const wall = performance.now()
    const main = process.threadCpuUsage()
    const all = process.cpuUsage()
    const before = threads()
    await s.runtime.runPromise(block(round))
    const mainAfter = process.threadCpuUsage(main)
    const allAfter = process.cpuUsage(all)
    const after = threads()
    const mine = perThread.get(s.name) ?? new Map<string, number>()
    perThread.set(s.name, mine)
    for (const [thread, ticks] of after) mine.set(thread, (mine.get(thread) ?? 0) + ticks - (before.get(thread) ?? 0))
    s.wall += (performance.now() - wall) * 1000
    s.main += mainAfter.user + mainAfter.system
    s.all += allAfter.user + allAfter.system
    s.system += allAfter.system
  }
}
const n = rounds * statements
console.log(`${rounds} rounds of ${statements} single-row INSERTs per side; load average ${loadavg().map((l) => l.toFixed(2)).join(" ")}`)
console.table(sides.map((s) => ({
  side: s.name,
  "wall µs/stmt": (s.wall / n).toFixed(1),
  "main thread CPU µs/stmt": (s.main / n).toFixed(1),
  "all threads CPU µs/stmt": (s.all / n).toFixed(1),
  "of which system": (s.system / n).toFixed(1)
})))
if (process.env["BENCH_THREADS"] === "1") {
  for (const [name, ticks] of perThread) {
    console.log(name, [...ticks].filter(([, t]) => t > 0).map(([thread, t]) => `${thread}: ${t * 10} ms`).join(", "))
  }
}
for (const s of sides) await s.runtime.dispose()
rmSync(root, { recursive: true, force: true })
