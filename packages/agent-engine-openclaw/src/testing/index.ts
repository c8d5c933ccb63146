export * from "./GatewayProcesses.ts"
export * from "./PortRanges.ts"
export * from "./SandboxProbe.ts"
export * from "./WaitUntil.ts"
