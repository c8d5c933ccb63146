/**
 * What happens to a hosted agent (stream `agent-<id>`), as facts in the past tense: created, started, failed to
 * start, stopped (crashed or on purpose), recovery scheduled, restart requested, gateway token rotated, secrets
 * attached and detached, deleted.
 */
import { Schema } from "effect"

export const AgentStatus = Schema.Literals(["starting", "running", "not_running", "sleeping"])
export type AgentStatus = typeof AgentStatus.Type

export class AgentCreated extends Schema.TaggedClass<AgentCreated>()("AgentCreated", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  engineVersion: Schema.String,
  /** The Cairn node that runs the agent's gateway (absent in events recorded before nodes were named). */
  node: Schema.optionalKey(Schema.String),
  /**
   * The template the agent was made from, at the folder it had then: its files went into the workspace, and its
   * tasks are the agent's to create (absent for agents made without one).
   */
  template: Schema.optionalKey(Schema.Struct({ templateId: Schema.String, slug: Schema.String, snapshotCid: Schema.String })),
  /** The snapshot of another agent (of the same workspace) the agent was forked from: its workspace is that snapshot. */
  fromSnapshot: Schema.optionalKey(Schema.Struct({ agentId: Schema.String, snapshotCid: Schema.String })),
  /**
   * Its gateway came from the node's warm pool (decision 0058): started ahead under this id, reserved for it at
   * `reservedAt`; absent for a gateway started for the agent.
   */
  fromPool: Schema.optionalKey(Schema.Struct({ reservedAt: Schema.String })),
  /** What it shows of itself (Profile.ts); absent: none given. */
  description: Schema.optionalKey(Schema.String),
  vibe: Schema.optionalKey(Schema.String),
  emoji: Schema.optionalKey(Schema.String),
  /** The model it answers with (`provider/model`, its runtime config's `agents.defaults.model.primary`); absent: the engine's default. */
  model: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

/** Its name, what it shows of itself or its model changed: a field absent is unchanged, `null` cleared. */
export class AgentProfileChanged extends Schema.TaggedClass<AgentProfileChanged>()("AgentProfileChanged", {
  agentId: Schema.String,
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  vibe: Schema.optionalKey(Schema.NullOr(Schema.String)),
  emoji: Schema.optionalKey(Schema.NullOr(Schema.String)),
  /** `null`: Cairn no longer sets the model (the config's own, or the engine's default, applies). */
  model: Schema.optionalKey(Schema.NullOr(Schema.String)),
  at: Schema.String
}) {}

/** A secret as an agent holds it: its id and name (the environment variable its gateway gets). */
export const AttachedSecret = Schema.Struct({ secretId: Schema.String, name: Schema.String })
export type AttachedSecret = typeof AttachedSecret.Type

/** Which version of a secret's value a gateway was started with. */
export const DeliveredSecret = Schema.Struct({ secretId: Schema.String, version: Schema.Int })
export type DeliveredSecret = typeof DeliveredSecret.Type

export class AgentStarted extends Schema.TaggedClass<AgentStarted>()("AgentStarted", {
  agentId: Schema.String,
  engineVersion: Schema.String,
  node: Schema.optionalKey(Schema.String),
  /** The secrets the gateway got in its environment (absent in events recorded before secrets existed). */
  secrets: Schema.optionalKey(Schema.Array(DeliveredSecret)),
  at: Schema.String
}) {}

export class AgentFailedToStart extends Schema.TaggedClass<AgentFailedToStart>()("AgentFailedToStart", {
  agentId: Schema.String,
  logTail: Schema.String,
  at: Schema.String
}) {}

export class AgentStopped extends Schema.TaggedClass<AgentStopped>()("AgentStopped", {
  agentId: Schema.String,
  /** `oom`: it crashed because the kernel's OOM killer ended it at the agent's memory cap (a crash all the same). */
  reason: Schema.Literals(["crashed", "stopped", "oom"]),
  at: Schema.String
}) {}

/** The supervisor will start a crashed agent again after `delayMs` (attempt 0 is the first try after the crash). */
export class AgentRecoveryScheduled extends Schema.TaggedClass<AgentRecoveryScheduled>()("AgentRecoveryScheduled", {
  agentId: Schema.String,
  attempt: Schema.Int,
  delayMs: Schema.Int,
  at: Schema.String
}) {}

export class AgentRestartRequested extends Schema.TaggedClass<AgentRestartRequested>()("AgentRestartRequested", {
  agentId: Schema.String,
  engineVersion: Schema.String,
  at: Schema.String
}) {}

export class GatewayTokenRotated extends Schema.TaggedClass<GatewayTokenRotated>()("GatewayTokenRotated", {
  agentId: Schema.String,
  generation: Schema.Int,
  at: Schema.String
}) {}

/** Secrets were attached: the gateway gets them at its next start. */
export class AgentSecretsAttached extends Schema.TaggedClass<AgentSecretsAttached>()("AgentSecretsAttached", {
  agentId: Schema.String,
  secrets: Schema.Array(AttachedSecret),
  at: Schema.String
}) {}

export class AgentSecretDetached extends Schema.TaggedClass<AgentSecretDetached>()("AgentSecretDetached", {
  agentId: Schema.String,
  secretId: Schema.String,
  at: Schema.String
}) {}

/** A library skill as an agent holds it: which version (revision and folder CID) its workspace got. */
export const AttachedSkill = Schema.Struct({
  skillId: Schema.String,
  name: Schema.String,
  cid: Schema.String,
  revision: Schema.Int,
  version: Schema.optionalKey(Schema.String)
})
export type AttachedSkill = typeof AttachedSkill.Type

/** Skills were attached: their folders go into the agent's workspace. */
export class AgentSkillsAttached extends Schema.TaggedClass<AgentSkillsAttached>()("AgentSkillsAttached", {
  agentId: Schema.String,
  skills: Schema.Array(AttachedSkill),
  at: Schema.String
}) {}

export class AgentSkillDetached extends Schema.TaggedClass<AgentSkillDetached>()("AgentSkillDetached", {
  agentId: Schema.String,
  skillId: Schema.String,
  at: Schema.String
}) {}

/** The agent moved to another version of an attached skill. */
export class AgentSkillUpdated extends Schema.TaggedClass<AgentSkillUpdated>()("AgentSkillUpdated", {
  agentId: Schema.String,
  skill: AttachedSkill,
  at: Schema.String
}) {}

/**
 * Nothing was addressed to the agent for `idleMs`: its gateway was stopped to free the node (its home stays, and its
 * workspace was snapshotted, `snapshotCid`, where snapshots are on). Anything addressed to it wakes it; `wakeAt` is
 * when Cairn wakes it by itself, in time for the next scheduled task it had then.
 */
export class AgentFellAsleep extends Schema.TaggedClass<AgentFellAsleep>()("AgentFellAsleep", {
  agentId: Schema.String,
  idleMs: Schema.Int,
  snapshotCid: Schema.optionalKey(Schema.String),
  wakeAt: Schema.optionalKey(Schema.String),
  at: Schema.String
}) {}

/** What woke a sleeping agent: a request for it, a scheduled task falling due, or a restart. */
export const WakeReason = Schema.Literals(["request", "task", "restart"])
export type WakeReason = typeof WakeReason.Type

/** A sleeping agent's gateway is starting again (`AgentStarted` or `AgentFailedToStart` follows). */
export class AgentWoken extends Schema.TaggedClass<AgentWoken>()("AgentWoken", {
  agentId: Schema.String,
  reason: WakeReason,
  at: Schema.String
}) {}

export class AgentDeleted extends Schema.TaggedClass<AgentDeleted>()("AgentDeleted", {
  agentId: Schema.String,
  at: Schema.String
}) {}

export const AgentEvent = Schema.Union([
  AgentCreated, AgentStarted, AgentFailedToStart, AgentStopped, AgentRecoveryScheduled, AgentRestartRequested, GatewayTokenRotated,
  AgentSecretsAttached, AgentSecretDetached, AgentSkillsAttached, AgentSkillDetached, AgentSkillUpdated, AgentDeleted,
  AgentProfileChanged, AgentFellAsleep, AgentWoken
])
export type AgentEvent = typeof AgentEvent.Type
