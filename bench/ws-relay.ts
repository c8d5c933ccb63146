/**
 * `npm run bench:ws`: what the app proxy (@cairn/app-proxy) costs a WebSocket once it is open: the relay of an
 * agent's host (the Control UI's and clients' RPC to the gateway) and of an app domain. An echo server in a process
 * of its own (as a gateway or an app runs in its sandbox), the proxy attached to a `node:http` server in this process
 * (as in Cairn's), and the load in a third process: BENCH_SOCKETS (10) WebSockets, each sending BENCH_MESSAGES (2,000)
 * small messages one after the other, each waiting for its echo. Paired rounds (Paired.ts, BENCH_ROUNDS, 8): one
 * block through the proxy, one straight to the echo server, the order rotating; it prints messages per second and
 * the median and min–max of the per-round ratios. The goal is at least 0.9× direct (issue 34). Where nginx is
 * installed, the same relay through nginx (one worker, the one event loop Cairn's proxy has) is a third side.
 */
import { AppProxy } from "@cairn/app-proxy"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { startNginx } from "./Nginx.ts"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_ROUNDS"] ?? 8)
const sockets = Number(process.env["BENCH_SOCKETS"] ?? 10)
const messages = Number(process.env["BENCH_MESSAGES"] ?? 2000)

/** A node process running `source` that prints one line; resolves with the line and the child. */
const run = async (source: string, args: ReadonlyArray<string> = []) => {
  const child = spawn(process.execPath, ["-e", source, ...args], { stdio: ["ignore", "pipe", "inherit"], cwd: import.meta.dirname })
  const [chunk] = (await once(child.stdout!, "data")) as [Buffer]
  return { line: chunk.toString().trim(), child }
}

const echo = await run(`
  const { WebSocketServer } = require("ws")
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" }, () => process.stdout.write(server.address().port + "\\n"))
  server.on("connection", (socket) => socket.on("message", (data, binary) => socket.send(data, { binary })))`)
const echoPort = Number(echo.line)

const proxied = createServer((_request, response) => response.writeHead(404).end())
AppProxy.attach(proxied, {
  route: async (host) => host === "app.apps.bench" ? { agentId: "bench", targetPort: echoPort, protected: false } : undefined,
  authorize: async () => true,
  endpoint: async (_agentId, port) => ({ host: "127.0.0.1", port }),
  isAppHost: (host) => host.endsWith(".apps.bench")
})
// Node hands a server an upgrade only when it listens for them (Cairn's server does: its own upgrades are refused).
proxied.on("upgrade", (_request, socket) => socket.destroy())
proxied.listen(0, "127.0.0.1")
await once(proxied, "listening")
const proxyPort = (proxied.address() as AddressInfo).port
// nginx with one worker: the one event loop Cairn's proxy has.
const nginx = await startNginx(echoPort, 1, { websocket: true })

/** The load: its sockets opened first (not timed), then every message sent and echoed; prints the milliseconds. */
const load = `
  const { WebSocket } = require("ws")
  const [port, host, sockets, messages] = process.argv.slice(1)
  const open = () => new Promise((resolve, reject) => {
    const ws = new WebSocket("ws://127.0.0.1:" + port + "/", { headers: { host } })
    ws.once("open", () => resolve(ws))
    ws.once("error", reject)
  })
  const talk = (ws) => new Promise((resolve) => {
    let left = Number(messages)
    const payload = JSON.stringify({ type: "req", id: "1", method: "chat.history", params: { sessionKey: "main" } })
    ws.on("message", () => (--left === 0 ? resolve() : ws.send(payload)))
    ws.send(payload)
  })
  ;(async () => {
    const all = await Promise.all(Array.from({ length: Number(sockets) }, open))
    const started = performance.now()
    await Promise.all(all.map(talk))
    process.stdout.write(String(performance.now() - started) + "\\n")
    for (const ws of all) ws.terminate()
  })()`
const block = (port: number, host: string) =>
  Effect.promise(async () => {
    const { line, child } = await run(load, [String(port), host, String(sockets), String(messages)])
    await once(child, "exit")
    return { operations: sockets * messages, milliseconds: Number(line) }
  })

try {
  const paired = await Effect.runPromise(Paired.rounds({
    rounds,
    measured: () => block(proxyPort, "app.apps.bench"),
    baselines: {
      direct: () => block(echoPort, `127.0.0.1:${echoPort}`),
      ...(nginx === undefined ? {} : { nginx: () => block(nginx.port, "app.apps.bench") })
    } as Record<"direct" | "nginx", () => ReturnType<typeof block>>
  }))
  console.log(`WebSocket relay, ${rounds} paired rounds of ${sockets} sockets × ${messages} echoed messages:`)
  console.log(`  through Cairn's proxy: ${paired.rates.measured.toFixed(0)} messages/s`)
  console.log(`  straight to the server: ${paired.rates.direct.toFixed(0)} messages/s`)
  console.log(`  ratio proxy/direct: ${Paired.show(paired.ratios.direct)}   (goal >= 0.9x)`)
  const ratios = paired.ratios as Record<string, Paired.Spread>
  const rates = paired.rates as Record<string, number>
  if (ratios["nginx"] !== undefined) {
    console.log(`  through nginx (1 worker): ${rates["nginx"]!.toFixed(0)} messages/s; ratio proxy/nginx: ${Paired.show(ratios["nginx"])}`)
  }
} finally {
  echo.child.kill()
  nginx?.stop()
  proxied.close()
}
