/** The AgentEngine port on real OpenClaw gateways: `OpenClawAgentEngine.layer({ dataDir })`. */
export * as OpenClawAgentEngine from "./OpenClawAgentEngine.ts"
export * as OpenClawAgentHome from "./AgentHome.ts"
