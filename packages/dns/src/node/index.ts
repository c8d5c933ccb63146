/** The Dns port on Node: `NodeDns`, a `node:dns/promises` Resolver on `DNS_SERVERS`. */
export * as NodeDns from "./NodeDns.ts"
