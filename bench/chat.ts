/**
 * `npm run bench:chat`: a chat turn through Cairn (`POST /v0/agents/{id}/chat`) against the same turn sent straight
 * to the agent's gateway (`chat.send` on a kept-open WebSocket RPC connection, waiting for the run's final event), on
 * a real Cairn server and OpenClaw gateway, offline: the model is FakeModelServer on loopback (it answers at once,
 * so what is timed is the gateway's turn and what Cairn adds to it). Paired rounds (Paired.ts): each round runs
 * BENCH_TURNS turns each way, the order rotating; it prints the medians, Cairn's overhead (the difference of the
 * medians) and the ratio direct/Cairn. Also: the time from `POST /v0/agents` to the first reply (the start, the
 * provider's config written through the API, the first turn).
 *
 * Gateways run with SANDBOX=off here, so the baseline can reach the gateway's port on loopback; Cairn's own path to
 * the gateway is the same connection either way (its connector hands it a socket into the agent's network).
 */
import { FakeModelServer } from "@cairn/agent-engine/testing"
import { OpenClawAgentHome, OpenClawChat, OpenClawGatewayRpc } from "@cairn/agent-engine-openclaw"
import { startServer, waitUntilServing } from "@cairn/server-node/testing"
import { Effect, Stream } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { benchUser } from "./BenchApi.ts"
import * as Paired from "./Paired.ts"

const rounds = Number(process.env["BENCH_RUNS"] ?? 5)
const turns = Number(process.env["BENCH_TURNS"] ?? 5)
const basePort = 21600
const enginesDir = process.env["OPENCLAW_ENGINES_DIR"] ?? join(homedir(), ".cache", "cairn", "openclaw-engines")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bench-chat-"))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ms = (value: number) => `${value.toFixed(1)} ms`

const fake = await FakeModelServer.startFakeModelServer()
const server = await startServer({
  DATA_DIR: dataDir,
  ENGINE: undefined,
  SANDBOX: "off",
  SNAPSHOTS: "off",
  OPENCLAW_ENGINES_DIR: enginesDir,
  OPENCLAW_BASE_PORT: String(basePort)
})
try {
  await waitUntilServing(server)
  const { call } = benchUser(server, dataDir)

  // From the request to the first reply: the start, the provider set up through the API, the first turn.
  const createdAt = performance.now()
  const { agent } = await call("POST", "/v0/agents", { name: "bench chat" })
  const agentId = agent.agentId as string
  while ((await call("GET", `/v0/agents/${agentId}`)).agent.status !== "running") await sleep(100)
  const runningAt = performance.now()
  const read = await call("GET", `/v0/agents/${agentId}/config`)
  const provider = FakeModelServer.providerConfig(fake)
  await call("PUT", `/v0/agents/${agentId}/config`, {
    config: {
      ...read.config,
      models: { providers: { fakellm: { ...provider.models.providers.fakellm, apiKey: fake.apiKey } } },
      agents: { ...read.config.agents, defaults: { ...read.config.agents?.defaults, ...provider.agents.defaults } }
    },
    baseHash: read.hash
  })
  const first = await call("POST", `/v0/agents/${agentId}/chat`, { message: "first words" })
  const firstReplyAt = performance.now()
  if (!String(first.reply).includes("first words")) throw new Error(`unexpected reply: ${JSON.stringify(first)}`)

  // The baseline's own connection to the gateway, as Cairn holds one.
  const home = join(dataDir, "agents", agentId)
  const slot = JSON.parse(readFileSync(join(OpenClawAgentHome.metaDirOf(home), "engine.json"), "utf8")).slot as number
  const { gatewayToken } = await call("GET", `/v0/agents/${agentId}/gateway-token`)
  const client = await OpenClawGatewayRpc.connect({ url: `ws://127.0.0.1:${basePort + 120 * slot}`, token: gatewayToken })
  const sessionKey = first.sessionKey as string

  const viaCairn: Array<number> = []
  const direct: Array<number> = []
  const timedTurns = (sink: Array<number>, turn: (message: string) => Promise<string>) =>
    Effect.promise(async () => {
      let total = 0
      for (let index = 0; index < turns; index++) {
        const message = `turn ${sink.length}`
        const startedAt = performance.now()
        const reply = await turn(message)
        const elapsed = performance.now() - startedAt
        if (!reply.includes(message)) throw new Error(`unexpected reply: ${reply}`)
        sink.push(elapsed)
        total += elapsed
      }
      return { operations: turns, milliseconds: total }
    })
  const cairnTurn = async (message: string) => String((await call("POST", `/v0/agents/${agentId}/chat`, { message, sessionKey })).reply)
  const directTurn = (message: string) =>
    Effect.runPromise(
      Stream.runCollect(OpenClawChat.turn(client, agentId, { message, sessionKey, timeoutMs: 60_000 }, async () => undefined)).pipe(
        Effect.map((events) => {
          const done = [...events].at(-1)
          return done?.type === "done" ? done.reply.reply : ""
        })
      )
    )

  // Warm-up: one turn each way.
  await cairnTurn("warm-up")
  await directTurn("warm-up")
  const paired = await Effect.runPromise(Paired.rounds({
    rounds,
    measured: () => timedTurns(viaCairn, cairnTurn),
    baselines: { direct: () => timedTurns(direct, directTurn) }
  }))
  client.close()

  console.log(`\nChat turns on OpenClaw ${agent.engineVersion}, ${rounds} paired rounds of ${turns} turns each way (fake model on loopback):`)
  console.log(`  through Cairn (POST /chat):        median ${ms(median(viaCairn))}`)
  console.log(`  straight to the gateway (chat.send): median ${ms(median(direct))}`)
  console.log(`  Cairn's overhead (median - median): ${ms(median(viaCairn) - median(direct))}   (goal <= 5 ms)`)
  console.log(`  ratio direct/Cairn:                 ${Paired.show(paired.ratios.direct)}`)
  console.log(`  POST /v0/agents -> running ${((runningAt - createdAt) / 1000).toFixed(1)} s, -> first reply ${((firstReplyAt - createdAt) / 1000).toFixed(1)} s (config written through the API included)`)
  server.child.kill("SIGTERM")
  await server.exited
} finally {
  if (server.child.exitCode === null) server.child.kill("SIGKILL")
  await fake.close()
  rmSync(dataDir, { recursive: true, force: true })
}
