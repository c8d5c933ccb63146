/**
 * The same server entry point runs under Bun: health, uploads and a listing through the v3 API. The 6 MiB upload
 * is staged as leaves past the in-memory limit, hashed and written by the leaves' worker (LeafWorker.ts), so its CID
 * checks that path on Bun too.
 */
import { deterministicBytes } from "@cairn/content-store/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { cli, embeddedStorePass, startServer, waitUntilServing } from "../src/testing/index.ts"

const bun = fileURLToPath(new URL("../../../node_modules/.bin/bun", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-bun-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

describe.runIf(embeddedStorePass)("the server under Bun", () => {
  it("serves health, uploads and lists", async () => {
    const server = await startServer({ DATA_DIR: dataDir }, bun)
    try {
      await waitUntilServing(server)
      assert.strictEqual((await fetch(`${server.url}/readyz`)).status, 200)
      const workspace = cli({ url: server.url, dataDir }, "workspace", "create", "--name", "Bun")
      const token = cli({ url: server.url, dataDir }, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", "org:files:read,org:files:write")
      const form = new FormData()
      form.append("file", new Blob(["hello world\n"], { type: "text/plain" }), "hello.txt")
      form.append("network", "public")
      const uploaded = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form })
      assert.strictEqual(uploaded.status, 200, await uploaded.clone().text())
      assert.strictEqual(((await uploaded.json()) as { data: { cid: string } }).data.cid, "bafkreifjjcie6lypi6ny7amxnfftagclbuxndqonfipmb64f2km2devei4")
      const large = new FormData()
      large.append("file", new Blob([deterministicBytes(6 * 1_048_576 + 7)]), "staged.bin")
      large.append("network", "public")
      const staged = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: large })
      assert.strictEqual(staged.status, 200, await staged.clone().text())
      // The CID Node gives the same bytes, with or without the worker (CAIRN_LEAF_WORKERS=0).
      assert.strictEqual(((await staged.json()) as { data: { cid: string } }).data.cid, "bafybeigzzbmsbdrq5evnelja3swypfkdfa2fups4j4hxio4nyew3nj4bdm")
      const listed = (await (await fetch(`${server.url}/v3/files/public`, { headers: { authorization: `Bearer ${token}` } })).json()) as { data: { files: Array<unknown> } }
      assert.strictEqual(listed.data.files.length, 2)
    } finally {
      server.child.kill("SIGTERM")
    }
    await server.exited
  }, 120_000)
})
