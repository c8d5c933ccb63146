/**
 * A server process on real OpenClaw gateways for a test file: its own data directory and gateway ports, the engine
 * cache CI fills, the embedded store. Only with ENGINE_IT=openclaw (`enabled`); `stop` in `afterAll` ends the server
 * and whatever gateway it left, and removes the data directory.
 */
import { processesUnder, removeDataDir, reserveGatewayPorts } from "@cairn/agent-engine-openclaw/testing"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ServerProcess } from "./ServerProcess.ts"

export const realEngineServer = (name: string, settings: Readonly<Record<string, string>> = {}) => {
  const enabled = process.env["ENGINE_IT"] === "openclaw"
  const dataDir = enabled ? mkdtempSync(join(tmpdir(), `cairn-openclaw-${name}-`)) : ""
  const env: Record<string, string | undefined> = {
    DATA_DIR: dataDir,
    ENGINE: undefined, // the default engine is OpenClaw
    DATABASE_URL: undefined,
    OPENCLAW_VERSIONS: "2026.9.6",
    OPENCLAW_BASE_PORT: enabled ? String(reserveGatewayPorts()) : "0",
    ...(process.env["OPENCLAW_ENGINES_DIR"] === undefined ? {} : { OPENCLAW_ENGINES_DIR: process.env["OPENCLAW_ENGINES_DIR"] }),
    ...settings
  }
  const stop = async (server: ServerProcess | undefined) => {
    if (server !== undefined && server.child.exitCode === null) {
      server.child.kill("SIGTERM")
      await server.exited
    }
    if (!enabled) return
    for (const { pid } of processesUnder(join(dataDir, "agents"))) process.kill(pid, "SIGKILL")
    removeDataDir(dataDir)
  }
  return { enabled, dataDir, env, stop }
}
