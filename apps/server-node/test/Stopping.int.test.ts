/**
 * Stopping Cairn started the way a user starts it, `npm start` in the repository: SIGTERM or SIGINT to npm, or a
 * terminal's Ctrl-C (SIGINT to npm's whole process group), stops npm, the server and every agent's gateway; a
 * second SIGINT during a slow stop forces it, and a stop that outlasts SHUTDOWN_GRACE is cut short. A slow stop is
 * a client that sent half a request: the server's listener waits for it to finish. With ENGINE_IT=openclaw the agent
 * is a real OpenClaw gateway (about a minute per start here) in the cases about gateways (a stop, and a stop cut
 * short), else a simulated one; the cases about signals alone always run on the simulated engine.
 */
import { afterAll, afterEach, assert, describe, it } from "@effect/vitest"
import { processesUnder, removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { embeddedStorePass, freePort, newApiUser, type ServerProcess, waitUntil, waitUntilServing } from "../src/testing/index.ts"

const repository = fileURLToPath(new URL("../../..", import.meta.url))
const real = process.env["ENGINE_IT"] === "openclaw"
const dataDir = mkdtempSync(join(tmpdir(), "cairn-stopping-"))
const agentsDir = join(dataDir, "agents")
const realEngine = {
    ENGINE: "openclaw",
    OPENCLAW_VERSIONS: "2026.9.6",
    OPENCLAW_BASE_PORT: real ? String(reserveGatewayPorts()) : "",
    ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] })
  }
const simulatedEngine = { ENGINE: "simulated", SIMULATED_START_DELAY: "100 millis" }

/** A case about gateways runs real ones when it can; one about signals alone needs none. */
type Engine = "gateways" | "signals"
const engineFor = (engine: Engine) => engine === "gateways" && real ? realEngine : simulatedEngine

/** Each case starts npm, the server and an agent: minutes with a real gateway on a loaded machine. */
const timeout = real ? 600_000 : 180_000


const waitFor = <A>(what: string, check: () => Promise<A | undefined> | A | undefined, output: () => string, timeoutMs = timeout / 2) =>
  waitUntil(what, check, { output, timeoutMs })

/** The live (not zombie) processes whose process group is `pgid`, from /proc. */
const groupMembers = (pgid: number) =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(group) === pgid && state !== "Z" ? [Number(pid)] : []
    } catch {
      return []
    }
  })

const isAlive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ")
  } catch {
    return ""
  }
}

interface NpmStart extends ServerProcess {
  /** The node process that serves, under npm. */
  readonly serverPid: number
  readonly realGateways: boolean
}

let current: NpmStart | undefined
const sockets: Array<Socket> = []

/** `npm start` in the repository, in a process group of its own as a terminal's job is, on a free port. */
const npmStart = async (engine: Engine, extra: Record<string, string> = {}): Promise<NpmStart> => {
  const port = await freePort()
  let output = ""
  const child: ChildProcess = spawn("npm", ["start"], {
    cwd: repository,
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), DATA_DIR: dataDir, ...engineFor(engine), ...extra },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = once(child, "exit").then(([code]) => code as number | null)
  const started = { url: `http://127.0.0.1:${port}`, child, output: () => output, exited }
  await waitUntilServing(started, 180_000)
  const serverPid = groupMembers(child.pid!).find((pid) => commandLine(pid).includes("apps/server-node/src/start.mjs"))
  assert.isDefined(serverPid, `the server runs in npm's process group: ${groupMembers(child.pid!).map(commandLine).join("; ")}`)
  current = { ...started, serverPid: serverPid!, realGateways: engineFor(engine) === realEngine }
  return current
}

/** An agent, running; with the real engine, the pids of its gateway and the gateway's workers. */
const runningAgent = async (server: NpmStart, name: string) => {
  const { call } = newApiUser({ url: server.url, dataDir }, { workspace: name, scopes: "org:agents" })
  const created = await call("POST", "/v0/agents", { name })
  assert.include([200, 201, 202], created.status, JSON.stringify(created.body))
  const agentId = created.body.agent.agentId as string
  await waitFor(`agent ${agentId} runs`, async () => (await call("GET", `/v0/agents/${agentId}`)).body?.agent?.status === "running" ? true : undefined, server.output)
  const gateways = processesUnder(agentsDir).map((p) => p.pid)
  if (server.realGateways) assert.isNotEmpty(gateways, "a real gateway runs")
  return gateways
}

/** Waits for npm to exit, then checks that nothing it started is left: its group, the server, the gateways. */
const assertAllStopped = async (server: NpmStart, gateways: ReadonlyArray<number>) => {
  const code = await waitFor("npm exits", () => server.child.exitCode ?? server.child.signalCode ?? undefined, server.output)
  await waitFor("npm's process group is gone", () => groupMembers(server.child.pid!).length === 0 ? true : undefined, server.output)
  assert.isFalse(isAlive(server.serverPid), "the server process is gone")
  // A gateway's sandbox ends a moment after its main process: wait for it, then nothing may run in an agent's home.
  await waitFor("every gateway is gone", () => gateways.every((pid) => !isAlive(pid)) && processesUnder(agentsDir).length === 0 ? true : undefined, server.output)
  const refused = await fetch(`${server.url}/healthz`).then(() => false, () => true)
  assert.isTrue(refused, "nothing listens on the server's port")
  return code
}

/** A client that sent half a request's headers: the listener's close waits for it. */
const halfRequest = async (server: NpmStart) => {
  const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
  socket.on("error", () => {})
  sockets.push(socket)
  await once(socket, "connect")
  socket.write("POST /v3/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n")
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  const server = current
  current = undefined
  if (server === undefined) return
  if (server.child.exitCode === null && server.child.signalCode === null) {
    try {
      process.kill(-server.child.pid!, "SIGKILL")
    } catch {
      // gone meanwhile
    }
    await server.exited
  }
  if (isAlive(server.serverPid)) process.kill(server.serverPid, "SIGKILL")
  for (const { pid } of processesUnder(agentsDir)) process.kill(pid, "SIGKILL")
})

afterAll(() => removeDataDir(dataDir))

describe.runIf(embeddedStorePass)("stopping `npm start`", () => {
  it("SIGTERM to npm stops the server and every gateway, and npm exits 0", async () => {
    const server = await npmStart("gateways")
    const gateways = await runningAgent(server, "term")
    process.kill(server.child.pid!, "SIGTERM")
    assert.strictEqual(await assertAllStopped(server, gateways), 0, server.output())
  }, timeout)

  it("SIGINT to npm stops the server and every gateway, and npm exits 0", async () => {
    const server = await npmStart("signals")
    const gateways = await runningAgent(server, "int")
    process.kill(server.child.pid!, "SIGINT")
    assert.strictEqual(await assertAllStopped(server, gateways), 0, server.output())
  }, timeout)

  it("Ctrl-C in a terminal (SIGINT to npm's process group: the server gets npm's copy too) stops everything gracefully", async () => {
    const server = await npmStart("signals")
    const gateways = await runningAgent(server, "ctrl-c")
    process.kill(-server.child.pid!, "SIGINT")
    assert.strictEqual(await assertAllStopped(server, gateways), 0, server.output())
    assert.notInclude(server.output(), "again: exiting now", "one Ctrl-C is not taken for two")
  }, timeout)

  it("a second SIGINT while the stop is held up stops everything at once", async () => {
    // A grace far longer than the test: only the second signal can end it.
    const server = await npmStart("signals", { SHUTDOWN_GRACE: "1 hour" })
    const gateways = await runningAgent(server, "forced")
    await halfRequest(server)
    process.kill(server.child.pid!, "SIGINT")
    await waitFor("the server says it is still stopping", () => server.output().includes("Still stopping") ? true : undefined, server.output)
    process.kill(server.child.pid!, "SIGINT")
    const code = await assertAllStopped(server, gateways)
    assert.include(server.output(), "SIGINT again: exiting now")
    assert.strictEqual(code, 130, server.output())
  }, timeout)

  it("a stop held up for longer than SHUTDOWN_GRACE is cut short, gateways included", async () => {
    const server = await npmStart("gateways", { SHUTDOWN_GRACE: "3 seconds" })
    const gateways = await runningAgent(server, "bounded")
    await halfRequest(server)
    process.kill(server.child.pid!, "SIGTERM")
    const code = await assertAllStopped(server, gateways)
    assert.include(server.output(), "Not stopped within SHUTDOWN_GRACE (3s)")
    assert.strictEqual(code, 1, server.output())
  }, timeout)
})
