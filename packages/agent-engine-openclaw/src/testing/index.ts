export * from "./GatewayProcesses.ts"
export * from "./SandboxProbe.ts"
