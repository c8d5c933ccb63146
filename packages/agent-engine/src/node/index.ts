/**
 * What the simulated engine needs of Node where something must really listen (`@cairn/agent-engine/node`): its
 * agents' gateways as loopback HTTP servers. The main entry stays free of Node modules (it runs on Bun and Deno).
 */
export * as SimulatedGateway from "./SimulatedGateway.ts"
