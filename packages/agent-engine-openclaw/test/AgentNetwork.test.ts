/**
 * A hostile tenant's network (issue 33, rows 5 and 6, items 3 and 7; decision 0043), on the stand-in engine in real
 * sandboxes: each agent's gateway runs in a network of its own, its console commands join it, and Cairn reaches it
 * only through its own relay. Every attack is first shown to be real from here (the listener answers this process;
 * the squatter's port was bound), then refused from inside the agent. Needs what CI has: root, bubblewrap,
 * slirp4netns and iproute2; elsewhere agents share the host's network and these tests skip themselves.
 */
import { AgentEngine, type AppEndpoint, connectionThrough } from "@cairn/agent-engine"
import { freshAgent } from "@cairn/agent-engine/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Duplex } from "node:stream"
import { metaDirOf } from "../src/AgentHome.ts"
import { reserveGatewayPorts } from "../src/testing/index.ts"
import { standInEngine } from "./fixtures/StandInEngine.ts"

const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-agent-network-"))
const cleanups: Array<() => void> = []
afterAll(() => {
  for (const cleanup of cleanups.reverse()) cleanup()
  Fs.rmSync(dataDir, { recursive: true, force: true })
})

const onPath = (name: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}
const privateNetworks = process.getuid?.() === 0 && ["bwrap", "slirp4netns", "ip", "nsenter"].every(onPath)

const version = "2026.10.2"

/** A TCP server on the host answering `text` to every connection; `host` 0.0.0.0 for every address. */
const listener = async (host: string, text: string) => {
  const server = Net.createServer((socket) => socket.end(text))
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  cleanups.push(() => server.close())
  return (server.address() as Net.AddressInfo).port
}

/** What a TCP connection from this process to host:port reads (the attack's target is really up). */
const readFromHere = (host: string, port: number) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.connect(port, host)
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString()))
    socket.on("end", () => resolve(text))
    socket.on("error", reject)
  })

/** A Node one-liner, run by a console command inside the agent, that prints what each connection read or its error. */
const probeScript = (targets: ReadonlyArray<readonly [string, number]>) =>
  `node -e '
const net = require("net")
const targets = ${JSON.stringify(targets)}
Promise.all(targets.map(([host, port]) => new Promise((resolve) => {
  const socket = net.connect(port, host); let text = ""
  socket.setTimeout(3000, () => { socket.destroy(); resolve(host + ":" + port + " timeout") })
  socket.on("data", (chunk) => text += chunk)
  socket.on("end", () => resolve(host + ":" + port + " read " + JSON.stringify(text)))
  socket.on("error", (error) => resolve(host + ":" + port + " " + error.code))
}))).then((lines) => console.log(lines.join("\\n")))'`

/** The host's own non-loopback IPv4 address (where services bound to 0.0.0.0 answer too). */
const hostAddress = Object.values(Os.networkInterfaces()).flatMap((addresses) => addresses ?? [])
  .find((address) => address.family === "IPv4" && !address.internal)?.address

/** An address outside every private range, put on the host's loopback for the test: "the internet" here. */
const publicAddress = "198.51.100.7"
const addPublicAddress = () => {
  try {
    execFileSync("ip", ["addr", "add", `${publicAddress}/32`, "dev", "lo"], { stdio: "ignore" })
    cleanups.push(() => execFileSync("ip", ["addr", "del", `${publicAddress}/32`, "dev", "lo"], { stdio: "ignore" }))
  } catch {
    // There already (an earlier run), or not allowed: the test checks it can connect from here first.
  }
}

const exec = (agentId: string, command: string, timeoutMs = 30_000) =>
  Effect.flatMap(AgentEngine, (engine) => engine.exec(agentId, { command, timeoutMs, maxOutputBytes: 65_536 }))

const startedAgent = Effect.gen(function*() {
  const engine = yield* AgentEngine
  const agentId = freshAgent()
  yield* engine.provision(agentId, { version, gatewayToken: Redacted.make(`token-${agentId}`) })
  yield* engine.start(agentId)
  return agentId
})

/** A GET through an app endpoint the engine gave (connections into the agent's network, here). */
const getThrough = (endpoint: AppEndpoint) =>
  new Promise<string>((resolve, reject) => {
    assert.isTrue("connect" in endpoint, "the app is reached on the host's network")
    const connect = (endpoint as Extract<AppEndpoint, { connect: unknown }>).connect as () => Promise<Duplex>
    Http.get({ createConnection: connectionThrough(connect), path: "/" }, (response) => {
      let body = ""
      response.on("data", (chunk: Buffer) => (body += chunk.toString()))
      response.on("end", () => resolve(body))
    }).on("error", reject)
  })

/** An app serving `text` on `port` inside the agent: a console command that runs until interrupted. */
const serveInside = (agentId: string, port: number, text: string) =>
  Effect.forkChild(exec(agentId, `node -e 'require("http").createServer((q, r) => r.end(${JSON.stringify(text)})).listen(${port}, "127.0.0.1")'`, 120_000))

describe.skipIf(!privateNetworks)("a hostile tenant's network", () => {
  const basePort = reserveGatewayPorts(8)
  const layer = standInEngine({ dataDir: Path.join(dataDir, "one"), basePort })
  /** The agent's gateway port (its slot's block of 120 from the base port), in its own network. */
  const gatewayPortOf = (agentId: string) =>
    basePort + 120 * JSON.parse(Fs.readFileSync(Path.join(metaDirOf(Path.join(dataDir, "one", "agents", agentId)), "engine.json"), "utf8")).slot

  it.live("row 6: from inside, nothing of the host answers (loopback, its own address, private ranges, another agent's gateway), the internet does", () =>
    Effect.gen(function*() {
      const [attacker, victim] = [yield* startedAgent, yield* startedAgent]
      const onLoopback = yield* Effect.promise(() => listener("127.0.0.1", "host loopback"))
      const everywhere = yield* Effect.promise(() => listener("0.0.0.0", "every address"))
      addPublicAddress()
      // The attacks are real: from here, each target answers.
      assert.strictEqual(yield* Effect.promise(() => readFromHere("127.0.0.1", onLoopback)), "host loopback")
      assert.strictEqual(yield* Effect.promise(() => readFromHere(hostAddress ?? "127.0.0.1", everywhere)), "every address")
      const internet = yield* Effect.promise(() => readFromHere(publicAddress, everywhere).catch(() => undefined))
      // The victim's gateway, on its port in its own network: where the old layout put it on the host's loopback.
      const victimPort = gatewayPortOf(victim)

      const result = yield* exec(attacker, probeScript([
        ["127.0.0.1", onLoopback],
        ["127.0.0.1", everywhere],
        [hostAddress ?? "192.0.2.2", everywhere],
        ["10.0.2.2", everywhere],
        ["172.17.0.1", everywhere],
        ["127.0.0.1", victimPort],
        ["127.0.0.1", 5432],
        ...(internet === undefined ? [] : [[publicAddress, everywhere] as const])
      ]))
      const lines = result.stdout.trim().split("\n")
      assert.lengthOf(lines, internet === undefined ? 7 : 8, result.stdout + result.stderr)
      for (const line of lines.slice(0, 7)) {
        assert.notInclude(line, " read ", `reached from inside the agent: ${line}`)
      }
      if (internet !== undefined) assert.strictEqual(lines[7], `${publicAddress}:${everywhere} read "every address"`)
      // The victim is untouched and running.
      assert.strictEqual((yield* (yield* AgentEngine).status(victim)).state, "running")
    }).pipe(Effect.provide(layer)), 120_000)

  it.live("row 5 and item 3: two agents' apps both on port 8080, each reached through its own network; a squatter gets nothing", () =>
    Effect.gen(function*() {
      const engine = yield* AgentEngine
      const [a, b] = [yield* startedAgent, yield* startedAgent]
      const apps = [yield* serveInside(a, 8080, "app of A"), yield* serveInside(b, 8080, "app of B")]
      const answer = (agentId: string) =>
        Effect.flatMap(engine.appEndpoint(agentId, 8080), (endpoint) =>
          Effect.promise(async () => {
            for (let attempt = 0; ; attempt++) {
              try {
                return await getThrough(endpoint)
              } catch (error) {
                if (attempt > 100) throw error
                await new Promise((resolve) => setTimeout(resolve, 100))
              }
            }
          }))
      assert.strictEqual(yield* answer(a), "app of A")
      assert.strictEqual(yield* answer(b), "app of B")

      // Row 5: A binds B's gateway port while B is down; B starts again all the same, and Cairn's probes and calls
      // go to B's own gateway: the squatter, listening in A's network, never sees a connection.
      const bPort = gatewayPortOf(b)
      assert.notStrictEqual(bPort, gatewayPortOf(a))
      yield* engine.stop(b)
      const squatter = yield* Effect.forkChild(exec(a,
        `node -e 'let n = 0; require("net").createServer((s) => { n++; s.destroy() }).listen(${bPort}, "127.0.0.1", () => console.log("bound")); setTimeout(() => { console.log("connections " + n); process.exit(0) }, 4000)'`,
        60_000))
      yield* engine.start(b)
      assert.strictEqual((yield* engine.status(b)).state, "running")
      const squatted = yield* Fiber.join(squatter)
      assert.include(squatted.stdout, "bound", `the squatter did not bind: ${squatted.stderr}`)
      assert.include(squatted.stdout, "connections 0")
      for (const app of apps) yield* Fiber.interrupt(app)
    }).pipe(Effect.provide(layer)), 120_000)

  it.live("AGENT_EGRESS_ALLOW opens a named host service, at its own address, and nothing else", () =>
    Effect.gen(function*() {
      const allowed = yield* Effect.promise(() => listener("127.0.0.1", "the allowed service"))
      const other = yield* Effect.promise(() => listener("127.0.0.1", "another service"))
      const layerWithEgress = standInEngine({
        dataDir: Path.join(dataDir, "egress"),
        basePort: reserveGatewayPorts(1),
        egressAllow: [{ host: "127.0.0.1", port: allowed }]
      })
      yield* Effect.gen(function*() {
        const agentId = yield* startedAgent
        const result = yield* exec(agentId, probeScript([["127.0.0.1", allowed], ["127.0.0.1", other]]))
        const [open, shut] = result.stdout.trim().split("\n")
        assert.strictEqual(open, `127.0.0.1:${allowed} read "the allowed service"`, result.stderr)
        assert.notInclude(shut, " read ")
      }).pipe(Effect.provide(layerWithEgress))
    }), 120_000)

  it.live("item 7: two Cairn servers on one host, with the same gateway ports, both run their agents", () =>
    Effect.gen(function*() {
      const shared = reserveGatewayPorts(1)
      const first = standInEngine({ dataDir: Path.join(dataDir, "server-1"), basePort: shared })
      const second = standInEngine({ dataDir: Path.join(dataDir, "server-2"), basePort: shared })
      yield* Effect.gen(function*() {
        const firstEngine = yield* AgentEngine
        const one = yield* startedAgent
        yield* Effect.gen(function*() {
          const two = yield* startedAgent
          // Both gateways on the same port number, each in its own network; each server reaches its own.
          assert.strictEqual((yield* (yield* AgentEngine).status(two)).state, "running")
          assert.strictEqual((yield* firstEngine.status(one)).state, "running")
          yield* firstEngine.restart(one)
          assert.strictEqual((yield* firstEngine.status(one)).state, "running")
        }).pipe(Effect.provide(second))
      }).pipe(Effect.provide(first))
    }), 120_000)
})
