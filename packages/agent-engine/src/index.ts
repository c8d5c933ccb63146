/**
 * The AgentEngine port, its errors, the version order, the rules for gateway environments and for workspace paths,
 * and the simulated adapter with its control service.
 */
export * from "./AgentEngine.ts"
export * from "./AgentEngineError.ts"
export * as EngineChannels from "./Channels.ts"
export { type ChannelPairingRequest, type ChannelSpec, type ChannelStatus, ChannelsUnavailable, UnknownPairingCode, type WhatsAppLink, type WhatsAppLinkStatus } from "./Channels.ts"
export * as EngineChat from "./Chat.ts"
export {
  ChatFailed,
  type ChatEvent,
  type ChatMessage,
  type ChatReply,
  type ChatRequest,
  type ChatSession,
  ChatSessionNotFound,
  ChatTimedOut,
  ChatUnavailable,
  type ChatUsage,
  type EngineModel,
  type EngineModels
} from "./Chat.ts"
export * as EngineEnvironment from "./EngineEnvironment.ts"
export * as GatewayLogs from "./GatewayLogs.ts"
export type { LogChunk, LogEntry, LogRequest } from "./GatewayLogs.ts"
export * as WorkspacePath from "./WorkspacePath.ts"
/** The order of engine versions lives in the domain (a restart decides with it); re-exported for adapters. */
export { EngineVersion } from "@cairn/domain"
export * as SimulatedAgentEngine from "./SimulatedAgentEngine.ts"
export * from "./SimulatedEngineControl.ts"
export * from "./WorkspaceOperations.ts"
export * from "./WorkspaceTree.ts"
