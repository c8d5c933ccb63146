/**
 * `npm run bench:proxy`: what the app proxy (@cairn/app-proxy) costs the requests that are not an app's, and what
 * proxying costs an app's. Three `node:http` servers in this process answering a small JSON body: one plain
 * ("no routing"), one with the proxy attached whose route lookup takes a real round trip through the event loop
 * each time it is asked (as a read-model query would), and the app itself. Load comes from autocannon in its own
 * process (bench/load.ts), 10 connections on loopback. Prints requests per second, p99 latency and the ratios.
 * BENCH_SECONDS (5) per run.
 */
import { AppProxy } from "@cairn/app-proxy"
import { execFile } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { LoadSpec } from "./LoadSpec.ts"

const seconds = Number(process.env["BENCH_SECONDS"] ?? 5)
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-proxy-"))

const body = JSON.stringify({ ok: true, service: "cairn", items: [1, 2, 3] })
const handler = (_request: unknown, response: import("node:http").ServerResponse) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  response.end(body)
}

const listen = async (server: Server) => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return (server.address() as AddressInfo).port
}

const plain = createServer(handler)
const app = createServer(handler)
const routed = createServer(handler)
let lookups = 0
const appPort = await listen(app)
AppProxy.attach(routed, {
  route: async (host) => {
    lookups++
    // A lookup that goes round the event loop, as a database query does.
    await new Promise((resolve) => setImmediate(resolve))
    return host === "app.apps.bench" ? { agentId: "bench", targetPort: appPort, protected: false } : undefined
  },
  authorize: async () => true,
  endpoint: async (_agentId, port) => ({ host: "127.0.0.1", port }),
  isAppHost: (host) => host.endsWith(".apps.bench")
})
const plainPort = await listen(plain)
const routedPort = await listen(routed)

/** Runs bench/load.ts in its own process: a load generator sharing the servers' event loop skews them. */
const load = async (title: string, port: number, host: string, amount?: number) => {
  const spec: LoadSpec = {
    url: `http://127.0.0.1:${port}`,
    method: "GET",
    headers: { host },
    items: [{ path: "/v0/agents" }],
    ...(amount === undefined ? { seconds } : { amount })
  }
  const file = join(dataDir, `load-${title.replace(/\W+/g, "-")}.json`)
  writeFileSync(file, JSON.stringify(spec))
  const output = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [fileURLToPath(new URL("load.ts", import.meta.url)), file], { encoding: "utf8", maxBuffer: 1 << 20 }, (error, stdout) =>
      error ? reject(error) : resolve(stdout))
  )
  const result = JSON.parse(output.trim().split("\n").at(-1)!) as { rps: number; p99: number; non2xx: number; errors: number }
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${title}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return result
}

try {
  for (const [port, host] of [[plainPort, "api.cairn.bench"], [routedPort, "api.cairn.bench"], [routedPort, "app.apps.bench"], [appPort, "app.apps.bench"]] as const) {
    await load("warm-up", port, host, 2000)
  }
  lookups = 0
  const none = await load("no routing", plainPort, "api.cairn.bench")
  const cairn = await load("routing, Cairn's host", routedPort, "api.cairn.bench")
  const cairnLookups = lookups
  const direct = await load("app, direct", appPort, "app.apps.bench")
  const proxied = await load("app, through the proxy", routedPort, "app.apps.bench")
  console.log(`\nbench:proxy, Node ${process.version}, 10 connections, ${seconds} s per run\n`)
  console.table({
    "Cairn's host, no routing": { rps: none.rps, "p99 ms": none.p99 },
    "Cairn's host, proxy attached": { rps: cairn.rps, "p99 ms": cairn.p99 },
    "app, direct": { rps: direct.rps, "p99 ms": direct.p99 },
    "app, through the proxy": { rps: proxied.rps, "p99 ms": proxied.p99 }
  })
  console.log(`Cairn's own requests with the proxy attached: ${(cairn.rps / none.rps).toFixed(2)}x the throughput of no routing ` +
    `(${cairnLookups} route lookups for ${Math.round(cairn.rps * seconds)} requests: the host is remembered for 2 s)`)
  console.log(`An app through the proxy: ${(proxied.rps / direct.rps).toFixed(2)}x the throughput of the app reached directly`)
} finally {
  for (const server of [plain, app, routed]) {
    server.closeAllConnections()
    server.close()
  }
  rmSync(dataDir, { recursive: true, force: true })
}
