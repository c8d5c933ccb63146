/** The AgentEngine port, its errors, the version order and the simulated adapter with its control service. */
export * from "./AgentEngine.ts"
export * from "./AgentEngineError.ts"
export * as EngineVersion from "./EngineVersion.ts"
export * as SimulatedAgentEngine from "./SimulatedAgentEngine.ts"
export * from "./SimulatedEngineControl.ts"
