/**
 * The gateway's log as Cairn reads it from an agent's home (Logs.ts): the last lines, what came after a cursor in
 * whole lines, a truncated file read from the top, secret values replaced (JSON-escaped ones too), and a log the
 * agent replaced with a symlink refused, never followed.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { HomeTampered } from "../src/HomeFiles.ts"
import * as Logs from "../src/Logs.ts"

const homeWith = (content?: string) => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-logs-"))
  Fs.mkdirSync(Path.join(home, ".openclaw", "logs"), { recursive: true })
  if (content !== undefined) Fs.writeFileSync(Path.join(home, ".openclaw", "logs", "openclaw.log"), content)
  return home
}
const logFile = (home: string) => Path.join(home, ".openclaw", "logs", "openclaw.log")
const line = (message: string) => `${JSON.stringify({ 0: message, _meta: { logLevelName: "INFO", date: "2026-11-28T07:00:00.000Z", name: "{\"subsystem\":\"gateway\"}" } })}\n`

describe("the gateway's log, read from the agent's home", () => {
  it("gives the last lines, then what comes after the cursor in whole lines", async () => {
    const home = homeWith(line("one") + line("two") + line("three"))
    const tail = await Logs.read(home, { lines: 2 }, [])
    assert.deepStrictEqual(tail.entries.map((entry) => entry.message), ["two", "three"])
    assert.deepStrictEqual(tail.entries[0], { timestamp: "2026-11-28T07:00:00.000Z", level: "info", source: "gateway", message: "two" })
    assert.strictEqual(tail.cursor, Fs.statSync(logFile(home)).size)
    // A line still being written is left for the next read.
    Fs.appendFileSync(logFile(home), line("four") + "{\"0\":\"fi")
    const next = await Logs.read(home, { after: tail.cursor }, [])
    assert.deepStrictEqual(next.entries.map((entry) => entry.message), ["four"])
    Fs.appendFileSync(logFile(home), "ve\"}\n")
    const rest = await Logs.read(home, { after: next.cursor }, [])
    assert.deepStrictEqual(rest.entries.map((entry) => entry.message), ["five"])
    assert.deepStrictEqual((await Logs.read(home, { after: rest.cursor }, [])).entries, [])
    // Truncated (rotated) below the cursor: read from the top.
    Fs.writeFileSync(logFile(home), line("fresh"))
    assert.deepStrictEqual((await Logs.read(home, { after: rest.cursor }, [])).entries.map((entry) => entry.message), ["fresh"])
  })

  it("replaces secret values, also where JSON escaped them, and reads plain lines as messages", async () => {
    const secret = "pa\"ss\\word-42"
    const home = homeWith(line(`token ${secret}`) + `plain ${secret} line\n`)
    const chunk = await Logs.read(home, { lines: 10 }, [secret, "ab"])
    assert.deepStrictEqual(chunk.entries.map((entry) => entry.message), ["token [redacted]", "plain [redacted] line"])
    assert.notInclude(JSON.stringify(chunk), "word-42")
  })

  it("has nothing to show before the gateway logged, and refuses a log the agent made a symlink", async () => {
    assert.deepStrictEqual(await Logs.read(homeWith(), { lines: 10 }, []), { entries: [], cursor: 0 })
    const home = homeWith()
    Fs.writeFileSync(Path.join(home, "outside.log"), line("not the gateway's"))
    Fs.symlinkSync(Path.join(home, "outside.log"), logFile(home))
    assert.isTrue(Fs.lstatSync(logFile(home)).isSymbolicLink())
    const refused = await Logs.read(home, { lines: 10 }, []).then(() => undefined, (error: unknown) => error)
    assert.instanceOf(refused, HomeTampered)
  })
})
