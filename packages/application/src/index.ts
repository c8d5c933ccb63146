/** Application services: each command is loaded, decided and appended by the CommandHandler; queries read the read models. */
export * from "./Access.ts"
export * from "./agents/Agents.ts"
export * from "./agents/AgentsAt.ts"
export {
  AgentChat,
  type AgentChatStream,
  ChatTimeout,
  type ChatInput,
  defaultHistoryLimit,
  maxHistoryLimit,
  maxMessageLength
} from "./agents/AgentChat.ts"
export * from "./gateway/Gateway.ts"
export * from "./workspaces/ApiKeys.ts"
export * from "./channels/Channels.ts"
export * from "./CommandHandler.ts"
export * from "./workspace/Console.ts"
export * from "./DiskReserve.ts"
export * from "./domains/Domains.ts"
export * from "./agents/Failover.ts"
export * from "./domains/DomainSettings.ts"
export * from "./files/Files.ts"
export * from "./files/PinJobs.ts"
export * from "./files/FileAuditTrail.ts"
export * from "./files/Groups.ts"
export * from "./FreeSpace.ts"
export * from "./History.ts"
export * as GatewayMetrics from "./gateway/GatewayMetrics.ts"
export * from "./workspaces/Issues.ts"
export * from "./cluster/NodeLeases.ts"
export * as ReadModels from "./readmodels/index.ts"
export * from "./workspace/RuntimeConfig.ts"
export * from "./secrets/Secrets.ts"
export * from "./secrets/SecretVault.ts"
export * as Services from "./Services.ts"
export * from "./files/Signatures.ts"
export * from "./files/SignedUrls.ts"
export * as SkillFolder from "./skills/SkillFolder.ts"
export * from "./snapshots/Snapshots.ts"
export * from "./snapshots/SnapshotSettings.ts"
export * from "./skills/Skills.ts"
export * from "./workspace/Tasks.ts"
export * from "./templates/Templates.ts"
export * from "./workspace/WorkspaceFiles.ts"
export * from "./workspaces/WorkspaceLimits.ts"
export * from "./workspaces/Workspaces.ts"
