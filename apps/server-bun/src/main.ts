/**
 * Cairn's server on Bun: the same server as on Node (CairnServer), served by `Bun.serve` through Cairn's web
 * handler (`WebServer`). `node_modules/.bin/bun apps/server-bun/src/main.ts`; configuration as for the Node server
 * (docs/operations.md, "Running on Bun and Deno").
 */
import { WebServer } from "@cairn/runtime"
import { Effect } from "effect"

/** The part of Bun's API this entry point uses (Bun's own types are not installed: `tsc` checks the tree for Node). */
declare const Bun: {
  serve(options: {
    readonly port: number
    readonly hostname: string
    readonly idleTimeout: number
    readonly fetch: (request: Request) => Promise<Response>
  }): { stop(closeActiveConnections?: boolean): Promise<void> }
}

WebServer.serve((handler, { hostname, port }) =>
  Effect.acquireRelease(
    // Idle keep-alive connections outlive a load balancer's (60 s, usually), as on the Node server.
    Effect.try(() => Bun.serve({ port, hostname, idleTimeout: 65, fetch: handler })),
    (server) => Effect.promise(() => server.stop())
  )
)
