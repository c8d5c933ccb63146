/**
 * The embedding example runs as a user runs it (`node examples/embed/src/main.ts`): its services made a workspace,
 * a key and a running agent before it served, its own route reads that agent, and Cairn's routes beside it take the
 * key the services issued.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))

/**
 * `promise`, or a failure naming `what` with the example's output once `ms` pass: a start or a stop that sticks says
 * where, rather than running into the test's timeout with nothing printed (as it once did in CI, not reproduced).
 */
const within = <A>(ms: number, what: string, promise: Promise<A>, output: () => string) => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}:\n${output()}`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}
const dataDir = mkdtempSync(join(tmpdir(), "cairn-embed-test-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe.runIf(process.env["DATABASE_URL"] === undefined)("examples/embed", () => {
  it("seeds through the services, then serves its own route beside Cairn's", async () => {
    const child = spawn(process.execPath, [main], { env: { ...process.env, PORT: "0", DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "pipe"] })
    const exited = once(child, "exit")
    let output = ""
    child.stderr.on("data", (chunk) => (output += chunk))
    try {
      // The seed's line comes first, then the address the server listens on (PORT=0: any free port).
      const url = await within(120_000, "the example to listen", new Promise<string>((resolve, reject) => {
        child.stdout.on("data", (chunk) => {
          output += chunk
          const listening = /Listening on (http:\/\/\S+)/.exec(output)
          if (listening !== null) resolve(listening[1]!)
        })
        void exited.then(() => reject(new Error(`the example exited:\n${output}`)))
      }), () => output)
      const seeded = JSON.parse(output.split("\n").find((line) => line.startsWith("{"))!) as { token: string; agentId: string; agentStatus: string }
      assert.strictEqual(seeded.agentStatus, "running")

      const hello = await fetch(`${url}/hello`, { signal: AbortSignal.timeout(30_000) })
      assert.strictEqual(hello.status, 200)
      assert.deepStrictEqual(await hello.json(), { hello: "from the embedding program", agent: { agentId: seeded.agentId, name: "embedded-helper", status: "running" } })

      const auth = { authorization: `Bearer ${seeded.token}` }
      const agents = (await (await fetch(`${url}/v0/agents`, { headers: auth, signal: AbortSignal.timeout(30_000) })).json()) as { agents: Array<{ agentId: string }> }
      assert.deepStrictEqual(agents.agents.map((a) => a.agentId), [seeded.agentId])
      const form = new FormData()
      form.append("file", new Blob(["hello world\n"]), "hello.txt")
      form.append("network", "public")
      const uploaded = await fetch(`${url}/v3/files`, { method: "POST", headers: auth, body: form, signal: AbortSignal.timeout(30_000) })
      assert.strictEqual(uploaded.status, 200)
      assert.strictEqual(((await uploaded.json()) as { data: { cid: string } }).data.cid, "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4")
    } finally {
      child.kill("SIGTERM")
    }
    await within(30_000, "the example to stop on SIGTERM", exited, () => output).catch((error: unknown) => {
      child.kill("SIGKILL")
      throw error
    })
  }, 180_000)
})
