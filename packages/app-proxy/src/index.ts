/** Agents' apps on their domains: a reverse proxy in front of a Node HTTP server (AppProxy.ts). */
export * as AppProxy from "./AppProxy.ts"
export { RouteCache } from "./RouteCache.ts"
export * as NodeForwarding from "./NodeForwarding.ts"
