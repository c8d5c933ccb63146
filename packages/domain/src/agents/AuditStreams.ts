/**
 * The streams that make up an agent's audit trail (`GET /v0/agents/:agentId/events`), defined here and nowhere
 * else. The agent's own stream holds its lifecycle; what is done inside the agent (console runs, uploads, config
 * writes, task changes, snapshots and resets, device pairings, channel pairing approvals, chat turns) is recorded in
 * streams of its own, one per agent and resource, so that a busy console never makes the agent's stream long. The
 * trail reads every stream listed here and merges them by log position.
 *
 * A resource that records actions on an agent adds its stream builder to `auditStreams` (one line), nothing else.
 */
import * as Channel from "../channels/index.ts"
import * as AgentChats from "../chats/index.ts"
import * as AgentConsole from "../console/index.ts"
import * as AgentDevices from "../devices/index.ts"
import * as Domain from "../domains/index.ts"
import * as ChannelPairing from "../pairings/index.ts"
import * as RuntimeConfig from "../runtime-config/index.ts"
import * as Snapshot from "../snapshots/index.ts"
import * as ScheduledTask from "../tasks/index.ts"
import * as Upload from "../uploads/index.ts"
import { stream as agentStream } from "./index.ts"

/** Every stream of the agent's audit trail; the agent's own stream first (its absence means there is no agent). */
export const auditStreams = (agentId: string): ReadonlyArray<string> => [
  agentStream(agentId),
  AgentConsole.stream(agentId),
  Upload.stream(agentId),
  RuntimeConfig.stream(agentId),
  ScheduledTask.stream(agentId),
  Snapshot.stream(agentId),
  Channel.stream(agentId),
  Domain.stream(agentId),
  AgentDevices.stream(agentId),
  ChannelPairing.stream(agentId),
  AgentChats.stream(agentId)
]
