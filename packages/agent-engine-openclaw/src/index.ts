/** The AgentEngine port on real OpenClaw gateways: `OpenClawAgentEngine.layer({ dataDir })`. */
export * as OpenClawAgentEngine from "./OpenClawAgentEngine.ts"
export * as OpenClawAgentHome from "./AgentHome.ts"
export * as OpenClawGatewayRpc from "./GatewayRpc.ts"
export * as OpenClawSandbox from "./Sandbox.ts"
