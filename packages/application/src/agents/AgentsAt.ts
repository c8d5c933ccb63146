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
import { Agent, Channel, Domain, RuntimeConfig, ScheduledTask, Secret, Skill, ValidationFailed } from "@cairn/domain"
import { compare, EventStore, type LogPosition, type RecordedEvent } from "@cairn/event-store"
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

const positionPattern = /^(\d{1,19}):(\d{1,19})$/
// A calendar date (midnight UTC), or a date and time with its offset (`Z` or `±hh:mm`): never a local time.
const timePattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/

/** `at` as a query gives it: an ISO time or `transactionId:globalPosition`; 400 `Validation failed: …` otherwise. */
export const parsePoint = (text: string): Result.Result<Point, ValidationFailed> => {
  const position = positionPattern.exec(text)
  if (position !== null) {
    return Result.succeed({ _tag: "Position", position: { transactionId: BigInt(position[1]!), globalPosition: BigInt(position[2]!) } })
  }
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
  task: Schema.decodeUnknownSync(ScheduledTask.TaskEvent)
}

/** The streams whose events make up an agent's state, beside those of the secrets and skills it held. */
export const stateStreams = (agentId: string): ReadonlyArray<string> => [
  Agent.stream(agentId),
  Channel.stream(agentId),
  Domain.stream(agentId),
  RuntimeConfig.stream(agentId),
  ScheduledTask.stream(agentId)
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
 * Folds the events of an agent's streams (and its secrets' and skills'), in log order, into the agent as it then
 * was; undefined when there was no agent (no event yet, or deleted). Pure: the caller picks the events up to its point.
 */
export const foldAgent = (agentId: string, events: ReadonlyArray<RecordedEvent>): AgentAt | undefined => {
  const own = Agent.stream(agentId)
  const channelStream = Channel.stream(agentId)
  const domainStream = Domain.stream(agentId)
  const configStream = RuntimeConfig.stream(agentId)
  const taskStream = ScheduledTask.stream(agentId)
  let agent: Agent.AgentState = Agent.initial
  let lastStop: AgentView["lastStop"]
  let channels: Channel.ChannelsState = Channel.initial
  let domains: Domain.DomainsState = Domain.initial
  let config: ConfigAt = { hash: null, changedPaths: [], writtenAt: null }
  const tasks = new Map<string, TaskAt>()
  const delivered = new Map<string, number | null>()
  const held = new Map<string, HeldSkill>()
  const secrets = new Map<string, LiveSecret>()
  const library = new Map<string, LibrarySkill>()

  for (const event of [...events].sort((a, b) => compare(a.position, b.position))) {
    const stream = event.stream
    if (stream === own) {
      const e = decoders.agent(event.data)
      agent = Agent.evolve(agent, e)
      switch (e._tag) {
        case "AgentStopped":
          lastStop = { reason: e.reason, at: iso(e.at) }
          break
        case "AgentStarted":
          for (const s of e.secrets ?? []) if (delivered.has(s.secretId)) delivered.set(s.secretId, s.version)
          break
        case "AgentSecretsAttached":
          for (const s of e.secrets) if (!delivered.has(s.secretId)) delivered.set(s.secretId, null)
          break
        case "AgentSecretDetached":
          delivered.delete(e.secretId)
          break
        case "AgentSkillsAttached":
          for (const s of e.skills) {
            if (!held.has(s.skillId)) held.set(s.skillId, { name: s.name, cid: s.cid, revision: s.revision, version: s.version ?? null, attachedAt: iso(e.at), updatedAt: iso(e.at) })
          }
          break
        case "AgentSkillUpdated": {
          const before = held.get(e.skill.skillId)
          if (before !== undefined) held.set(e.skill.skillId, { ...before, cid: e.skill.cid, revision: e.skill.revision, version: e.skill.version ?? null, updatedAt: iso(e.at) })
          break
        }
        case "AgentSkillDetached":
          held.delete(e.skillId)
          break
      }
    } else if (stream === channelStream) {
      const e = decoders.channel(event.data)
      channels = Channel.evolve(channels, e)
    } else if (stream === domainStream) {
      domains = Domain.evolve(domains, decoders.domain(event.data))
    } else if (stream === configStream) {
      const e = decoders.config(event.data)
      config = { hash: e.hash, changedPaths: e.changedPaths, writtenAt: iso(e.at) }
    } else if (stream === taskStream) {
      const e = decoders.task(event.data)
      switch (e._tag) {
        case "TaskCreated":
          tasks.set(e.taskId, { id: e.taskId, name: e.name, enabled: e.enabled, schedule: e.schedule, payload: { kind: e.payloadKind }, system: false })
          break
        case "TaskUpdated": {
          const before = tasks.get(e.taskId)
          if (before !== undefined) tasks.set(e.taskId, { ...before, name: e.name, ...(e.schedule === undefined ? {} : { schedule: e.schedule }) })
          break
        }
        case "TaskToggled": {
          const before = tasks.get(e.taskId)
          if (before !== undefined) tasks.set(e.taskId, { ...before, name: e.name, enabled: e.enabled })
          break
        }
        case "TaskDeleted":
          tasks.delete(e.taskId)
          break
        case "TaskRunRequested":
          break
      }
    } else if (stream.startsWith("secret-")) {
      const e = decoders.secret(event.data)
      switch (e._tag) {
        case "SecretCreated":
          secrets.set(e.secretId, { name: e.name, version: 1, createdAt: iso(e.at), updatedAt: iso(e.at) })
          break
        case "SecretValueChanged": {
          const before = secrets.get(e.secretId)
          if (before !== undefined) secrets.set(e.secretId, { ...before, version: e.version, updatedAt: iso(e.at) })
          break
        }
        case "SecretDeleted":
          secrets.delete(e.secretId)
          break
      }
    } else if (stream.startsWith("skill-")) {
      const e = decoders.skill(event.data)
      switch (e._tag) {
        case "SkillAdded":
          library.set(e.skillId, {
            name: e.name, description: e.description, source: e.source, slug: e.slug ?? null, cid: e.cid, version: e.version ?? null, revision: 1
          })
          break
        case "SkillVersionAdded": {
          const before = library.get(e.skillId)
          if (before !== undefined) {
            library.set(e.skillId, { ...before, description: e.description, cid: e.cid, version: e.version ?? null, revision: e.revision })
          }
          break
        }
        case "SkillRemoved":
          library.delete(e.skillId)
          break
      }
    }
  }

  if (agent._tag !== "Live") return undefined
  const { secrets: _secrets, skills: _skills, ...rest } = agent.agent
  const view: AgentView = { ...rest, createdAt: iso(rest.createdAt), ...(lastStop === undefined ? {} : { lastStop }) }
  const byName = (a: { readonly name: string }, b: { readonly name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  return {
    agent: view,
    // As the secrets table joins them: a secret deleted since is no longer listed.
    secrets: [...delivered].flatMap(([id, version]) => {
      const secret = secrets.get(id)
      return secret === undefined ? [] : [{
        id,
        name: secret.name,
        version: secret.version,
        createdAt: secret.createdAt,
        updatedAt: secret.updatedAt,
        synced: version === secret.version
      }]
    }).sort(byName),
    skills: [...held].flatMap(([skillId, skill]) => {
      const latest = library.get(skillId)
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
        latestVersion: latest.version
      } satisfies AgentSkillView]
    }).sort(byName),
    domains: [...domains.domains.values()]
      .map((d) => ({ ...d, createdAt: iso(d.createdAt), updatedAt: iso(d.updatedAt) }))
      .sort((a, b) => a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.domainId < b.domainId ? -1 : a.domainId > b.domainId ? 1 : 0)
      .map(domainView),
    channels: channelsView(channels),
    tasks: [...tasks.values()],
    config
  }
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

export class AgentsAt extends Context.Service<AgentsAt>()("cairn/AgentsAt", {
  make: Effect.gen(function*() {
    const store = yield* EventStore

    const readAll = (streams: ReadonlyArray<string>, point: Point) =>
      Effect.forEach(streams, (stream) => store.readStream(stream), { concurrency: "unbounded" }).pipe(
        Effect.map((read) => read.flat().filter(isAtOrBefore(point)))
      )

    /** The agent at the point, whatever its workspace (the operator's view); AgentNotFound when it did not exist then. */
    const anywhere = Effect.fn("AgentsAt.anywhere")(function*(agentId: string, point: Point) {
      const events = yield* readAll(stateStreams(agentId), point)
      const own = events.filter((e) => e.stream === Agent.stream(agentId))
      if (own.length === 0) return yield* new Agent.AgentNotFound({ agentId })
      const held = yield* readAll(heldStreams(own), point)
      const found = foldAgent(agentId, [...events, ...held])
      if (found === undefined) return yield* new Agent.AgentNotFound({ agentId })
      return found
    })

    /** The agent at the point, as its workspace sees it: another workspace's agent is not found. */
    const visible = (principal: Principal, agentId: string, point: Point) =>
      anywhere(agentId, point).pipe(
        Effect.filterOrFail((found) => found.agent.workspaceId === principal.workspaceId, () => new Agent.AgentNotFound({ agentId }))
      )

    /** `at` as a query gives it, then the agent as its workspace saw it then. */
    const at = (principal: Principal, agentId: string, text: string) =>
      Effect.fromResult(parsePoint(text)).pipe(Effect.flatMap((point) => visible(principal, agentId, point)))

    return { anywhere, visible, at, parsePoint }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
