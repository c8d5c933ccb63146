/**
 * The HTTP suite every runtime passes (`Conformance.ts`), on Deno: Cairn's web handler under `Deno.serve`, with the
 * Deno the project pins (a devDependency from the npm registry), run from the repository's root as a user runs it.
 */
import { conformance, startEntryPoint } from "@cairn/server-node/testing"
import { afterAll, assert, beforeAll, describe } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const deno = join(root, "node_modules/.bin/deno")
const dataDir = mkdtempSync(join(tmpdir(), "cairn-conformance-deno-"))
let server: Awaited<ReturnType<typeof startEntryPoint>> | undefined

beforeAll(async () => {
  server = await startEntryPoint(deno, ["run", "-A", "--unstable-no-legacy-abort", "apps/server-deno/src/main.ts"], { DATA_DIR: dataDir }, root)
}, 240_000)
afterAll(async () => {
  server?.child.kill("SIGTERM")
  const code = await server?.exited
  rmSync(dataDir, { recursive: true, force: true })
  if (server !== undefined) assert.strictEqual(code, 0, server.output())
})

describe("the HTTP suite on Deno", () => conformance(() => server!))
