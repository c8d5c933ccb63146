/**
 * Every application service, listed once, over the one command handler. Runtimes and tests provide what they
 * stand on (event store with its read models, content store, engine, signer, verifier, free space).
 */
import type { AgentEngine } from "@cairn/agent-engine"
import type { GatewayTokens, MasterKeys, TokenSigner } from "@cairn/auth"
import type { ContentStore, SnapshotStore } from "@cairn/content-store"
import type { EventStore } from "@cairn/event-store"
import type { SignatureVerifier } from "@cairn/signatures"
import type { SkillHub } from "@cairn/skill-hub"
import type { Dns } from "@cairn/dns"
import type { GitRepositories } from "@cairn/templates"
import { Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { AgentChat } from "./agents/AgentChat.ts"
import { EngineUpdates } from "./agents/EngineUpdates.ts"
import { TemplateTasks } from "./workspace/TemplateTasks.ts"
import { Agents } from "./agents/Agents.ts"
import { AgentsAt } from "./agents/AgentsAt.ts"
import { AuditFeed } from "./audit/AuditFeed.ts"
import { AuditLog } from "./audit/AuditLog.ts"
import { LogSeals } from "./audit/LogSeals.ts"
import { Gateway } from "./gateway/Gateway.ts"
import { ApiKeys } from "./workspaces/ApiKeys.ts"
import { Channels } from "./channels/Channels.ts"
import { CommandHandler } from "./CommandHandler.ts"
import { DiskReserve } from "./DiskReserve.ts"
import type { FreeSpace } from "./FreeSpace.ts"
import { Console } from "./workspace/Console.ts"
import { Domains } from "./domains/Domains.ts"
import { Failover } from "./agents/Failover.ts"
import { AgentPool } from "./agents/AgentPool.ts"
import { AgentSleep } from "./agents/AgentSleep.ts"
import { Files } from "./files/Files.ts"
import { Groups } from "./files/Groups.ts"
import { PinJobs } from "./files/PinJobs.ts"
import { Issues } from "./workspaces/Issues.ts"
import { NodeLeases } from "./cluster/NodeLeases.ts"
import { RuntimeConfig } from "./workspace/RuntimeConfig.ts"
import { Secrets } from "./secrets/Secrets.ts"
import { Skills } from "./skills/Skills.ts"
import { SecretVault } from "./secrets/SecretVault.ts"
import { Signatures } from "./files/Signatures.ts"
import { SignedUrls } from "./files/SignedUrls.ts"
import { Snapshots } from "./snapshots/Snapshots.ts"
import { Tasks } from "./workspace/Tasks.ts"
import { Templates } from "./templates/Templates.ts"
import { WorkspaceFiles } from "./workspace/WorkspaceFiles.ts"
import { Workspaces } from "./workspaces/Workspaces.ts"

export type Provided = AgentChat | AgentsAt | EngineUpdates | TemplateTasks | Workspaces | ApiKeys | Files | Groups | Signatures | SignedUrls | Agents | Gateway | Secrets | Skills | SecretVault | Issues | CommandHandler
  | DiskReserve
  | Templates
  | Console | WorkspaceFiles
  | RuntimeConfig | Tasks
  | Snapshots
  | Channels
  | Domains
  | NodeLeases | Failover | AgentSleep | AgentPool
  | PinJobs
  | AuditFeed | AuditLog | LogSeals

/** The ports the services stand on; the read models' tables are reached through the event store's SqlClient. */
export type Requirements =
  | EventStore | SqlClient.SqlClient | ContentStore | SnapshotStore | SignatureVerifier | AgentEngine | GatewayTokens.GatewayTokens | TokenSigner | MasterKeys | SkillHub
  | GitRepositories
  | Dns
  | FreeSpace

/** Built floor by floor, in the order of the folders: each floor stands on the ones below it. */
export const layer: Layer.Layer<Provided, never, Requirements> = Layer.merge(AuditFeed.layer, AuditLog.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Console.layer, WorkspaceFiles.layer, RuntimeConfig.layer, Tasks.layer, TemplateTasks.layer, AgentChat.layer, EngineUpdates.layer)),
  Layer.provideMerge(Layer.mergeAll(Agents.layer, AgentsAt.layer, Failover.layer, AgentSleep.layer)),
  Layer.provideMerge(Layer.mergeAll(Snapshots.layer, Channels.layer, Domains.layer, AgentPool.layer)),
  Layer.provideMerge(Gateway.layer),
  Layer.provideMerge(Layer.mergeAll(Templates.layer, Skills.layer, SignedUrls.layer, PinJobs.layer)),
  Layer.provideMerge(Layer.mergeAll(Workspaces.layer, ApiKeys.layer, Issues.layer, Files.layer, Groups.layer, Signatures.layer, Secrets.layer, NodeLeases.layer)),
  Layer.provideMerge(SecretVault.layer),
  Layer.provideMerge(Layer.mergeAll(CommandHandler.layer, DiskReserve.layer, LogSeals.layer))
)
