/**
 * What can be asked of an agent, as imperatives. A user's commands carry the caller's workspace (another
 * workspace's agent is not found); the supervisor's carry what the engine reported. The application service puts
 * the time, ids and the engine versions on offer into each command, so deciding needs nothing else.
 */
import { Schema } from "effect"
import { AgentCreated, AgentFellAsleep, AttachedSecret, AttachedSkill, DeliveredSecret, WakeReason } from "./Events.ts"

export class CreateAgent extends Schema.TaggedClass<CreateAgent>()("CreateAgent", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  userId: Schema.String,
  /** Already checked by `validateName`. */
  name: Schema.String,
  engineVersion: Schema.String,
  node: Schema.String,
  /** Secrets to attach from the start (checked like AttachSecrets). */
  secrets: Schema.Array(AttachedSecret),
  /** Skills to attach from the start (a template's; checked like AttachSkills). */
  skills: Schema.optionalKey(Schema.Array(AttachedSkill)),
  template: AgentCreated.fields.template,
  fromSnapshot: AgentCreated.fields.fromSnapshot,
  fromPool: AgentCreated.fields.fromPool,
  /** Already checked by `validateProfile`. */
  description: AgentCreated.fields.description,
  vibe: AgentCreated.fields.vibe,
  emoji: AgentCreated.fields.emoji,
  /** Already checked as `provider/model`. */
  model: AgentCreated.fields.model,
  at: Schema.String
}) {}

/** Changes the agent's name, profile or model (each already checked); a field absent stays as it is, `null` clears it. */
export class ChangeAgentProfile extends Schema.TaggedClass<ChangeAgentProfile>()("ChangeAgentProfile", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  vibe: Schema.optionalKey(Schema.NullOr(Schema.String)),
  emoji: Schema.optionalKey(Schema.NullOr(Schema.String)),
  model: Schema.optionalKey(Schema.NullOr(Schema.String)),
  at: Schema.String
}) {}

/** A user's restart, on `version` when given (it must be offered, and not older than the agent's). */
export class RestartAgent extends Schema.TaggedClass<RestartAgent>()("RestartAgent", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  version: Schema.optionalKey(Schema.String),
  offeredVersions: Schema.Array(Schema.String),
  at: Schema.String
}) {}

/** The supervisor starts the agent again on its own version: after a Cairn restart, or to recover from a crash. */
export class RelaunchAgent extends Schema.TaggedClass<RelaunchAgent>()("RelaunchAgent", {
  agentId: Schema.String,
  at: Schema.String
}) {}

export class RecordAgentStarted extends Schema.TaggedClass<RecordAgentStarted>()("RecordAgentStarted", {
  agentId: Schema.String,
  engineVersion: Schema.String,
  node: Schema.String,
  secrets: Schema.Array(DeliveredSecret),
  at: Schema.String
}) {}

export class RecordStartFailure extends Schema.TaggedClass<RecordStartFailure>()("RecordStartFailure", {
  agentId: Schema.String,
  logTail: Schema.String,
  at: Schema.String
}) {}

/**
 * The engine reports the gateway crashed: recorded only while the agent is running (a restart or delete wins).
 * `reason` is `oom` when the kernel's OOM killer ended it at the agent's memory cap.
 */
export class RecordCrash extends Schema.TaggedClass<RecordCrash>()("RecordCrash", {
  agentId: Schema.String,
  reason: Schema.optionalKey(Schema.Literal("oom")),
  at: Schema.String
}) {}

export class ScheduleRecovery extends Schema.TaggedClass<ScheduleRecovery>()("ScheduleRecovery", {
  agentId: Schema.String,
  attempt: Schema.Int,
  delayMs: Schema.Int,
  at: Schema.String
}) {}

export class RotateGatewayToken extends Schema.TaggedClass<RotateGatewayToken>()("RotateGatewayToken", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

/** Attach workspace secrets; attaching one already attached records nothing for it. */
export class AttachSecrets extends Schema.TaggedClass<AttachSecrets>()("AttachSecrets", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  secrets: Schema.Array(AttachedSecret),
  at: Schema.String
}) {}

export class DetachSecret extends Schema.TaggedClass<DetachSecret>()("DetachSecret", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  secretId: Schema.String,
  at: Schema.String
}) {}

/** Attach library skills (at most `Skill.MaxPerAgent` in all); one already attached records nothing for it. */
export class AttachSkills extends Schema.TaggedClass<AttachSkills>()("AttachSkills", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  skills: Schema.Array(AttachedSkill),
  at: Schema.String
}) {}

export class DetachSkill extends Schema.TaggedClass<DetachSkill>()("DetachSkill", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  skillId: Schema.String,
  at: Schema.String
}) {}

/** Move an attached skill to another version of it (or back, to undo an update that could not be applied). */
export class UpdateSkill extends Schema.TaggedClass<UpdateSkill>()("UpdateSkill", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  skill: AttachedSkill,
  at: Schema.String
}) {}

export class DeleteAgent extends Schema.TaggedClass<DeleteAgent>()("DeleteAgent", {
  agentId: Schema.String,
  workspaceId: Schema.String,
  at: Schema.String
}) {}

/** The idle watch puts a running agent to sleep; an agent that is not running any longer (restarted, crashed) stays as it is. */
export class PutToSleep extends Schema.TaggedClass<PutToSleep>()("PutToSleep", {
  agentId: Schema.String,
  idleMs: Schema.Int,
  snapshotCid: AgentFellAsleep.fields.snapshotCid,
  wakeAt: AgentFellAsleep.fields.wakeAt,
  at: Schema.String
}) {}

/** Wakes a sleeping agent; one awake already (woken by a concurrent request) records nothing. */
export class WakeAgent extends Schema.TaggedClass<WakeAgent>()("WakeAgent", {
  agentId: Schema.String,
  reason: WakeReason,
  at: Schema.String
}) {}

export const AgentCommand = Schema.Union([
  CreateAgent, RestartAgent, RelaunchAgent, RecordAgentStarted, RecordStartFailure, RecordCrash, ScheduleRecovery,
  RotateGatewayToken, AttachSecrets, DetachSecret, AttachSkills, DetachSkill, UpdateSkill, DeleteAgent, ChangeAgentProfile,
  PutToSleep, WakeAgent
])
export type AgentCommand = typeof AgentCommand.Type
