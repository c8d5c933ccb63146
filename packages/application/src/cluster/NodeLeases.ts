/**
 * Which node runs each agent, and which nodes are alive: two plain tables on the shared Postgres, updated in place
 * (decision 0028). A node renews its own lease (`cairn_nodes`: its internal address and when its lease expires) with a
 * heartbeat; an agent's lease (`cairn_agent_leases`) names the node whose engine holds its gateway, and lives as long
 * as that node's lease does. Requests for an agent another live node holds are forwarded there (runtime
 * NodeForwarding.ts); an agent whose node's lease expired is adopted by another node, one node only, through a
 * compare-and-set on the agent's lease (Failover.ts). Times are the database's, so nodes' clocks need not agree.
 *
 * Off (every call a no-op, every agent this node's) unless the node is one of several: `CAIRN_INTERNAL_URL` with
 * `DATABASE_URL` (runtime CairnRuntime.ts). That is the embedded single node, and a Postgres node that runs alone.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createTogether } from "../SchemaSetup.ts"

/**
 * This Cairn node's name. Each agent's gateway runs on the node that created (or last started) it, and only that
 * node supervises it, so nodes sharing one database never start the same agent twice.
 */
export const AgentsNode = Context.Reference<string>("cairn/Agents/Node", { defaultValue: () => "local" })

/** How a node takes part in a cluster; `internalUrl` undefined: it does not (a single node). */
export const ClusterSettings = Context.Reference<{
  /** Where other nodes reach this one (`http://10.0.0.5:3000`), from `CAIRN_INTERNAL_URL`. */
  readonly internalUrl: string | undefined
  /** How long a node's lease lasts without a heartbeat: past it, its agents are adopted elsewhere. */
  readonly leaseTtl: Duration.Input
  /** How often a node renews its lease (and looks for expired ones). */
  readonly heartbeatInterval: Duration.Input
}>("cairn/ClusterSettings", {
  defaultValue: () => ({ internalUrl: undefined, leaseTtl: "15 seconds", heartbeatInterval: "3 seconds" })
})

/** Another node, live, and where it is reached. */
export interface PeerNode {
  readonly node: string
  readonly internalUrl: string
}

/** An agent whose node's lease has expired (or that node left). */
export interface OrphanedAgent {
  readonly agentId: string
  readonly node: string
}

/** Both tables, created together with other nodes starting (SchemaSetup.ts). */
const setup = (sql: SqlClient.SqlClient) =>
  createTogether(sql, Effect.gen(function*() {
    yield* sql`CREATE TABLE IF NOT EXISTS cairn_nodes (
      node_id text PRIMARY KEY, internal_url text NOT NULL, started_at timestamptz NOT NULL DEFAULT now(),
      heartbeat_at timestamptz NOT NULL, expires_at timestamptz NOT NULL)`
    yield* sql`CREATE TABLE IF NOT EXISTS cairn_agent_leases (
      agent_id text PRIMARY KEY, node_id text NOT NULL, claimed_at timestamptz NOT NULL DEFAULT now())`
    yield* sql`CREATE INDEX IF NOT EXISTS cairn_agent_leases_node ON cairn_agent_leases (node_id)`
  }))

export class NodeLeases extends Context.Service<NodeLeases>()("cairn/NodeLeases", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const node = yield* AgentsNode
    const settings = yield* ClusterSettings
    const internalUrl = settings.internalUrl
    const enabled = internalUrl !== undefined
    const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(settings.leaseTtl))
    const ttl = `${ttlMs} milliseconds`
    if (enabled) yield* Effect.orDie(setup(sql))

    /** Renews this node's lease (made on the first beat). */
    const heartbeat = enabled
      ? sql`INSERT INTO cairn_nodes (node_id, internal_url, heartbeat_at, expires_at)
          VALUES (${node}, ${internalUrl}, now(), now() + ${ttl}::interval)
          ON CONFLICT (node_id) DO UPDATE SET internal_url = excluded.internal_url, heartbeat_at = now(),
            expires_at = now() + ${ttl}::interval`.pipe(Effect.asVoid, Effect.orDie)
      : Effect.void

    /** This node leaves: its lease ends now, so others stop forwarding to it and adopt its agents at once. */
    const leave = enabled
      ? sql`UPDATE cairn_nodes SET expires_at = now() WHERE node_id = ${node}`.pipe(Effect.asVoid, Effect.orDie)
      : Effect.void

    /**
     * This node runs the agent now, unless another live node holds it (a resume that lost the race to an adoption):
     * true when the lease is this node's.
     */
    const claim = (agentId: string): Effect.Effect<boolean> =>
      enabled
        ? sql<{ node_id: string }>`INSERT INTO cairn_agent_leases AS l (agent_id, node_id) VALUES (${agentId}, ${node})
            ON CONFLICT (agent_id) DO UPDATE SET node_id = excluded.node_id, claimed_at = now()
            WHERE l.node_id = excluded.node_id
              OR NOT EXISTS (SELECT 1 FROM cairn_nodes n WHERE n.node_id = l.node_id AND n.expires_at > now())
            RETURNING node_id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
        : Effect.succeed(true)

    /** The agent is gone: its lease with it. */
    const release = (agentId: string) =>
      enabled ? sql`DELETE FROM cairn_agent_leases WHERE agent_id = ${agentId}`.pipe(Effect.asVoid, Effect.orDie) : Effect.void

    /** The other live node that runs the agent, if one does; none: this node answers for it. */
    const ownerOf = (agentId: string): Effect.Effect<Option.Option<PeerNode>> =>
      enabled
        ? sql<{ node_id: string; internal_url: string }>`SELECT l.node_id, n.internal_url FROM cairn_agent_leases l
            JOIN cairn_nodes n ON n.node_id = l.node_id
            WHERE l.agent_id = ${agentId} AND l.node_id <> ${node} AND n.expires_at > now()`.pipe(
          Effect.map(([row]) => Option.map(Option.fromNullishOr(row), (r) => ({ node: r.node_id, internalUrl: r.internal_url }))),
          Effect.orDie
        )
        : Effect.succeed(Option.none())

    /** Which node holds each of these agents' leases (agents without one are left out). */
    const holders = (agentIds: ReadonlyArray<string>): Effect.Effect<ReadonlyMap<string, string>> =>
      enabled && agentIds.length > 0
        ? sql<{ agent_id: string; node_id: string }>`SELECT agent_id, node_id FROM cairn_agent_leases
            WHERE agent_id = ANY(${agentIds}::text[])`.pipe(
          Effect.map((rows) => new Map(rows.map((r) => [r.agent_id, r.node_id]))),
          Effect.orDie
        )
        : Effect.succeed(new Map())

    /** The nodes whose lease has not expired (this one among them once it has beaten); empty on a single node. */
    const liveNodes: Effect.Effect<ReadonlySet<string>> = enabled
      ? sql<{ node_id: string }>`SELECT node_id FROM cairn_nodes WHERE expires_at > now()`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.node_id))),
        Effect.orDie
      )
      : Effect.succeed(new Set())

    /** Agents held by nodes whose lease has expired. */
    const orphaned: Effect.Effect<ReadonlyArray<OrphanedAgent>> = enabled
      ? sql<{ agent_id: string; node_id: string }>`SELECT l.agent_id, l.node_id FROM cairn_agent_leases l
          LEFT JOIN cairn_nodes n ON n.node_id = l.node_id
          WHERE l.node_id <> ${node} AND (n.node_id IS NULL OR n.expires_at <= now())
          ORDER BY l.claimed_at, l.agent_id`.pipe(
        Effect.map((rows) => rows.map((r) => ({ agentId: r.agent_id, node: r.node_id }))),
        Effect.orDie
      )
      : Effect.succeed([])

    /** Takes an orphaned agent's lease if it is still `from`'s and `from` is still not live: one node wins. */
    const adopt = (agentId: string, from: string): Effect.Effect<boolean> =>
      enabled
        ? sql`UPDATE cairn_agent_leases SET node_id = ${node}, claimed_at = now()
            WHERE agent_id = ${agentId} AND node_id = ${from}
              AND NOT EXISTS (SELECT 1 FROM cairn_nodes n WHERE n.node_id = ${from} AND n.expires_at > now())
            RETURNING agent_id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
        : Effect.succeed(false)

    // Live before anything else: a node that resumes its agents must not look expired meanwhile.
    yield* heartbeat

    return { node, enabled, internalUrl, heartbeat, leave, claim, release, ownerOf, holders, liveNodes, orphaned, adopt }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
