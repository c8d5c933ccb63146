/**
 * Time travel: an agent as it was at a point of the log (`GET /v0/agents/{id}?at=…` and the same on its skills,
 * domains, channels, tasks and config; `cli audit --agent <id> --at <point>`). The point is an ISO time (the events
 * recorded at or before it) or a log position `transactionId:globalPosition` (the events at or before it in log
 * order), the form the agent's history shows beside each event. The state is folded from the log alone, with the
 * domain's own `evolve`s where they hold what the views need, so it has the views the read models give now, as they
 * would have been then: the read models are never asked.
 *
 * What the log never holds is not shown: a secret's value (its name and version only), a channel's token (whether it
 * was set and its hint), a task's payload text (its kind only) and the runtime config's values (only the hash of the
 * version Cairn wrote and which top-level settings changed). Whether a gateway was provisioning, or a WhatsApp phone
 * was linked, is the engine's runtime state, never an event: at a point it is absent (not linked).
 *
 * An agent deleted later is visible at a point before its deletion, to its own workspace (its events are kept);
 * before its first event or after its deletion it is not found (decision 0048).
 */
import { Agent, Channel, Domain, RuntimeConfig, ScheduledTask, Secret, Skill, Snapshot, ValidationFailed } from "@cairn/domain"
import { compare, EventStore, ExpectedVersion, formatPosition, type LogPosition, parsePosition, type RecordedEvent, start } from "@cairn/event-store"
import { Context, Effect, Layer, Result, Schema } from "effect"
import type { Principal } from "../Access.ts"
import type { ChannelsView } from "../channels/Channels.ts"
import { domainView, type DomainView } from "../domains/Domains.ts"
import type { AgentView } from "../readmodels/AgentsTable.ts"
import type { AgentSecretView } from "../readmodels/SecretsTable.ts"
import type { AgentSkillView } from "../readmodels/SkillsTable.ts"

/** Where in the log to look: a time (events recorded at or before it) or a log position (at or before it). */
export type Point =
  | { readonly _tag: "Time"; readonly time: Date }
  | { readonly _tag: "Position"; readonly position: LogPosition }

// A calendar date (midnight UTC), or a date and time with its offset (`Z` or `±hh:mm`): never a local time.
const timePattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

/** `at` as a query gives it: an ISO time or `transactionId:globalPosition`; 400 `Validation failed: …` otherwise. */
export const parsePoint = (text: string): Result.Result<Point, ValidationFailed> => {
  const position = text === "0" ? undefined : parsePosition(text)
  if (position !== undefined) return Result.succeed({ _tag: "Position", position })
  const time = timePattern.test(text) ? new Date(text) : undefined
  if (time === undefined || Number.isNaN(time.getTime())) {
    return Result.fail(
      new ValidationFailed({
        detail: "at must be an ISO time with its offset (2026-11-28T14:00:00Z) or a log position transactionId:globalPosition (812:4051)"
      })
    )
  }
  return Result.succeed({ _tag: "Time", time })
}

/** Whether an event is at or before the point. */
export const isAtOrBefore = (point: Point) => (event: RecordedEvent): boolean =>
  point._tag === "Time" ? event.recordedAt.getTime() <= point.time.getTime() : compare(event.position, point.position) <= 0

/** A task as the log knows it: what Cairn recorded of it (its payload only by kind). */
export interface TaskAt {
  readonly id: string
  readonly name: string
  readonly enabled: boolean
  readonly schedule: ScheduledTask.Schedule
  readonly payload: { readonly kind: string }
  readonly system: boolean
}

/** The runtime config as the log knows it: the hash of the version Cairn last wrote, never its values. */
export interface ConfigAt {
  readonly hash: string | null
  /** The top-level settings that last write changed. */
  readonly changedPaths: ReadonlyArray<string>
  readonly writtenAt: string | null
}

/** An agent and what it held, at a point. */
export interface AgentAt {
  readonly agent: AgentView
  readonly secrets: ReadonlyArray<AgentSecretView>
  readonly skills: ReadonlyArray<AgentSkillView>
  readonly domains: ReadonlyArray<DomainView>
  readonly channels: ChannelsView
  readonly tasks: ReadonlyArray<TaskAt>
  readonly config: ConfigAt
}

// What the fold keeps beside the domain's states, mirroring the read models' rows.
interface LibrarySkill {
  readonly name: string
  readonly description: string
  readonly source: Skill.Source
  readonly slug: string | null
  readonly cid: string
  readonly version: string | null
  readonly revision: number
}
interface HeldSkill {
  readonly name: string
  readonly cid: string
  readonly revision: number
  readonly version: string | null
  readonly attachedAt: string
  readonly updatedAt: string
}
interface LiveSecret {
  readonly name: string
  readonly version: number
  readonly createdAt: string
  readonly updatedAt: string
}

const iso = (at: string) => new Date(at).toISOString()

const decoders = {
  agent: Schema.decodeUnknownSync(Agent.AgentEvent),
  secret: Schema.decodeUnknownSync(Secret.SecretEvent),
  skill: Schema.decodeUnknownSync(Skill.SkillEvent),
  channel: Schema.decodeUnknownSync(Channel.ChannelEvent),
  domain: Schema.decodeUnknownSync(Domain.DomainEvent),
  config: Schema.decodeUnknownSync(RuntimeConfig.RuntimeConfigEvent),
  task: Schema.decodeUnknownSync(ScheduledTask.TaskEvent),
  snapshot: Schema.decodeUnknownSync(Snapshot.SnapshotEvent)
}

/** The streams whose events make up an agent's state, beside those of the secrets and skills it held. */
export const stateStreams = (agentId: string): ReadonlyArray<string> => [
  Agent.stream(agentId),
  Channel.stream(agentId),
  Domain.stream(agentId),
  RuntimeConfig.stream(agentId),
  ScheduledTask.stream(agentId),
  Snapshot.stream(agentId)
]

/** The secrets and skills an agent's own events ever name: their streams hold their names, versions and times. */
export const heldStreams = (agentEvents: ReadonlyArray<RecordedEvent>): ReadonlyArray<string> => {
  const secrets = new Set<string>()
  const skills = new Set<string>()
  for (const event of agentEvents) {
    const data = event.data as { secrets?: ReadonlyArray<{ secretId?: unknown }>; skills?: ReadonlyArray<{ skillId?: unknown }>; skill?: { skillId?: unknown } }
    if (event.type === "AgentSecretsAttached") {
      for (const s of data.secrets ?? []) if (typeof s.secretId === "string") secrets.add(s.secretId)
    }
    if (event.type === "AgentSkillsAttached") {
      for (const s of data.skills ?? []) if (typeof s.skillId === "string") skills.add(s.skillId)
    }
    if (event.type === "AgentSkillUpdated" && typeof data.skill?.skillId === "string") skills.add(data.skill.skillId)
  }
  return [...[...secrets].map(Secret.stream), ...[...skills].map(Skill.stream)]
}

/**
 * The fold of an agent's streams (and its secrets' and skills'), one event at a time in log order: the domain's own
 * states where they hold what the views need, beside what the read models keep (a gateway's last stop, the value
 * version each gateway got, when a skill was attached). Resumable: it can start from a snapshot (`toJson`/`fromJson`).
 */
export class Fold {
  agent: Agent.AgentState = Agent.initial
  lastStop: AgentView["lastStop"] = undefined
  channels: Channel.ChannelsState = Channel.initial
  domains: Domain.DomainsState = Domain.initial
  config: ConfigAt = { hash: null, changedPaths: [], writtenAt: null }
  /** When its workspace was last snapshotted (`lastSync`), and its kept snapshots by sequence (the latest is `snapshotCid`). */
  lastSync: string | null = null
  readonly keptSnapshots = new Map<number, string>()
  readonly tasks = new Map<string, TaskAt>()
  readonly delivered = new Map<string, number | null>()
  readonly held = new Map<string, HeldSkill>()
  readonly secrets = new Map<string, LiveSecret>()
  readonly library = new Map<string, LibrarySkill>()

  readonly agentId: string

  constructor(agentId: string) {
    this.agentId = agentId
  }

  /** Folds one event of the agent's streams, or of a secret's or skill's; anything else changes nothing. */
  step(event: RecordedEvent): void {
    const stream = event.stream
    const agentId = this.agentId
    if (stream === Agent.stream(agentId)) this.agentEvent(decoders.agent(event.data))
    else if (stream === Channel.stream(agentId)) this.channels = Channel.evolve(this.channels, decoders.channel(event.data))
    else if (stream === Domain.stream(agentId)) this.domains = Domain.evolve(this.domains, decoders.domain(event.data))
    else if (stream === RuntimeConfig.stream(agentId)) {
      const e = decoders.config(event.data)
      this.config = { hash: e.hash, changedPaths: e.changedPaths, writtenAt: iso(e.at) }
    } else if (stream === ScheduledTask.stream(agentId)) this.taskEvent(decoders.task(event.data))
    else if (stream === Snapshot.stream(agentId)) this.snapshotEvent(decoders.snapshot(event.data))
    else if (stream.startsWith("secret-")) this.secretEvent(decoders.secret(event.data))
    else if (stream.startsWith("skill-")) this.skillEvent(decoders.skill(event.data))
  }

  /** As the snapshots read model keeps them: the last one taken's time, and which are still kept. */
  private snapshotEvent(e: Snapshot.SnapshotEvent) {
    if (e._tag === "SnapshotTaken") {
      this.lastSync = iso(e.at)
      this.keptSnapshots.set(e.sequence, e.snapshotCid)
    } else if (e._tag === "SnapshotsExpired") {
      for (const sequence of e.sequences) this.keptSnapshots.delete(sequence)
    }
  }

  private latestSnapshotCid(): string | null {
    let latest: [number, string] | undefined
    for (const entry of this.keptSnapshots) if (latest === undefined || entry[0] > latest[0]) latest = entry
    return latest?.[1] ?? null
  }

  private agentEvent(e: Agent.AgentEvent) {
    this.agent = Agent.evolve(this.agent, e)
    switch (e._tag) {
      case "AgentStopped":
        this.lastStop = { reason: e.reason, at: iso(e.at) }
        break
      case "AgentStarted":
        for (const s of e.secrets ?? []) if (this.delivered.has(s.secretId)) this.delivered.set(s.secretId, s.version)
        break
      case "AgentSecretsAttached":
        for (const s of e.secrets) if (!this.delivered.has(s.secretId)) this.delivered.set(s.secretId, null)
        break
      case "AgentSecretDetached":
        this.delivered.delete(e.secretId)
        break
      case "AgentSkillsAttached":
        for (const s of e.skills) {
          if (!this.held.has(s.skillId)) {
            this.held.set(s.skillId, { name: s.name, cid: s.cid, revision: s.revision, version: s.version ?? null, attachedAt: iso(e.at), updatedAt: iso(e.at) })
          }
        }
        break
      case "AgentSkillUpdated": {
        const before = this.held.get(e.skill.skillId)
        if (before !== undefined) {
          this.held.set(e.skill.skillId, { ...before, cid: e.skill.cid, revision: e.skill.revision, version: e.skill.version ?? null, updatedAt: iso(e.at) })
        }
        break
      }
      case "AgentSkillDetached":
        this.held.delete(e.skillId)
        break
    }
  }

  private taskEvent(e: ScheduledTask.TaskEvent) {
    const before = "taskId" in e ? this.tasks.get(e.taskId) : undefined
    switch (e._tag) {
      case "TaskCreated":
        this.tasks.set(e.taskId, { id: e.taskId, name: e.name, enabled: e.enabled, schedule: e.schedule, payload: { kind: e.payloadKind }, system: false })
        break
      case "TaskUpdated":
        if (before !== undefined) this.tasks.set(e.taskId, { ...before, name: e.name, ...(e.schedule === undefined ? {} : { schedule: e.schedule }) })
        break
      case "TaskToggled":
        if (before !== undefined) this.tasks.set(e.taskId, { ...before, name: e.name, enabled: e.enabled })
        break
      case "TaskDeleted":
        this.tasks.delete(e.taskId)
        break
      case "TaskRunRequested":
        break
    }
  }

  private secretEvent(e: Secret.SecretEvent) {
    switch (e._tag) {
      case "SecretCreated":
        this.secrets.set(e.secretId, { name: e.name, version: 1, createdAt: iso(e.at), updatedAt: iso(e.at) })
        break
      case "SecretValueChanged": {
        const before = this.secrets.get(e.secretId)
        if (before !== undefined) this.secrets.set(e.secretId, { ...before, version: e.version, updatedAt: iso(e.at) })
        break
      }
      case "SecretDeleted":
        this.secrets.delete(e.secretId)
        break
    }
  }

  private skillEvent(e: Skill.SkillEvent) {
    switch (e._tag) {
      case "SkillAdded":
        this.library.set(e.skillId, {
          name: e.name, description: e.description, source: e.source, slug: e.slug ?? null, cid: e.cid, version: e.version ?? null, revision: 1
        })
        break
      case "SkillVersionAdded": {
        const before = this.library.get(e.skillId)
        if (before !== undefined) {
          this.library.set(e.skillId, { ...before, description: e.description, cid: e.cid, version: e.version ?? null, revision: e.revision })
        }
        break
      }
      case "SkillRemoved":
        this.library.delete(e.skillId)
        break
    }
  }

  /** The agent as the routes show it; undefined when there was none (no event yet, or deleted). */
  view(): AgentAt | undefined {
    if (this.agent._tag !== "Live") return undefined
    const { secrets: _secrets, skills: _skills, ...rest } = this.agent.agent
    const lastStop = this.lastStop
    const agent: AgentView = {
      ...rest,
      createdAt: iso(rest.createdAt),
      ...(lastStop === undefined ? {} : { lastStop }),
      snapshots: { lastSync: this.lastSync, snapshotCid: this.latestSnapshotCid() }
    }
    const byName = (a: { readonly name: string }, b: { readonly name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    return {
      agent,
      // As the secrets table joins them: a secret deleted since is no longer listed.
      secrets: [...this.delivered].flatMap(([id, delivered]) => {
        const secret = this.secrets.get(id)
        return secret === undefined ? [] : [{
          id,
          name: secret.name,
          version: secret.version,
          createdAt: secret.createdAt,
          updatedAt: secret.updatedAt,
          synced: delivered === secret.version
        }]
      }).sort(byName),
      // As the skills table joins them: a skill removed from the library is no longer listed.
      skills: [...this.held].flatMap(([skillId, skill]) => {
        const latest = this.library.get(skillId)
        return latest === undefined ? [] : [{
          skillId,
          skillCid: skill.cid,
          name: latest.name,
          description: latest.description,
          version: skill.version,
          revision: skill.revision,
          source: latest.source,
          slug: latest.slug,
          attachedAt: skill.attachedAt,
          updatedAt: skill.updatedAt,
          latestCid: latest.cid,
          latestRevision: latest.revision,
          latestVersion: latest.version,
          // Who signed a version is a fact about its content, not the agent's: the routes show it as it is now.
          signedBy: null
        } satisfies AgentSkillView]
      }).sort(byName),
      domains: [...this.domains.domains.values()]
        .map((d) => ({ ...d, createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt) }))
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.domainId < b.domainId ? -1 : a.domainId > b.domainId ? 1 : 0))
        .map(domainView),
      channels: channelsView(this.channels),
      tasks: [...this.tasks.values()],
      config: this.config
    }
  }

  /** The fold as JSON (maps as their entries), for a snapshot. Secrets appear by name and version only. */
  toJson(): FoldJson {
    const agent = this.agent._tag === "NoAgent"
      ? this.agent
      : { _tag: this.agent._tag, agent: { ...this.agent.agent, secrets: [...this.agent.agent.secrets], skills: [...this.agent.agent.skills] } }
    return {
      agent,
      ...(this.lastStop === undefined ? {} : { lastStop: this.lastStop }),
      // A token as whether it was set and its hint only: its ciphertext stays in its own event.
      channels: [...this.channels.channels].map(([name, settings]) => [name, {
        ...settings,
        ...(settings.botToken === undefined ? {} : { botToken: withoutCiphertext(settings.botToken) }),
        ...(settings.appToken === undefined ? {} : { appToken: withoutCiphertext(settings.appToken) })
      }]),
      domains: [...this.domains.domains],
      config: this.config,
      lastSync: this.lastSync,
      keptSnapshots: [...this.keptSnapshots],
      tasks: [...this.tasks],
      delivered: [...this.delivered],
      held: [...this.held],
      secrets: [...this.secrets],
      library: [...this.library]
    }
  }

  static fromJson(agentId: string, json: FoldJson): Fold {
    const fold = new Fold(agentId)
    const agent = json.agent as { _tag: Agent.AgentState["_tag"]; agent?: Record<string, unknown> }
    fold.agent = agent.agent === undefined
      ? Agent.initial
      : {
        _tag: agent._tag as "Live",
        agent: {
          ...agent.agent,
          secrets: new Map(agent.agent["secrets"] as Array<[string, string]>),
          skills: new Map(agent.agent["skills"] as Array<[string, Agent.AttachedSkill]>)
        } as unknown as Agent.Agent
      }
    fold.lastStop = json.lastStop as AgentView["lastStop"]
    fold.channels = { channels: new Map(json.channels as Array<[Channel.ChannelName, Channel.ChannelSettings]>) }
    fold.domains = { domains: new Map(json.domains as Array<[string, Domain.Domain]>) }
    fold.config = json.config as ConfigAt
    // A snapshot kept before the agent's own snapshots were folded has neither: its progress then folds them all.
    fold.lastSync = (json.lastSync as string | null | undefined) ?? null
    for (const [k, v] of (json.keptSnapshots ?? []) as Array<[number, string]>) fold.keptSnapshots.set(k, v)
    for (const [k, v] of json.tasks as Array<[string, TaskAt]>) fold.tasks.set(k, v)
    for (const [k, v] of json.delivered as Array<[string, number | null]>) fold.delivered.set(k, v)
    for (const [k, v] of json.held as Array<[string, HeldSkill]>) fold.held.set(k, v)
    for (const [k, v] of json.secrets as Array<[string, LiveSecret]>) fold.secrets.set(k, v)
    for (const [k, v] of json.library as Array<[string, LibrarySkill]>) fold.library.set(k, v)
    return fold
  }
}

const withoutCiphertext = (token: Channel.SealedToken): Channel.SealedToken => ({
  sealingId: "",
  sealed: { keyId: "", nonce: "", ciphertext: "" },
  ...(token.hint === undefined ? {} : { hint: token.hint })
})

/** A fold as a snapshot stores it. */
export interface FoldJson {
  readonly agent: unknown
  readonly lastStop?: unknown
  readonly channels: ReadonlyArray<unknown>
  readonly domains: ReadonlyArray<unknown>
  readonly config: unknown
  readonly lastSync?: unknown
  readonly keptSnapshots?: ReadonlyArray<unknown>
  readonly tasks: ReadonlyArray<unknown>
  readonly delivered: ReadonlyArray<unknown>
  readonly held: ReadonlyArray<unknown>
  readonly secrets: ReadonlyArray<unknown>
  readonly library: ReadonlyArray<unknown>
}

/**
 * Folds the events of an agent's streams (and its secrets' and skills'), in log order, into the agent as it then
 * was; undefined when there was no agent (no event yet, or deleted). Pure: the caller picks the events up to its point.
 */
export const foldAgent = (agentId: string, events: ReadonlyArray<RecordedEvent>): AgentAt | undefined => {
  const fold = new Fold(agentId)
  for (const event of [...events].sort((a, b) => compare(a.position, b.position))) fold.step(event)
  return fold.view()
}

/** The channels as `GET …/channels` shows them; a token only as whether it was set and its hint. */
const channelsView = (state: Channel.ChannelsState): ChannelsView => {
  const common = (name: Channel.ChannelName) => {
    const settings = state.channels.get(name)
    return { configured: settings !== undefined, enabled: settings?.enabled ?? false, dmPolicy: settings?.dmPolicy ?? null, allowFrom: settings?.allowFrom ?? [] }
  }
  const token = (name: Channel.ChannelName, kind: Channel.TokenKind) => {
    const sealed = state.channels.get(name)?.[kind]
    return { set: sealed !== undefined, hint: sealed?.hint ?? null }
  }
  const bot = (name: Channel.ChannelName) => ({ botTokenSet: token(name, "botToken").set, botTokenHint: token(name, "botToken").hint })
  return {
    telegram: { ...common("telegram"), ...bot("telegram") },
    slack: { ...common("slack"), ...bot("slack"), appTokenSet: token("slack", "appToken").set, appTokenHint: token("slack", "appToken").hint },
    discord: { ...common("discord"), ...bot("discord") },
    // Whether a phone was linked is the engine's to say, at the time; the log never holds it.
    whatsapp: { ...common("whatsapp"), linked: false }
  }
}

/**
 * Every this many events folded past the last snapshot, the fold is kept as one (decision 0048); read when the
 * service is built (the runtime sets it from `TIME_TRAVEL_SNAPSHOT_EVERY`).
 */
export const SnapshotEvery = Context.Reference<number>("cairn/AgentsAt/SnapshotEvery", { defaultValue: () => 10_000 })

/** The checkpoint of the background snapshotter (`keepSnapshots`). */
const snapshotsCheckpoint = "agentat-snapshots"

/** Where an agent's time-travel snapshots are kept: not one of its audit streams, never in its history. */
export const snapshotStream = (agentId: string) => `agentat-${agentId}`
const snapshotType = "AgentStateSnapshotted"

/**
 * A fold kept at a final log position: what it folded up to there (each stream's dense prefix of versions, and the
 * few later versions already folded, should a stream's versions and the log order ever cross), and the state.
 */
interface Snapshot {
  readonly position: string
  readonly lastRecordedAt: string
  readonly versions: Readonly<Record<string, number>>
  readonly beyond: Readonly<Record<string, ReadonlyArray<number>>>
  readonly state: FoldJson
}

/** A snapshot's position as this module stored it (`formatPosition`). */
const storedPosition = (text: string): LogPosition => parsePosition(text) ?? start

/** Whether everything a snapshot folded is at or before the point. */
const covers = (snapshot: Snapshot, point: Point) =>
  point._tag === "Time"
    ? new Date(snapshot.lastRecordedAt).getTime() <= point.time.getTime()
    : compare(storedPosition(snapshot.position), point.position) <= 0

/** Each stream's versions folded so far: the dense prefix, and the later ones folded out of turn. */
class Progress {
  readonly next = new Map<string, number>()
  readonly beyond = new Map<string, Set<number>>()
  constructor(snapshot: Snapshot | undefined) {
    for (const [stream, version] of Object.entries(snapshot?.versions ?? {})) this.next.set(stream, version + 1)
    for (const [stream, versions] of Object.entries(snapshot?.beyond ?? {})) this.beyond.set(stream, new Set(versions))
  }
  from(stream: string) {
    return this.next.get(stream) ?? 1
  }
  folded(event: RecordedEvent) {
    return event.version < this.from(event.stream) || this.beyond.get(event.stream)?.has(event.version) === true
  }
  add(event: RecordedEvent) {
    let next = this.from(event.stream)
    const beyond = this.beyond.get(event.stream) ?? new Set<number>()
    if (event.version !== next) {
      beyond.add(event.version)
      this.beyond.set(event.stream, beyond)
      return
    }
    next++
    while (beyond.delete(next)) next++
    this.next.set(event.stream, next)
  }
  snapshot(position: LogPosition, lastRecordedAt: Date, fold: Fold): Snapshot {
    return {
      position: formatPosition(position),
      lastRecordedAt: lastRecordedAt.toISOString(),
      versions: Object.fromEntries([...this.next].map(([stream, next]) => [stream, next - 1])),
      beyond: Object.fromEntries([...this.beyond].filter(([, set]) => set.size > 0).map(([stream, set]) => [stream, [...set]])),
      state: fold.toJson()
    }
  }
}

export class AgentsAt extends Context.Service<AgentsAt>()("cairn/AgentsAt", {
  make: Effect.gen(function*() {
    const store = yield* EventStore
    const every = yield* SnapshotEvery
    const chunk = Math.max(100, Math.min(5_000, every))

    /** A stream's events after what was folded, up to the point: read in chunks, stopping past the point. */
    const readAfter = (stream: string, progress: Progress, point: Point, chunk: number) =>
      Effect.gen(function*() {
        const kept: Array<RecordedEvent> = []
        let from = progress.from(stream)
        for (;;) {
          const read = yield* store.readStream(stream, { fromVersion: from, limit: chunk })
          for (const event of read) if (isAtOrBefore(point)(event) && !progress.folded(event)) kept.push(event)
          const last = read.at(-1)
          if (read.length < chunk || last === undefined || !isAtOrBefore(point)(last)) return kept
          from = last.version + 1
        }
      })

    const readAllAfter = (streams: ReadonlyArray<string>, progress: Progress, point: Point, chunk: number) =>
      Effect.forEach(streams, (stream) => readAfter(stream, progress, point, chunk), { concurrency: "unbounded" }).pipe(Effect.map((read) => read.flat()))

    /** The latest snapshot at or before the point, if any. */
    const latestSnapshot = (agentId: string, point: Point) =>
      Effect.map(store.readStream(snapshotStream(agentId)), (events) => {
        let best: Snapshot | undefined
        for (const event of events) {
          if (event.type !== snapshotType) continue
          const snapshot = event.data as Snapshot
          if (!covers(snapshot, point)) continue
          if (best === undefined || compare(storedPosition(best.position), storedPosition(snapshot.position)) < 0) best = snapshot
        }
        return best
      })

    /** Whether an event's place in the log is final (a later event is past the store's fence): only those are kept. */
    const isFinal = (event: RecordedEvent) =>
      Effect.map(store.readAll({ after: event.position, limit: 1 }), (later) => later.length > 0)

    /** The agent at the point, whatever its workspace (the operator's view); AgentNotFound when it did not exist then. */
    const anywhere = Effect.fn("AgentsAt.anywhere")(function*(agentId: string, point: Point) {
      const snapshot = yield* latestSnapshot(agentId, point)
      const progress = new Progress(snapshot)
      const fold = snapshot === undefined ? new Fold(agentId) : Fold.fromJson(agentId, snapshot.state)
      const events = yield* readAllAfter(stateStreams(agentId), progress, point, chunk)
      if (snapshot === undefined && !events.some((e) => e.stream === Agent.stream(agentId))) return yield* new Agent.AgentNotFound({ agentId })
      // The secrets' and skills' streams: those folded before, and those the agent's events since name.
      const known = [...progress.next.keys()].filter((stream) => stream.startsWith("secret-") || stream.startsWith("skill-"))
      const held = yield* readAllAfter([...new Set([...known, ...heldStreams(events.filter((e) => e.stream === Agent.stream(agentId)))])], progress, point, chunk)
      const all = [...events, ...held].sort((a, b) => compare(a.position, b.position))
      let lastRecordedAt = snapshot === undefined ? new Date(0) : new Date(snapshot.lastRecordedAt)
      let sinceSnapshot = 0
      const kept: Array<Snapshot> = []
      for (const event of all) {
        fold.step(event)
        progress.add(event)
        if (event.recordedAt > lastRecordedAt) lastRecordedAt = event.recordedAt
        if (++sinceSnapshot >= every && (yield* isFinal(event))) {
          kept.push(progress.snapshot(event.position, lastRecordedAt, fold))
          sinceSnapshot = 0
        }
      }
      if (kept.length > 0) {
        // A snapshot only saves the next traveller the fold: one that cannot be kept changes no answer.
        yield* store.append([{ stream: snapshotStream(agentId), expected: ExpectedVersion.Any, events: kept.map((data) => ({ type: snapshotType, data })) }]).pipe(
          Effect.catchCause((cause) => Effect.logWarning(`Agent ${agentId}: time-travel snapshots not kept`, cause))
        )
      }
      const found = fold.view()
      if (found === undefined) return yield* new Agent.AgentNotFound({ agentId })
      return found
    })
    // Which agent a stream's events are state of (`stateStreams`), by the stream's name alone.
    const statePrefixes = stateStreams("")
    const agentOf = (stream: string) => {
      const prefix = statePrefixes.find((p) => stream.startsWith(p))
      return prefix === undefined ? undefined : stream.slice(prefix.length)
    }
    /** Events of each agent's state seen since its last snapshot was written by `keepSnapshots` (this process only). */
    const grown = new Map<string, number>()

    /**
     * One round of the background snapshotter: the log read on from its checkpoint, and every agent whose state
     * grew by `SnapshotEvery` events since the last round that folded it is folded now, from its latest snapshot,
     * keeping snapshots on the way as a travel does. The first travel to any point then folds at most that many
     * events (decision 0048), instead of the whole history up to it. Gives how many events it read.
     */
    const keepSnapshots = Effect.gen(function*() {
      const every = yield* SnapshotEvery
      const from = yield* store.loadCheckpoint(snapshotsCheckpoint)
      const events = yield* store.readAll({ after: from, limit: 5_000 })
      if (events.length === 0) return 0
      for (const event of events) {
        const agentId = agentOf(event.stream)
        if (agentId !== undefined) grown.set(agentId, (grown.get(agentId) ?? 0) + 1)
      }
      const to = events[events.length - 1]!.position
      for (const [agentId, count] of grown) {
        if (count < every) continue
        grown.delete(agentId)
        // A deleted agent is not found at the end, but its snapshots up to its deletion are kept all the same.
        yield* anywhere(agentId, { _tag: "Position", position: to }).pipe(Effect.catchTag("AgentNotFound", () => Effect.void))
      }
      yield* store.commitCheckpoint(snapshotsCheckpoint, from, to, Effect.void).pipe(
        // Another node moved it: that node folded these; this one goes on from where it got.
        Effect.catchTag("CheckpointConflict", () => Effect.void)
      )
      return events.length
    })

    /** The background snapshotter, for as long as the server runs: rounds until the log is caught up, every few seconds. */
    const run = Effect.gen(function*() {
      for (;;) {
        const read = yield* keepSnapshots.pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logWarning("Time-travel snapshots: a round failed; trying again", cause), 0))
        )
        if (read < 5_000) yield* Effect.sleep("5 seconds")
      }
    })

    /** The agent at the point, as its workspace sees it: another workspace's agent is not found. */
    const visible = (principal: Principal, agentId: string, point: Point) =>
      anywhere(agentId, point).pipe(
        Effect.filterOrFail((found) => found.agent.workspaceId === principal.workspaceId, () => new Agent.AgentNotFound({ agentId }))
      )

    /** `at` as a query gives it, then the agent as its workspace saw it then. */
    const at = (principal: Principal, agentId: string, text: string) =>
      Effect.fromResult(parsePoint(text)).pipe(Effect.flatMap((point) => visible(principal, agentId, point)))

    return { anywhere, visible, at, parsePoint, keepSnapshots, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
