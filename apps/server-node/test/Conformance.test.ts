/** The HTTP suite every runtime passes (`Conformance.ts`), on the Node server: the reference the others match. */
import { afterAll, assert, beforeAll, describe } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { conformance, startEntryPoint } from "../src/testing/index.ts"

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-conformance-node-"))
let server: Awaited<ReturnType<typeof startEntryPoint>> | undefined

beforeAll(async () => {
  server = await startEntryPoint(process.execPath, [main], { DATA_DIR: dataDir })
}, 240_000)
afterAll(async () => {
  server?.child.kill("SIGTERM")
  const code = await server?.exited
  rmSync(dataDir, { recursive: true, force: true })
  if (server !== undefined) assert.strictEqual(code, 0, server.output())
})

describe("the HTTP suite on Node's server", () => conformance(() => server!))
