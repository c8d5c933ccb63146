export * as NodeDns from "./NodeDns.ts"
