export * from "./GatewayProcesses.ts"
