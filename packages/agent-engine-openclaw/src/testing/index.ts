export * from "./GatewayProcesses.ts"
export * from "./SandboxProbe.ts"
export * from "./WaitUntil.ts"
