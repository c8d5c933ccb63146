/**
 * `npm run bench:proxy`: what the app proxy (@cairn/app-proxy) costs the requests that are not an app's, and what
 * proxying costs an app's. Two `node:http` servers in this process answering a small JSON body: one plain
 * ("no routing"), one with the proxy attached whose route lookup takes a real round trip through the event loop
 * each time it is asked (as a read-model query would); and the app, the same server in a process of its own (as an
 * agent's app runs in its sandbox, never in Cairn's process). Load comes from autocannon in its own
 * process (bench/LoadGenerator.ts), 10 connections on loopback. Each comparison runs paired (Paired.ts): BENCH_ROUNDS
 * (10) rounds of one block of BENCH_BLOCK (5,000) requests per side, the order rotating; it prints requests per
 * second and the median and min–max of the per-round ratios.
 *
 * Where nginx is installed (Debian: `apt-get install nginx-light`), the app is also measured behind nginx in the same
 * run (a reverse proxy with kept-open upstream connections), twice: with one worker process per core (Debian's
 * `worker_processes auto`), and with one worker, the CPU Cairn's proxy has (one event loop). The goal for Cairn's
 * proxy is at least 0.9× nginx's throughput (issue 33).
 */
import { AppProxy } from "@cairn/app-proxy"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { cpus } from "node:os"
import * as LoadGenerator from "./LoadGenerator.ts"
import { startNginx } from "./Nginx.ts"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 10)
const blockSize = Number(process.env["BENCH_BLOCK"] ?? 5000)

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
const routed = createServer(handler)
let lookups = 0

/** The app: the same handler, in a Node process of its own; resolves with its port. */
const startApp = async () => {
  const source = `
    const body = ${JSON.stringify(body)}
    const server = require("node:http").createServer((request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      response.end(body)
    })
    server.listen(0, "127.0.0.1", () => process.stdout.write(String(server.address().port) + "\\n"))`
  const child = spawn(process.execPath, ["-e", source], { stdio: ["ignore", "pipe", "inherit"] })
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer]
  return { port: Number(chunk.toString().trim()), stop: () => child.kill() }
}
const app = await startApp()
const appPort = app.port
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

const nginx = await startNginx(appPort, cpus().length)
const nginxOne = await startNginx(appPort, 1)

const generator = LoadGenerator.start()
/** One block of `amount` requests to `port` with `host`, as a paired block. */
const block = (title: string, port: number, host: string, amount = blockSize) =>
  Effect.promise(() =>
    generator.run(title, { url: `http://127.0.0.1:${port}`, method: "GET", headers: { host }, items: [{ path: "/v0/agents" }], amount })
  ).pipe(Effect.map((result) => ({ operations: result.total, milliseconds: result.seconds * 1000 })))

try {
  for (const [port, host] of [[plainPort, "api.cairn.bench"], [routedPort, "api.cairn.bench"], [routedPort, "app.apps.bench"], [appPort, "app.apps.bench"]] as const) {
    await Effect.runPromise(block("warm-up", port, host, 2000))
  }
  lookups = 0
  const cairn = await Effect.runPromise(Paired.rounds({
    rounds,
    measured: () => block("routing, Cairn's host", routedPort, "api.cairn.bench"),
    baselines: { none: () => block("no routing", plainPort, "api.cairn.bench") }
  }))
  const cairnLookups = lookups
  const proxied = await Effect.runPromise(Paired.rounds({
    rounds,
    measured: () => block("app, through the proxy", routedPort, "app.apps.bench"),
    baselines: {
      direct: () => block("app, direct", appPort, "app.apps.bench"),
      // Absent where nginx is not installed: then the same as direct, and not reported.
      nginx: () => block("app, through nginx", nginx?.port ?? appPort, "app.apps.bench"),
      nginxOne: () => block("app, through nginx with one worker", nginxOne?.port ?? appPort, "app.apps.bench")
    }
  }))
  console.log(`\nbench:proxy, Node ${process.version}, 10 connections, ${rounds} paired rounds of ${blockSize} requests per side\n`)
  console.table({
    "Cairn's host, no routing": { "req/s": cairn.rates.none },
    "Cairn's host, proxy attached": { "req/s": cairn.rates.measured },
    "app, direct": { "req/s": proxied.rates.direct },
    "app, through the proxy": { "req/s": proxied.rates.measured },
    ...(nginx === undefined ? {} : {
      [`app, through nginx (${cpus().length} workers)`]: { "req/s": proxied.rates.nginx },
      "app, through nginx (1 worker)": { "req/s": proxied.rates.nginxOne }
    })
  })
  console.log(`Cairn's own requests with the proxy attached: ${Paired.show(cairn.ratios.none)} the throughput of no routing ` +
    `(${cairnLookups} route lookups for ${rounds * blockSize} requests: the host is remembered for 2 s)`)
  console.log(`An app through the proxy: ${Paired.show(proxied.ratios.direct)} the throughput of the app reached directly`)
  if (nginx !== undefined) {
    console.log(`An app through the proxy: ${Paired.show(proxied.ratios.nginx)} the throughput of the same app behind nginx with ${cpus().length} workers (goal ≥ 0.9×)`)
    console.log(`An app through the proxy: ${Paired.show(proxied.ratios.nginxOne)} the throughput of the same app behind nginx with one worker`)
  }
} finally {
  generator.close()
  nginx?.stop()
  nginxOne?.stop()
  app.stop()
  for (const server of [plain, routed]) {
    server.closeAllConnections()
    server.close()
  }
}
