/**
 * A request that reaches the Node server after it listens but before its handler is attached (Effect's adapter
 * listens first, then builds the routes) waits for the handler instead of hanging for ever (EarlyRequests.ts).
 */
import { EarlyRequests, LingeringClose } from "@cairn/runtime"
import { assert, describe, it } from "@effect/vitest"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

const listening = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)))

describe("EarlyRequests", () => {
  it("hands requests that arrived before the handler to it, once attached, through the other wrappers", async () => {
    const server = createServer()
    LingeringClose.attach(server)
    EarlyRequests.attach(server)
    const url = await listening(server)
    try {
      const early = [fetch(`${url}/a`), fetch(`${url}/b`, { method: "POST", body: "body" })]
      await new Promise((resolve) => setTimeout(resolve, 200))
      server.on("request", (request, response) => {
        let body = ""
        request.on("data", (chunk) => (body += chunk))
        request.on("end", () => response.end(`${request.url} ${body}`))
      })
      const answers = await Promise.all(early.map(async (response) => (await response).text()))
      assert.deepStrictEqual(answers, ["/a ", "/b body"])
      // Once the handler is there, requests go straight to it.
      assert.strictEqual(await (await fetch(`${url}/c`)).text(), "/c ")
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
