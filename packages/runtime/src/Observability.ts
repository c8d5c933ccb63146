/**
 * How a Cairn server is observed (docs/operations.md, "Observability"): its log lines' format, and the metrics read
 * from the database (and the agents' cgroups, and the data directory's disk) just before each `/metrics` scrape. Request ids, the per-route latency histogram and tracing
 * come with the routes themselves (`@cairn/http`: RequestObservability, HttpMetrics, Tracing).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { OpenClawEngineMetrics } from "@cairn/agent-engine-openclaw"
import { AgentsNode, DiskReserve, GatewayMetrics } from "@cairn/application"
import { Agent } from "@cairn/domain"
import { PgStoreMetrics } from "@cairn/event-store-pg"
import { MetricsRoutes } from "@cairn/http"
import { Config, Effect, Layer, Logger, Metric } from "effect"
import { SqlClient } from "effect/sql"
import * as ReadModels from "./ReadModels.ts"

/**
 * `LOG_FORMAT`: `json` (one JSON object a line: message, level, timestamp, annotations such as `requestId`, cause)
 * or `pretty` (for people). By default pretty when standard output is a terminal, JSON otherwise (a container, a
 * service manager, a file), which is what log collectors parse.
 */
export const layerLogger = Layer.unwrap(Effect.map(
  Config.Literals(["json", "pretty"], "LOG_FORMAT").pipe(Config.option),
  (format) => {
    const json = format._tag === "Some" ? format.value === "json" : process.stdout.isTTY !== true
    // The tracer logger keeps log lines as events of the current span when tracing is on (Effect's default does too).
    return Logger.layer([json ? Logger.consoleJson : Logger.consolePretty(), Logger.tracerLogger])
  }
))

const agentsDescription = "Agents supervised by this node, by state"
const agentGauges = new Map(Agent.AgentStatus.literals.map((state) =>
  [state, Metric.gauge("cairn_agents", { description: agentsDescription, attributes: { state } })] as const
))

/** This node's agents by state: every state is reported, 0 included, so a dashboard never sees a series vanish. */
const refreshAgents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const node = yield* AgentsNode
  const rows = yield* sql<{ readonly status: string; readonly agents: string | number }>`
    SELECT status, count(*)::int8 AS agents FROM cairn_agents WHERE node = ${node} OR node IS NULL GROUP BY status`
  const counts = new Map(rows.map((row) => [row.status, Number(row.agents)]))
  for (const [state, gauge] of agentGauges) yield* Metric.update(gauge, counts.get(state) ?? 0)
})

const limitDescription = "What each agent's processes may use together on this node (its cgroup; decision 0042)"
const limitGauges = {
  memoryBytes: Metric.gauge("cairn_agent_limit", { description: limitDescription, attributes: { resource: "memory_bytes" } }),
  cpus: Metric.gauge("cairn_agent_limit", { description: limitDescription, attributes: { resource: "cpus" } }),
  pids: Metric.gauge("cairn_agent_limit", { description: limitDescription, attributes: { resource: "pids" } }),
  diskBytes: Metric.gauge("cairn_agent_limit", { description: limitDescription, attributes: { resource: "disk_bytes" } })
} as const
/** One gauge per agent of a usage metric, made at the agent's first report. */
const perAgent = (name: string, description: string) => {
  const gauges = new Map<string, Metric.Gauge<number>>()
  return (agentId: string) => {
    let gauge = gauges.get(agentId)
    if (gauge === undefined) {
      gauge = Metric.gauge(name, { description, attributes: { agent: agentId } })
      gauges.set(agentId, gauge)
    }
    return gauge
  }
}
const memoryGauge = perAgent("cairn_agent_memory_bytes", "Memory the agent's processes use together now (its cgroup's count)")
const diskGauge = perAgent("cairn_agent_disk_bytes", "Bytes the agent stores in its home now (its own filesystem's count)")

/**
 * The configured per-agent limits (those enforced here), and the memory and disk each of this node's running agents
 * uses: read from the agents' cgroups and filesystems, which is cheap (one small file and one statfs an agent).
 */
const refreshLimits = Effect.gen(function*() {
  const engine = yield* AgentEngine
  const sql = yield* SqlClient.SqlClient
  const node = yield* AgentsNode
  const limits = engine.agentLimits
  if (limits !== undefined) {
    for (const resource of ["memoryBytes", "cpus", "pids", "diskBytes"] as const) {
      const value = limits[resource]
      if (value !== null) yield* Metric.update(limitGauges[resource], value)
    }
  }
  const { memoryUsage, diskUsage } = engine
  if (memoryUsage === undefined && diskUsage === undefined) return
  const rows = yield* sql<{ readonly id: string }>`
    SELECT id FROM cairn_agents WHERE status = 'running' AND (node = ${node} OR node IS NULL)`
  for (const row of rows) {
    const memory = memoryUsage === undefined ? undefined : yield* memoryUsage(row.id)
    if (memory !== undefined) yield* Metric.update(memoryGauge(row.id), memory)
    const disk = diskUsage === undefined ? undefined : yield* diskUsage(row.id)
    if (disk !== undefined) yield* Metric.update(diskGauge(row.id), disk)
  }
})

const diskGauges = {
  free: Metric.gauge("cairn_disk_free_bytes", { description: "Bytes still free (to unprivileged writers) on the data directory's disk" }),
  reserve: Metric.gauge("cairn_disk_reserve_bytes", { description: "Bytes of the data directory's disk kept free of uploads and snapshots (DISK_RESERVE)" })
} as const

/** The data directory's free bytes (one statfs) beside the reserve kept on that disk; none when they cannot be measured. */
const refreshDisk = Effect.gen(function*() {
  const reserve = yield* DiskReserve
  yield* Metric.update(diskGauges.reserve, reserve.reserveBytes)
  const free = yield* reserve.freeBytes
  if (free !== undefined) yield* Metric.update(diskGauges.free, free)
})

/** Metrics that are only updated when something happens, read once so they are listed (at 0) from the start. */
const listed = Effect.all([
  Metric.value(GatewayMetrics.restarts),
  Metric.value(OpenClawEngineMetrics.installDuration),
  Metric.value(PgStoreMetrics.appendDuration.ok),
  Metric.value(PgStoreMetrics.appendDuration.error)
], { discard: true })

/** What `/metrics` reads before each scrape: agents by state, their limits, the disk's free bytes, each projection's lag. */
export const layerMetrics = Layer.effect(
  MetricsRoutes.BeforeScrape,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const node = yield* AgentsNode
    const engine = yield* AgentEngine
    const disk = yield* DiskReserve
    const asynchronous = ReadModels.asynchronous.map((projection) => projection.name)
    return Effect.all([listed, refreshAgents, refreshLimits, refreshDisk, PgStoreMetrics.refreshProjectionLag(asynchronous)], { discard: true }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(AgentEngine, engine),
      Effect.provideService(AgentsNode, node),
      Effect.provideService(DiskReserve, disk),
      Effect.orDie
    )
  })
)
