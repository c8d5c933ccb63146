/**
 * `/docs` in a real browser: Debian's Chromium, headless, driven by playwright-core, opens the reference page of a
 * real server and renders it from Cairn's own copy of Scalar. Every request the page (and anything it starts) makes
 * is recorded: none may leave loopback (no fonts.scalar.com, no CDN, no telemetry), and the buttons that lead to
 * Scalar's hosted services ("Ask AI", "Generate MCP", "Deploy") are not there. The screenshot it takes is the one
 * docs/api.md shows (docs/images/docs-page.png, rewritten with `UPDATE_SCREENSHOTS=1`).
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import { embeddedStorePass, startServer, waitUntilServing } from "../src/testing/index.ts"

const chromiumPath = "/usr/bin/chromium"
const screenshot = fileURLToPath(new URL("../../../docs/images/docs-page.png", import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), "cairn-docs-page-"))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** Whether a URL stays on this machine: loopback, or the browser's own schemes (data:, blob:, about:). */
const local = (url: string) => {
  const { protocol, hostname } = new URL(url)
  if (!["http:", "https:", "ws:", "wss:"].includes(protocol)) return true
  return hostname === "127.0.0.1" || hostname === "localhost" || hostname === "[::1]"
}

describe.runIf(embeddedStorePass && existsSync(chromiumPath))("the docs page in a browser", () => {
  it("renders the API from Cairn's own copy of Scalar, asks no other host, and shows no hosted-only button", async () => {
    const server = await startServer({ DATA_DIR: dataDir, ENGINE: "simulated" })
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run"
      ]
    })
    try {
      await waitUntilServing(server, 180_000)
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      const requests: Array<string> = []
      context.on("request", (request) => requests.push(request.url()))
      const page = await context.newPage()
      // Playwright's 30 s default is too short for a loaded CI machine rendering Scalar's bundle.
      page.setDefaultTimeout(120_000)
      page.on("websocket", (socket) => requests.push(socket.url()))
      await page.goto(`${server.url}/docs`, { waitUntil: "networkidle", timeout: 120_000 })
      // Rendered: the document's title, a group and an operation of the document are on the page.
      await page.getByRole("heading", { name: "Cairn API" }).first().waitFor({ timeout: 60_000 })
      await page.getByText("Check an API key", { exact: false }).first().waitFor({ timeout: 60_000 })
      // Quiet for a moment, so whatever the page asks for late is recorded; a request still pending then (one to an
      // outside host hangs on this machine's closed network) is judged below instead of failing as a timeout.
      await page.waitForLoadState("networkidle", { timeout: 60_000 }).catch(() => undefined)
      const text = await page.locator("body").innerText()
      assert.include(text, "gateway")
      assert.include(text, "operations")

      assert.isAbove(requests.length, 2, "the page's requests were recorded")
      assert.include(requests, `${server.url}/docs/scalar.js`)
      assert.include(requests, `${server.url}/openapi.json`)
      assert.deepStrictEqual(requests.filter((url) => !local(url)), [], "every request stays on loopback")

      for (const hosted of ["Ask AI", "Generate MCP", "Deploy", "Developer Tools"]) {
        assert.strictEqual(await page.getByText(hosted, { exact: false }).count(), 0, `no "${hosted}"`)
      }

      const png = await page.screenshot({ fullPage: false })
      assert.deepStrictEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], "a PNG")
      assert.isAbove(png.length, 20_000, "a page with something on it")
      writeFileSync(process.env["UPDATE_SCREENSHOTS"] === "1" ? screenshot : join(dataDir, "docs-page.png"), png)
    } finally {
      await browser.close()
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0, server.output())
  }, 300_000)
})
