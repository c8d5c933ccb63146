/** Runs the real server entry point as a child process on a free loopback port, for end-to-end tests. */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { rmSync } from "node:fs"
import { reserveTestPort } from "@cairn/agent-engine-openclaw/testing"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../main.ts", import.meta.url))

/**
 * A port for a server this test starts: reserved machine-wide below the ephemeral range (PortRanges.ts), so that no
 * other process takes it before the server binds it (a port from port 0 could go to another test's server or
 * connection meanwhile, and /healthz was then answered by someone else).
 */
export const freePort = (): Promise<number> => reserveTestPort()

export interface ServerProcess {
  readonly url: string
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>
}

/**
 * Starts the server entry point; `runtime` is the executable that runs it (Node by default, or Bun). It listens on
 * `env.PORT` when given (a test that must know the address first, for `CAIRN_INTERNAL_URL`), else on a free port.
 * Without a warm pool unless `env` asks for one (`AGENT_POOL_SIZE`): a pooled gateway would compete with the test's own.
 */
export const startServer = async (env: Record<string, string | undefined>, runtime = process.execPath): Promise<ServerProcess> => {
  const port = env["PORT"] === undefined ? await freePort() : Number(env["PORT"])
  let output = ""
  const child = spawn(runtime, [main], {
    env: { ...process.env, HOST: "127.0.0.1", AGENT_POOL_SIZE: "0", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = once(child, "exit").then(([code]) => code as number | null)
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited }
}

/**
 * A test's end for its server: stopped with SIGTERM if it still runs, which it must answer by exiting 0 (a graceful
 * stop), then its data directory removed.
 */
export const stopServer = async (server: ServerProcess, dataDir: string) => {
  if (server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    const code = await server.exited
    if (code !== 0) throw new Error(`the server exited ${code} on SIGTERM:\n${server.output()}`)
  }
  rmSync(dataDir, { recursive: true, force: true })
}

/** Waits until the server answers /healthz, or fails with its output. */
export const waitUntilServing = async (server: ServerProcess, timeoutMillis = 60_000) => {
  const deadline = Date.now() + timeoutMillis
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`server exited early:\n${server.output()}`)
    try {
      // A request that arrives while the server is still starting can go unanswered: give each try a deadline.
      const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(1000) })
      if (response.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`server did not start in time:\n${server.output()}`)
}

/**
 * Whether this is the embedded-store pass (DATABASE_URL unset). CI runs the suite twice, the second time on
 * PostgreSQL; tests of what does not depend on the store (process signals, other runtimes, the README, connection
 * handling, the embedding example) run in the first pass only, with `describe.runIf(embeddedStorePass)`.
 */
export const embeddedStorePass = process.env["DATABASE_URL"] === undefined
