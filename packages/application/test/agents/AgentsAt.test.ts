/**
 * Time travel against hand-built logs: events appended straight to an in-memory store, each at a time of its own,
 * then the agent asked for before, between and after each change, by time and by log position.
 */
import { type AgentAt, AgentsAt, foldAgent, isAtOrBefore, parsePoint, type Point, SnapshotEvery, snapshotStream } from "@cairn/application"
import { Agent, Channel, Domain, RuntimeConfig, ScheduledTask, Secret, Skill } from "@cairn/domain"
import { EventStore, ExpectedVersion, formatPosition, MemoryEventStore, type RecordedEvent } from "@cairn/event-store"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result, Schema } from "effect"

const agentId = "tt0agent"
const workspaceId = "ws-1"
const principal = { workspaceId, userId: "user-1", keyId: "key-1", scopes: ["org:agents"] }
const sealed = { keyId: "dk-1", nonce: "Tk9OQ0U=", ciphertext: "U0VDUkVULUNJUEhFUlRFWFQ=" }

const t = (minute: number) => `2026-11-28T10:${String(minute).padStart(2, "0")}:00.000Z`

/** The change made at each minute, in order, with the stream it goes on. */
const changes: ReadonlyArray<readonly [number, string, Schema.Top, { readonly _tag: string }]> = [
  [1, Secret.stream("sec-1"), Secret.SecretEvent, new Secret.SecretCreated({ secretId: "sec-1", workspaceId, userId: "user-1", name: "OPENAI_API_KEY", sealed, at: t(1) })],
  [2, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentCreated({ agentId, workspaceId, userId: "user-1", name: "first", engineVersion: "1.0.0", at: t(2) })],
  [3, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentSecretsAttached({ agentId, secrets: [{ secretId: "sec-1", name: "OPENAI_API_KEY" }], at: t(3) })],
  [4, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentStarted({ agentId, engineVersion: "1.0.0", secrets: [{ secretId: "sec-1", version: 1 }], at: t(4) })],
  [5, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentProfileChanged({ agentId, name: "second", emoji: "🦀", model: "openai/gpt-5", at: t(5) })],
  [6, Secret.stream("sec-1"), Secret.SecretEvent, new Secret.SecretValueChanged({ secretId: "sec-1", version: 2, sealed, at: t(6) })],
  [7, Skill.stream("sk-1"), Skill.SkillEvent, new Skill.SkillAdded({ skillId: "sk-1", workspaceId, userId: "user-1", name: "weather", description: "Weather", envVars: [], source: "cid", cid: "bafyskill1", at: t(7) })],
  [8, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentSkillsAttached({ agentId, skills: [{ skillId: "sk-1", name: "weather", cid: "bafyskill1", revision: 1 }], at: t(8) })],
  [9, Skill.stream("sk-1"), Skill.SkillEvent, new Skill.SkillVersionAdded({ skillId: "sk-1", revision: 2, cid: "bafyskill2", version: "2.0.0", description: "Weather 2", envVars: [], at: t(9) })],
  [10, Domain.stream(agentId), Domain.DomainEvent, new Domain.DomainAdded({ domainId: "dom-1", agentId, workspaceId, kind: "subdomain", name: "crab", targetPort: 3000, protected: false, status: "active", at: t(10) })],
  [11, Channel.stream(agentId), Channel.ChannelEvent, new Channel.ChannelConfigured({ agentId, workspaceId, channel: "telegram", settings: { enabled: true, dmPolicy: "pairing", allowFrom: ["42"], botToken: { sealingId: "seal-1", sealed, hint: "wxyz" } }, at: t(11) })],
  [12, RuntimeConfig.stream(agentId), RuntimeConfig.RuntimeConfigEvent, new RuntimeConfig.RuntimeConfigWritten({ agentId, workspaceId, changedPaths: ["agents"], previousHash: "h0", hash: "h1", at: t(12) })],
  [13, ScheduledTask.stream(agentId), ScheduledTask.TaskEvent, new ScheduledTask.TaskCreated({ agentId, workspaceId, taskId: "task-1", name: "digest", schedule: { kind: "cron", expr: "0 8 * * *" }, payloadKind: "agentTurn", enabled: true, at: t(13) })],
  [14, ScheduledTask.stream(agentId), ScheduledTask.TaskEvent, new ScheduledTask.TaskToggled({ agentId, taskId: "task-1", name: "digest", enabled: false, system: false, at: t(14) })],
  [15, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentStopped({ agentId, reason: "oom", at: t(15) })],
  [16, Channel.stream(agentId), Channel.ChannelEvent, new Channel.ChannelRemoved({ agentId, channel: "telegram", reason: "user", at: t(16) })],
  [17, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentSecretDetached({ agentId, secretId: "sec-1", at: t(17) })],
  [18, Agent.stream(agentId), Agent.AgentEvent, new Agent.AgentDeleted({ agentId, at: t(18) })]
]

/** A store holding the changes, each recorded at its minute (and 30 s later, an unrelated stream's event). */
const build = Effect.gen(function*() {
  const { agentsAt, recorded } = yield* buildWithStore
  return { agentsAt, recorded }
})

const buildWithStore = Effect.gen(function*() {
  let clock = new Date(t(0))
  const store = yield* MemoryEventStore.make({ now: () => clock })
  const recorded: Array<RecordedEvent> = []
  for (const [minute, stream, schema, event] of changes) {
    clock = new Date(t(minute))
    const data = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown>)(event)
    const { events } = yield* store.append([{ stream, expected: ExpectedVersion.Any, events: [{ type: event._tag, data, metadata: { actor: "user-1" } }] }])
    recorded.push(events[0]!)
    clock = new Date(new Date(t(minute)).getTime() + 30_000)
    yield* store.append([{ stream: `noise-${minute}`, expected: ExpectedVersion.NoStream, events: [{ type: "Noise", data: {} }] }])
  }
  const agentsAt = yield* AgentsAt.make.pipe(Effect.provideService(EventStore, store))
  return { agentsAt, recorded, store }
})

const time = (minute: number, seconds = 0): Point => ({ _tag: "Time", time: new Date(new Date(t(minute)).getTime() + seconds * 1000) })

const found = (agentsAt: AgentsAt["Service"], point: Point) => agentsAt.visible(principal, agentId, point)
const missing = (agentsAt: AgentsAt["Service"], point: Point) =>
  Effect.map(Effect.flip(found(agentsAt, point)), (error) => {
    assert.strictEqual(error._tag, "AgentNotFound")
    assert.strictEqual(error.message, "Agent not found")
  })

describe("AgentsAt", () => {
  it("parses a time or a log position, and nothing else", () => {
    assert.deepStrictEqual(parsePoint("812:4051"), Result.succeed({ _tag: "Position", position: { transactionId: 812n, globalPosition: 4051n } } as const))
    assert.deepStrictEqual(parsePoint("2026-11-28T10:05:00Z"), Result.succeed({ _tag: "Time", time: new Date("2026-11-28T10:05:00Z") } as const))
    assert.deepStrictEqual(parsePoint("2026-11-28T11:05:00.250+01:00"), Result.succeed({ _tag: "Time", time: new Date("2026-11-28T10:05:00.250Z") } as const))
    assert.deepStrictEqual(parsePoint("2026-11-28"), Result.succeed({ _tag: "Time", time: new Date("2026-11-28T00:00:00Z") } as const))
    for (const bad of ["", "yesterday", "812", "812:", ":4051", "-1:2", "2026-11-28T10:05:00", "2026-13-45T10:00:00Z", "1732790000", "2026-11-28T10:05:00Z "]) {
      const parsed = parsePoint(bad)
      assert.isTrue(Result.isFailure(parsed), bad)
      if (Result.isFailure(parsed)) assert.match(parsed.failure.message, /^Validation failed: at must be an ISO time/)
    }
  })

  it.effect("is not found before the agent's first event, found from it on", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded } = yield* build
      yield* missing(agentsAt, time(1, 59))
      yield* missing(agentsAt, { _tag: "Position", position: recorded[0]!.position })
      const created = yield* found(agentsAt, time(2))
      assert.deepStrictEqual(created.agent, {
        agentId, workspaceId, userId: "user-1", name: "first", description: null, vibe: null, emoji: null, model: null,
        engineVersion: "1.0.0", status: "starting", tokenGeneration: 0, recovering: false, node: null, createdAt: t(2),
        snapshots: { lastSync: null, snapshotCid: null }
      })
      assert.deepStrictEqual([created.secrets, created.skills, created.domains, created.tasks], [[], [], [], []])
      assert.deepStrictEqual(created.config, { hash: null, changedPaths: [], writtenAt: null })
      assert.strictEqual(created.channels.telegram.configured, false)
      // The same point by log position.
      assert.deepStrictEqual(yield* found(agentsAt, { _tag: "Position", position: recorded[1]!.position }), created)
    }))

  it.effect("shows each change from its point on, and not before it", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded } = yield* build
      const at = (minute: number) => found(agentsAt, time(minute))
      const before = (minute: number) => found(agentsAt, time(minute - 1, 59))
      const byPosition = (minute: number) => found(agentsAt, { _tag: "Position", position: recorded[changes.findIndex(([m]) => m === minute)]!.position })

      // Secrets: attached (not delivered yet), delivered at a start, then a new value the gateway has not got.
      assert.deepStrictEqual((yield* before(3)).secrets, [])
      assert.deepStrictEqual((yield* at(3)).secrets, [{ id: "sec-1", name: "OPENAI_API_KEY", version: 1, createdAt: t(1), updatedAt: t(1), synced: false }])
      assert.deepStrictEqual((yield* at(4)).secrets.map((s) => [s.version, s.synced]), [[1, true]])
      assert.strictEqual((yield* at(4)).agent.status, "running")
      assert.deepStrictEqual((yield* before(6)).secrets.map((s) => [s.version, s.synced]), [[1, true]])
      assert.deepStrictEqual((yield* at(6)).secrets, [{ id: "sec-1", name: "OPENAI_API_KEY", version: 2, createdAt: t(1), updatedAt: t(6), synced: false }])
      assert.deepStrictEqual((yield* byPosition(6)).secrets, (yield* at(6)).secrets)

      // Profile.
      assert.deepStrictEqual([(yield* before(5)).agent.name, (yield* before(5)).agent.emoji, (yield* before(5)).agent.model], ["first", null, null])
      assert.deepStrictEqual([(yield* at(5)).agent.name, (yield* at(5)).agent.emoji, (yield* at(5)).agent.model], ["second", "🦀", "openai/gpt-5"])

      // Skills: attached at a revision, then the library moves on (the agent keeps its own).
      assert.deepStrictEqual((yield* at(7)).skills, [])
      const attached = (yield* at(8)).skills
      assert.deepStrictEqual(attached.map((s) => [s.name, s.skillCid, s.revision, s.latestCid, s.latestRevision, s.attachedAt]), [["weather", "bafyskill1", 1, "bafyskill1", 1, t(8)]])
      assert.deepStrictEqual((yield* at(9)).skills.map((s) => [s.skillCid, s.revision, s.latestCid, s.latestRevision, s.latestVersion, s.description]), [["bafyskill1", 1, "bafyskill2", 2, "2.0.0", "Weather 2"]])

      // Domains.
      assert.deepStrictEqual((yield* before(10)).domains, [])
      assert.deepStrictEqual((yield* at(10)).domains, [{
        id: "dom-1", agentId, subdomain: "crab", customDomain: null, targetPort: 3000, protected: false, status: "active", createdAt: t(10), updatedAt: t(10)
      }])

      // Channels: configured (a token only as set and its hint), then removed.
      assert.strictEqual((yield* before(11)).channels.telegram.configured, false)
      assert.deepStrictEqual((yield* at(11)).channels.telegram, { configured: true, enabled: true, dmPolicy: "pairing", allowFrom: ["42"], botTokenSet: true, botTokenHint: "wxyz" })
      assert.deepStrictEqual((yield* at(16)).channels.telegram, { configured: false, enabled: false, dmPolicy: null, allowFrom: [], botTokenSet: false, botTokenHint: null })

      // Config: the hash written, never a value.
      assert.deepStrictEqual((yield* before(12)).config, { hash: null, changedPaths: [], writtenAt: null })
      assert.deepStrictEqual((yield* at(12)).config, { hash: "h1", changedPaths: ["agents"], writtenAt: t(12) })

      // Tasks: created, then disabled.
      assert.deepStrictEqual((yield* before(13)).tasks, [])
      assert.deepStrictEqual((yield* at(13)).tasks, [{ id: "task-1", name: "digest", enabled: true, schedule: { kind: "cron", expr: "0 8 * * *" }, payload: { kind: "agentTurn" }, system: false }])
      assert.deepStrictEqual((yield* at(14)).tasks.map((task) => task.enabled), [false])

      // The gateway's last stop.
      assert.isUndefined((yield* before(15)).agent.lastStop)
      assert.deepStrictEqual((yield* at(15)).agent.lastStop, { reason: "oom", at: t(15) })
      assert.strictEqual((yield* at(15)).agent.status, "not_running")

      // A secret detached is no longer held.
      assert.strictEqual((yield* before(17)).secrets.length, 1)
      assert.deepStrictEqual((yield* at(17)).secrets, [])
    }))

  it.effect("never holds a secret's value nor a channel's token", () =>
    Effect.gen(function*() {
      const { agentsAt } = yield* build
      for (const minute of [3, 6, 11, 14]) {
        const state: AgentAt = yield* found(agentsAt, time(minute))
        const text = JSON.stringify(state)
        assert.notInclude(text, sealed.ciphertext)
        assert.notInclude(text, sealed.nonce)
        assert.notInclude(text, "seal-1")
      }
    }))

  it.effect("shows a deleted agent to its workspace before its deletion only, and never to another workspace", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded } = yield* build
      const last = yield* found(agentsAt, time(17, 59))
      assert.strictEqual(last.agent.name, "second")
      yield* missing(agentsAt, time(18))
      yield* missing(agentsAt, { _tag: "Position", position: recorded[recorded.length - 1]!.position })
      const other = yield* Effect.flip(agentsAt.visible({ ...principal, workspaceId: "ws-2" }, agentId, time(10)))
      assert.strictEqual(other._tag, "AgentNotFound")
      // The operator's view, whatever the workspace.
      assert.strictEqual((yield* agentsAt.anywhere(agentId, time(10))).agent.workspaceId, workspaceId)
      yield* Effect.flip(agentsAt.anywhere("nobody", time(10)))
    }))

  it.effect("takes `at` as the route gives it", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded } = yield* build
      assert.strictEqual((yield* agentsAt.at(principal, agentId, formatPosition(recorded[4]!.position))).agent.name, "second")
      assert.strictEqual((yield* agentsAt.at(principal, agentId, "2026-11-28T11:04:30+01:00")).agent.name, "first")
      const bad = yield* Effect.flip(agentsAt.at(principal, agentId, "last tuesday"))
      assert.strictEqual(bad._tag, "ValidationFailed")
    }))
})

describe("AgentsAt's snapshots", () => {
  it.effect("answer every point as the whole fold does, whichever points were asked first, and hold no ciphertext", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded, store } = yield* buildWithStore
      const all = recorded
      const points: Array<Point> = [
        ...recorded.map((e): Point => ({ _tag: "Position", position: e.position })),
        ...changes.flatMap(([minute]) => [time(minute), time(minute - 1, 59), time(minute, 45)])
      ]
      /** The reference: every event up to the point, folded from nothing. */
      const reference = (point: Point) => foldAgent(agentId, all.filter(isAtOrBefore(point)))
      // The latest point first (snapshots every 2 events all along), then every point, then again in reverse.
      for (const point of [points[points.length - 1]!, ...points, ...[...points].reverse()]) {
        const answer = yield* Effect.result(agentsAt.anywhere(agentId, point))
        const expected = reference(point)
        if (expected === undefined) assert.isTrue(Result.isFailure(answer), JSON.stringify(point, (_, v) => typeof v === "bigint" ? String(v) : v))
        else assert.deepStrictEqual(Result.getOrUndefined(answer), expected)
      }
      const snapshots = yield* store.readStream(snapshotStream(agentId))
      assert.isAbove(snapshots.length, 2)
      const text = JSON.stringify(snapshots.map((e) => e.data))
      assert.notInclude(text, sealed.ciphertext)
      assert.notInclude(text, sealed.nonce)
    }).pipe(Effect.provideService(SnapshotEvery, 2)))

  it.effect("are read, not rebuilt: a second travel folds from the latest one", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded, store } = yield* buildWithStore
      const point: Point = { _tag: "Position", position: recorded[16]!.position }
      const first = yield* agentsAt.anywhere(agentId, point)
      const written = (yield* store.readStream(snapshotStream(agentId))).length
      assert.isAbove(written, 0)
      // Asked again, the fold starts from a snapshot: fewer than `every` events past it, so none is written.
      assert.deepStrictEqual(yield* agentsAt.anywhere(agentId, point), first)
      assert.strictEqual((yield* store.readStream(snapshotStream(agentId))).length, written)
    }).pipe(Effect.provideService(SnapshotEvery, 3)))
})

describe("AgentsAt's background snapshotter", () => {
  it.effect("keeps snapshots as the log grows, with no travel asked, and travels from them give the whole fold's answers", () =>
    Effect.gen(function*() {
      const { agentsAt, recorded, store } = yield* buildWithStore
      assert.strictEqual((yield* store.readStream(snapshotStream(agentId))).length, 0)
      assert.isAbove(yield* agentsAt.keepSnapshots, 0)
      const kept = yield* store.readStream(snapshotStream(agentId))
      assert.isAbove(kept.length, 0)
      // Caught up: a second round reads only the snapshots the first wrote, and writes nothing; a third reads nothing.
      assert.strictEqual(yield* agentsAt.keepSnapshots, kept.length)
      assert.strictEqual((yield* store.readStream(snapshotStream(agentId))).length, kept.length)
      assert.strictEqual(yield* agentsAt.keepSnapshots, 0)
      for (const event of recorded) {
        const point: Point = { _tag: "Position", position: event.position }
        const answer = yield* Effect.result(agentsAt.anywhere(agentId, point))
        const expected = foldAgent(agentId, recorded.filter(isAtOrBefore(point)))
        if (expected === undefined) assert.isTrue(Result.isFailure(answer))
        else assert.deepStrictEqual(Result.getOrUndefined(answer), expected)
      }
    }).pipe(Effect.provideService(SnapshotEvery, 3)))
})

// Keeps the layer's type honest: AgentsAt stands on the event store alone.
export const _layer: Layer.Layer<AgentsAt, never, EventStore> = AgentsAt.layer
