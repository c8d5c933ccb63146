/**
 * Every application service, listed once, over the one command handler. Runtimes and tests provide what they
 * stand on (event store with its read models, content store, engine, signer, verifier).
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
import { Agents } from "./Agents.ts"
import type { AgentSupervisor } from "./AgentSupervisor.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { Channels } from "./Channels.ts"
import { CommandHandler } from "./CommandHandler.ts"
import { Console } from "./Console.ts"
import { Domains } from "./Domains.ts"
import { Failover } from "./Failover.ts"
import { Files } from "./Files.ts"
import { Issues } from "./Issues.ts"
import type { NodeLeases } from "./NodeLeases.ts"
import { RuntimeConfig } from "./RuntimeConfig.ts"
import type { Secrets } from "./Secrets.ts"
import type { Skills } from "./Skills.ts"
import { SecretVault } from "./SecretVault.ts"
import { Signatures } from "./Signatures.ts"
import { Snapshots } from "./Snapshots.ts"
import { Tasks } from "./Tasks.ts"
import { Templates } from "./Templates.ts"
import { WorkspaceFiles } from "./WorkspaceFiles.ts"
import { Workspaces } from "./Workspaces.ts"

export type Provided = Workspaces | ApiKeys | Files | Signatures | Agents | AgentSupervisor | Secrets | Skills | SecretVault | Issues | CommandHandler
  | Templates
  | Console | WorkspaceFiles
  | RuntimeConfig | Tasks
  | Snapshots
  | Channels
  | Domains
  | NodeLeases | Failover

/** The ports the services stand on; the read models' tables are reached through the event store's SqlClient. */
export type Requirements =
  | EventStore | SqlClient.SqlClient | ContentStore | SnapshotStore | SignatureVerifier | AgentEngine | GatewayTokens.GatewayTokens | TokenSigner | MasterKeys | SkillHub
  | GitRepositories
  | Dns

export const layer: Layer.Layer<Provided, never, Requirements> = Layer.mergeAll(ApiKeys.layer, Files.layer, Signatures.layer, Issues.layer,
  Console.layer, WorkspaceFiles.layer, RuntimeConfig.layer, Tasks.layer, Channels.layer, Domains.layer,
  Failover.layer.pipe(Layer.provideMerge(Snapshots.layer))).pipe(
  Layer.provideMerge(Layer.mergeAll(Workspaces.layer, Agents.layer)),
  Layer.provideMerge(Templates.layer),
  Layer.provideMerge(SecretVault.layer),
  Layer.provideMerge(CommandHandler.layer)
)
