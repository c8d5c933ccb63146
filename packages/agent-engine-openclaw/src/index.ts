/** The AgentEngine port on real OpenClaw gateways: `OpenClawAgentEngine.layer({ dataDir })`. */
export * as OpenClawAgentEngine from "./OpenClawAgentEngine.ts"
export * as OpenClawAgentHome from "./AgentHome.ts"
/** Installs an engine version ahead of time, without a server (the CLI's `engine install`). */
export * as OpenClawEngineInstall from "./EngineInstall.ts"
export * as OpenClawGatewayRpc from "./GatewayRpc.ts"
export * as OpenClawChat from "./Chat.ts"
export * as OpenClawSandbox from "./Sandbox.ts"
/** Per-agent cgroups: memory, CPU and process caps of all an agent's processes together. */
export * as OpenClawAgentCgroups from "./AgentCgroups.ts"
export * as OpenClawAgentDisks from "./AgentDisks.ts"
export * as OpenClawEngineMetrics from "./EngineMetrics.ts"
/** A network of its own for every agent: slirp4netns out, prohibit routes, relays in (decision 0043). */
export * as OpenClawAgentNetwork from "./AgentNetwork.ts"
