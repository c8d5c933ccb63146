/**
 * Cairn's server on Deno: the same server as on Node (CairnServer), served by `Deno.serve` through Cairn's web
 * handler (`WebServer`). `node_modules/.bin/deno run -A apps/server-deno/src/main.ts` from the repository's root;
 * configuration as for the Node server (docs/operations.md, "Running on Bun and Deno").
 */
import { WebServer } from "@cairn/runtime"
import { Effect } from "effect"

/** The part of Deno's API this entry point uses (Deno's own types are not installed: `tsc` checks the tree for Node). */
declare const Deno: {
  serve(
    options: { readonly port: number; readonly hostname: string; readonly onListen: () => void },
    handler: (request: Request) => Promise<Response>
  ): { shutdown(): Promise<void> }
}

WebServer.serve((handler, { hostname, port }) =>
  Effect.acquireRelease(
    // onListen replaces Deno's own "Listening on" line: Cairn logs its own.
    Effect.try(() => Deno.serve({ port, hostname, onListen: () => {} }, handler)),
    (server) => Effect.promise(() => server.shutdown())
  )
)
