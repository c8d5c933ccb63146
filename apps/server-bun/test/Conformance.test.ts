/**
 * The HTTP suite every runtime passes (`Conformance.ts`), on Bun: Cairn's web handler under `Bun.serve`, with the
 * Bun the project pins (a devDependency from the npm registry).
 */
import { conformance, startEntryPoint } from "@cairn/server-node/testing"
import { afterAll, assert, beforeAll, describe } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const bun = fileURLToPath(new URL("../../../node_modules/.bin/bun", import.meta.url))
const main = fileURLToPath(new URL("../src/main.ts", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-conformance-bun-"))
let server: Awaited<ReturnType<typeof startEntryPoint>> | undefined

beforeAll(async () => {
  server = await startEntryPoint(bun, [main], { DATA_DIR: dataDir })
}, 240_000)
afterAll(async () => {
  server?.child.kill("SIGTERM")
  const code = await server?.exited
  rmSync(dataDir, { recursive: true, force: true })
  if (server !== undefined) assert.strictEqual(code, 0, server.output())
})

describe("the HTTP suite on Bun", () => conformance(() => server!))
