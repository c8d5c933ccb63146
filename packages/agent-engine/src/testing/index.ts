/** Test kits for adapters of the AgentEngine port: `@cairn/agent-engine/testing`. */
export * from "./AgentEngineContract.ts"
