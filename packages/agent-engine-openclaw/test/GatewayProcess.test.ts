/**
 * The gateway's pid record (src/GatewayProcess.ts), on stand-in processes without a sandbox: it names the gateway that
 * runs now, even when the one before it exits after the next one started, as a restart's can, with its start time.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { processIdentity, readPidRecord, spawnGateway, terminate } from "../src/GatewayProcess.ts"
import * as Sandbox from "../src/Sandbox.ts"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-gateway-process-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

/** A process that stands in for a gateway: it runs until it is signalled. */
const standIn = Path.join(root, "stand-in.mjs")
Fs.writeFileSync(standIn, "setInterval(() => {}, 1_000)\n")

/** Cairn's folder for the agent (beside the home, as AgentHome.metaDirOf puts it). */
const metaDirOf = (home: string) => `${home}.meta`

const spawnIn = (home: string, sandbox: Sandbox.Sandbox) =>
  spawnGateway({ nodePath: process.execPath, entryFile: standIn, home, metaDir: metaDirOf(home), port: 1, env: {}, stopGraceMs: 2_000, sandbox })

const pidInFile = (home: string) => {
  const record = readPidRecord(metaDirOf(home))
  if (record !== undefined) assert.strictEqual(record.startTime, processIdentity(record.pid)?.startTime, "the start time recorded is the process's")
  return record === undefined ? undefined : String(record.pid)
}

describe("GatewayProcess", () => {
  it.effect("records the running gateway's pid, keeps it when an older gateway exits after, and removes it at its own exit", () =>
    Effect.gen(function*() {
      const sandbox = yield* Sandbox.make({ mode: "off", dataDir: root, readOnly: [] })
      const home = Fs.mkdtempSync(Path.join(root, "home-"))
      const older = spawnIn(home, sandbox)
      assert.strictEqual(pidInFile(home), String(older.child.pid))
      const newer = spawnIn(home, sandbox)
      assert.strictEqual(pidInFile(home), String(newer.child.pid))
      yield* Effect.promise(() => terminate(older, 2_000))
      // Let anything the older one's exit set off run.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      assert.strictEqual(pidInFile(home), String(newer.child.pid))
      yield* Effect.promise(() => terminate(newer, 2_000))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      assert.isUndefined(pidInFile(home))
      assert.isFalse(Fs.existsSync(Path.join(home, "gateway.pid")), "nothing is written in the agent's home")
    }))
})
