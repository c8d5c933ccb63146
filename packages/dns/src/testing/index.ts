export * as LoopbackDns from "./LoopbackDns.ts"
