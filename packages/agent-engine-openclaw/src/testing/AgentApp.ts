/**
 * For tests: an app in an agent's workspace, as an agent would run one: a Node server answering `app saw <path>` on
 * a free port, in the network of the agent's gateway (AgentNetwork.ts) where it has one of its own (else on this
 * machine's loopback). Stopped when the scope closes; resolves with its port once it listens.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { inGatewayNetwork } from "./GatewayProcesses.ts"

export const serveAgentApp = (home: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly port: number; readonly stop: () => void }>((resolve, reject) => {
        const script = "const s = require('http').createServer((q, r) => r.end('app saw ' + q.url));" +
          "s.listen(0, '127.0.0.1', () => console.log(s.address().port))"
        const child = spawn(...inGatewayNetwork(home, process.execPath, ["-e", script]), { stdio: ["ignore", "pipe", "inherit"] })
        child.stdout.once("data", (chunk: Buffer) => resolve({ port: Number(chunk.toString().trim()), stop: () => child.kill("SIGKILL") }))
        child.once("error", reject)
      })
    ),
    ({ stop }) => Effect.sync(stop)
  ).pipe(Effect.map(({ port }) => port))
