/** The composition shared by Cairn's entry points (servers and CLI). */
export * as CairnRuntime from "./CairnRuntime.ts"
export * as ReadModels from "./ReadModels.ts"
export * as Main from "./Main.ts"
export * as Shutdown from "./Shutdown.ts"
export * as Observability from "./Observability.ts"
export * as AppRouting from "./AppRouting.ts"
export * as LingeringClose from "./LingeringClose.ts"
export * as WebServer from "./WebServer.ts"
