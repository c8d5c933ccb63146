/**
 * Decides an agent command against the agent's state: the events to record, or why not. Pure and total.
 * Supervisor commands on an agent that no longer lives are refused with AgentNotFound (the supervisor stops
 * there), except a crash report, which is simply not recorded.
 */
import { Match, Result } from "effect"
import type { AgentCommand } from "./Commands.ts"
import * as EngineVersion from "./EngineVersion.ts"
import { ConflictingSecrets } from "../secrets/Errors.ts"
import { conflictAmong } from "../secrets/Providers.ts"
import { MaxPerAgent, tooMany } from "../skills/Validation.ts"
import type { ValidationFailed } from "../ValidationFailed.ts"
import { AgentAlreadyExists, type AgentError, AgentNotFound, InvalidVersion, SkillNotAttached } from "./Errors.ts"
import {
  AgentCreated,
  AgentSecretDetached,
  AgentSecretsAttached,
  AgentSkillDetached,
  AgentSkillsAttached,
  AgentSkillUpdated,
  type AttachedSecret,
  type AttachedSkill,
  AgentDeleted,
  AgentProfileChanged,
  type AgentEvent,
  AgentFailedToStart,
  AgentFellAsleep,
  AgentWoken,
  AgentRecoveryScheduled,
  AgentRestartRequested,
  AgentStarted,
  AgentStopped,
  GatewayTokenRotated
} from "./Events.ts"
import type { Agent, AgentState } from "./State.ts"

export type Decision = Result.Result<ReadonlyArray<AgentEvent>, AgentError>

/** The agent as its workspace sees it; another workspace's agent, or a deleted one, is not found. */
export const visible = (state: AgentState, agentId: string, workspaceId: string): Result.Result<Agent, AgentNotFound> =>
  state._tag === "Live" && state.agent.workspaceId === workspaceId
    ? Result.succeed(state.agent)
    : Result.fail(new AgentNotFound({ agentId }))

const living = (state: AgentState, agentId: string): Result.Result<Agent, AgentNotFound> =>
  state._tag === "Live" ? Result.succeed(state.agent) : Result.fail(new AgentNotFound({ agentId }))

const record = (agent: Result.Result<Agent, AgentNotFound>, event: (agent: Agent) => AgentEvent): Decision =>
  Result.map(agent, (a) => [event(a)])

/** The version a restart moves to: the agent's own, or one on offer that is not older (state migrates one way). */
const restartVersion = (agent: Agent, requested: string | undefined, offered: ReadonlyArray<string>) =>
  requested === undefined
    ? Result.succeed(agent.engineVersion)
    : offered.includes(requested) && !EngineVersion.isOlder(requested, agent.engineVersion)
    ? Result.succeed(requested)
    : Result.fail(new InvalidVersion({ version: requested }))

/**
 * Attaching `secrets` to an agent that holds `held`: the events, or the provider two of them would both be a
 * credential for (OpenClaw would silently pick one).
 */
const attach = (agentId: string, held: ReadonlyMap<string, string>, secrets: ReadonlyArray<AttachedSecret>, at: string): Decision => {
  const added = secrets.filter((s, i) => !held.has(s.secretId) && secrets.findIndex((t) => t.secretId === s.secretId) === i)
  if (added.length === 0) return Result.succeed([])
  const conflict = conflictAmong([...held.values(), ...added.map((s) => s.name)])
  return conflict === undefined
    ? Result.succeed([new AgentSecretsAttached({ agentId, secrets: added, at })])
    : Result.fail(new ConflictingSecrets({ provider: conflict.provider, names: conflict.names }))
}

/** Attaching `skills` to an agent holding `held`: the new ones, unless the agent would hold more than allowed. */
const attachSkills = (
  agentId: string,
  held: ReadonlyMap<string, AttachedSkill>,
  skills: ReadonlyArray<AttachedSkill>,
  at: string
): Result.Result<ReadonlyArray<AgentEvent>, ValidationFailed> => {
  const added = skills.filter((s, i) => !held.has(s.skillId) && skills.findIndex((t) => t.skillId === s.skillId) === i)
  if (added.length === 0) return Result.succeed([])
  return held.size + added.length > MaxPerAgent
    ? Result.fail(tooMany())
    : Result.succeed([new AgentSkillsAttached({ agentId, skills: added, at })])
}

export const decide = (command: AgentCommand, state: AgentState): Decision =>
  Match.valueTags(command, {
    CreateAgent: ({ _tag, secrets, skills, ...fields }): Decision =>
      state._tag === "NoAgent"
        ? Result.flatMap(attach(fields.agentId, new Map(), secrets, fields.at), (attached): Decision =>
          Result.map(attachSkills(fields.agentId, new Map(), skills ?? [], fields.at), (withSkills) => [new AgentCreated(fields), ...attached, ...withSkills]))
        : Result.fail(new AgentAlreadyExists({ agentId: fields.agentId })),
    RestartAgent: ({ agentId, workspaceId, version, offeredVersions, at }) =>
      Result.flatMap(visible(state, agentId, workspaceId), (agent): Decision =>
        Result.map(restartVersion(agent, version, offeredVersions), (engineVersion) => [
          new AgentRestartRequested({ agentId, engineVersion, at })
        ])),
    RelaunchAgent: ({ agentId, at }) =>
      record(living(state, agentId), (agent) => new AgentRestartRequested({ agentId, engineVersion: agent.engineVersion, at })),
    RecordAgentStarted: ({ _tag, ...fields }) => record(living(state, fields.agentId), () => new AgentStarted(fields)),
    RecordStartFailure: ({ _tag, ...fields }) => record(living(state, fields.agentId), () => new AgentFailedToStart(fields)),
    RecordCrash: ({ agentId, reason, at }): Decision =>
      Result.succeed(
        state._tag === "Live" && state.agent.status === "running"
          ? [new AgentStopped({ agentId, reason: reason ?? "crashed", at })]
          : []
      ),
    ScheduleRecovery: ({ _tag, ...fields }) => record(living(state, fields.agentId), () => new AgentRecoveryScheduled(fields)),
    ChangeAgentProfile: ({ _tag, agentId, workspaceId, at, ...asked }) =>
      Result.map(visible(state, agentId, workspaceId), (agent): ReadonlyArray<AgentEvent> => {
        // Only what differs is recorded; nothing that differs, nothing recorded.
        const changed = Object.fromEntries(Object.entries(asked).filter(([field, value]) => agent[field as keyof typeof asked] !== value))
        return Object.keys(changed).length === 0 ? [] : [new AgentProfileChanged({ agentId, ...changed, at })]
      }),
    RotateGatewayToken: ({ agentId, workspaceId, at }) =>
      record(visible(state, agentId, workspaceId), (agent) => new GatewayTokenRotated({ agentId, generation: agent.tokenGeneration + 1, at })),
    AttachSecrets: ({ agentId, workspaceId, secrets, at }) =>
      Result.flatMap(visible(state, agentId, workspaceId), (agent) => attach(agentId, agent.secrets, secrets, at)),
    DetachSecret: ({ agentId, workspaceId, secretId, at }) =>
      Result.map(visible(state, agentId, workspaceId), (agent) =>
        agent.secrets.has(secretId) ? [new AgentSecretDetached({ agentId, secretId, at })] : []),
    AttachSkills: ({ agentId, workspaceId, skills, at }) =>
      Result.flatMap(visible(state, agentId, workspaceId), (agent): Decision => attachSkills(agentId, agent.skills, skills, at)),
    DetachSkill: ({ agentId, workspaceId, skillId, at }) =>
      Result.map(visible(state, agentId, workspaceId), (agent) =>
        agent.skills.has(skillId) ? [new AgentSkillDetached({ agentId, skillId, at })] : []),
    UpdateSkill: ({ agentId, workspaceId, skill, at }) =>
      Result.flatMap(visible(state, agentId, workspaceId), (agent): Decision => {
        const held = agent.skills.get(skill.skillId)
        return held === undefined
          ? Result.fail(new SkillNotAttached({ skillId: skill.skillId }))
          : Result.succeed(held.revision === skill.revision ? [] : [new AgentSkillUpdated({ agentId, skill, at })])
      }),
    PutToSleep: ({ _tag, ...fields }): Decision =>
      Result.succeed(state._tag === "Live" && state.agent.status === "running" ? [new AgentFellAsleep(fields)] : []),
    WakeAgent: ({ _tag, ...fields }): Decision =>
      Result.flatMap(living(state, fields.agentId), (agent) => Result.succeed(agent.status === "sleeping" ? [new AgentWoken(fields)] : [])),
    DeleteAgent: ({ agentId, workspaceId, at }) => record(visible(state, agentId, workspaceId), () => new AgentDeleted({ agentId, at }))
  })
