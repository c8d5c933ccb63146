/**
 * The kept-open RPC connection and the runtime config on real OpenClaw gateways (ENGINE_IT=openclaw, as
 * OpenClawAgentEngine.int.test.ts, which runs the config and files sections of the contract): what only a real
 * engine shows: a hash read while stopped is still valid once the gateway runs
 * and back, one connection serves many calls and a new one follows a restart or a token rotation, and the costs
 * (printed: config.get on the open connection against a fresh connection per call, config.set's round trip).
 */
import { AgentEngine } from "@cairn/agent-engine"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as AgentHome from "../src/AgentHome.ts"
import { connect } from "../src/GatewayRpc.ts"
import { OpenClawAgentEngine } from "../src/index.ts"
import { gatewayNetworkPath, intoGatewayNetwork, reserveGatewayPorts } from "../src/testing/index.ts"

const enabled = process.env["ENGINE_IT"] === "openclaw" && process.env["DATABASE_URL"] === undefined
const versions = ["2026.9.5", "2026.9.6"]
const newest = versions[versions.length - 1]!
const basePort = enabled ? reserveGatewayPorts() : 0
const timeout = 300_000

const dataDir = enabled ? Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-gateway-rpc-")) : ""

let counter = 0
const newAgent = (token: string) =>
  Effect.gen(function*() {
    const agentId = `rpc-${Date.now().toString(36)}-${counter++}`
    yield* (yield* AgentEngine).provision(agentId, { version: newest, gatewayToken: Redacted.make(token) })
    return agentId
  })

/**
 * Sockets of this process connected to `port` of the agent's gateway (Linux: the TCP table of the gateway's own
 * network, or this machine's where it shares it, by the inodes of our own descriptors).
 */
/** The TCP table of the gateway's network; a process of it that ends while it is read (a stop) means look again. */
const tcpTable = (home: string) => {
  for (let attempt = 0; attempt < 5; attempt++) {
    const table = gatewayNetworkPath(home)?.replace(/ns\/net$/, "net/tcp") ?? "/proc/net/tcp"
    try {
      return Fs.readFileSync(table, "utf8")
    } catch {
      // Its process ended between finding it and reading its table.
    }
  }
  return Fs.readFileSync("/proc/net/tcp", "utf8")
}

const ourConnectionsTo = (home: string, port: number) => {
  const inodes = new Set(
    Fs.readdirSync("/proc/self/fd").flatMap((fd) => {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(Fs.readlinkSync(`/proc/self/fd/${fd}`))
        return match === null ? [] : [match[1]!]
      } catch {
        return []
      }
    })
  )
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0")
  return tcpTable(home).split("\n").slice(1).filter((line) => {
    const fields = line.trim().split(/\s+/)
    return fields[2]?.endsWith(`:${hexPort}`) === true && fields[3] === "01" && inodes.has(fields[9] ?? "")
  }).length
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const timed = async <A>(operation: () => Promise<A>) => {
  const started = performance.now()
  await operation()
  return performance.now() - started
}

describe.skipIf(!enabled)("OpenClaw gateway RPC and runtime config", () => {
  layer(
    OpenClawAgentEngine.layer({
      dataDir,
      enginesDir: process.env["OPENCLAW_ENGINES_DIR"] ?? Path.join(dataDir, "engines"),
      versions,
      basePort,
      startTimeout: "120 seconds",
      stopGrace: "15 seconds",
      compileCache: true
    }),
    { excludeTestServices: true, timeout: "300 seconds" }
  )((it) => {
    it.effect("keeps a hash across start and stop, one connection per gateway, and a new one after a token rotation", () =>
      Effect.gen(function*() {
        const engine = yield* AgentEngine
        // An agent of its own in this data dir.
        const firstToken = "rpc-token-first-0123456789"
        const agentId = yield* newAgent(firstToken)
        const home = Path.join(dataDir, "agents", agentId)
        const meta = JSON.parse(Fs.readFileSync(Path.join(AgentHome.metaDirOf(home), "engine.json"), "utf8")) as { slot: number }
        const port = basePort + 120 * meta.slot

        const stopped = yield* engine.readConfig(agentId)
        yield* engine.start(agentId)
        const started = yield* engine.readConfig(agentId)
        assert.strictEqual(started.hash, stopped.hash, "a start changed the hash of an unchanged config")
        assert.deepStrictEqual(started.config, stopped.config, "the gateway and the file disagree on the config")
        const written = yield* engine.writeConfig(agentId, {
          config: { ...started.config, logging: { ...(started.config["logging"] as object), level: "debug" } },
          baseHash: stopped.hash
        })

        // One connection, whatever the number of calls.
        const connectionsAfterOne = ourConnectionsTo(home, port)
        assert.isAtLeast(connectionsAfterOne, 1)
        const engineTimes: Array<number> = []
        for (let i = 0; i < 20; i++) engineTimes.push(yield* Effect.promise(() => timed(() => Effect.runPromise(engine.readConfig(agentId)))))
        assert.strictEqual(ourConnectionsTo(home, port), connectionsAfterOne, "calls opened connections of their own")

        // The costs, on a connection of the test's own: open, and fresh for each call.
        // Into the agent's own network (decision 0043), as the engine's own connection goes.
        const into = yield* intoGatewayNetwork(home)
        const gatewayAt = { url: "ws://localhost", connect: () => into.connect(port) }
        const costs = yield* Effect.promise(async () => {
          const client = await connect({ ...gatewayAt, token: firstToken })
          const open: Array<number> = []
          for (let i = 0; i < 20; i++) open.push(await timed(() => client.request("config.get", {})))
          const fresh: Array<number> = []
          for (let i = 0; i < 10; i++) {
            fresh.push(await timed(async () => {
              const once = await connect({ ...gatewayAt, token: firstToken })
              await once.request("config.get", {})
              once.close()
            }))
          }
          client.close()
          return { open: median(open), fresh: median(fresh) }
        })
        const sets: Array<number> = []
        let current = written
        for (const level of ["info", "debug", "info"]) {
          const started = performance.now()
          current = yield* engine.writeConfig(agentId, {
            config: { ...current.config, logging: { ...(current.config["logging"] as object), level } },
            baseHash: current.hash
          })
          sets.push(performance.now() - started)
        }
        console.log(
          `[GatewayRpc bench] config.get p50: open connection ${costs.open.toFixed(1)} ms, fresh connection per call ${costs.fresh.toFixed(1)} ms; ` +
            `readConfig (config.get + the file hashed twice) p50 ${median(engineTimes).toFixed(1)} ms; ` +
            `writeConfig through config.set p50 ${median(sets).toFixed(0)} ms`
        )

        // A new token restarts the gateway: a new connection with it, which works; the old token opens none.
        yield* engine.rotateGatewayToken(agentId, Redacted.make("rpc-token-second-0123456789"))
        assert.strictEqual((yield* engine.status(agentId)).state, "running")
        assert.strictEqual((yield* engine.readConfig(agentId)).hash, current.hash)
        const intoRestarted = yield* intoGatewayNetwork(home)
        const refused = yield* Effect.promise(() =>
          connect({ url: "ws://localhost", connect: () => intoRestarted.connect(port), token: firstToken })
            .then((client) => client.close(), (error: unknown) => error)
        )
        assert.isDefined(refused, "the old token still opens a connection")

        // Stopped: the file answers, with the hash the gateway had; the connection is gone, and a write with that
        // hash goes to the file.
        yield* engine.stop(agentId)
        const afterStop = yield* engine.readConfig(agentId)
        assert.strictEqual(afterStop.hash, current.hash)
        assert.deepStrictEqual(afterStop.config, current.config)
        assert.strictEqual(ourConnectionsTo(home, port), 0, "the connection outlived its gateway")
        const offline = yield* engine.writeConfig(agentId, { config: started.config, baseHash: afterStop.hash })
        assert.strictEqual((yield* engine.readConfig(agentId)).hash, offline.hash)
      }), 2 * timeout)
  })
})
