/** The DNS port (`Dns`); the Node adapter is `@cairn/dns/node` (`NodeDns`), a loopback test server `@cairn/dns/testing`. */
export * from "./Dns.ts"
