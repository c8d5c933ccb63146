/**
 * The gateway RPC client against a stand-in gateway (test/fixtures/gateway-rpc-server.ts): the handshake it sends,
 * answers and errors, timeouts, dropped connections, refusals. OpenClawAgentEngine.int.test.ts talks to real ones.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { connect, GatewayRpcError } from "../src/GatewayRpc.ts"
import { type Connection, noAnswer, rpcError, serveGatewayRpc, type ServeOptions } from "./fixtures/gateway-rpc-server.ts"

const servers: Array<Http.Server> = []
afterAll(() => {
  for (const server of servers) server.close()
  for (const server of servers) server.closeAllConnections()
})

const startServer = async (options: ServeOptions) => {
  const server = Http.createServer((_request, response) => response.end())
  servers.push(server)
  const rpc = serveGatewayRpc(server, options)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, ...rpc }
}

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    assert.instanceOf(error, GatewayRpcError)
    return error as GatewayRpcError
  }
  assert.fail("the promise did not reject")
}

describe("GatewayRpc", () => {
  it("completes OpenClaw's handshake as a loopback backend operator, then answers requests", async () => {
    const handshakes: Array<Record<string, unknown>> = []
    const server = await startServer({
      token: () => "the-token",
      handlers: { "echo.back": (params) => ({ echoed: params }) },
      onConnect: (params) => handshakes.push(params)
    })
    const client = await connect({ url: server.url, token: "the-token" })
    assert.deepInclude(handshakes[0], {
      minProtocol: 4,
      maxProtocol: 4,
      role: "operator",
      scopes: ["operator.read", "operator.write", "operator.admin"],
      auth: { token: "the-token" }
    })
    assert.deepInclude(handshakes[0]!["client"] as object, { id: "gateway-client", mode: "backend" })
    assert.strictEqual(client.hello["type"], "hello-ok")
    assert.deepStrictEqual(await client.request("echo.back", { a: 1 }), { echoed: { a: 1 } })
    // Concurrent requests are matched to their answers by id.
    const answers = await Promise.all([1, 2, 3].map((n) => client.request("echo.back", { n })))
    assert.deepStrictEqual(answers, [1, 2, 3].map((n) => ({ echoed: { n } })))
    assert.isFalse(client.closed)
    client.close()
    assert.isTrue(client.closed)
    assert.strictEqual((await rejection(client.request("echo.back"))).code, "CLOSED")
  })

  it("fails a request with the engine's error: code, message, details and the retry delay of its rate limit", async () => {
    const server = await startServer({
      token: () => "t",
      handlers: {
        "config.set": () => {
          throw rpcError("INVALID_REQUEST", "invalid config: gateway.port: expected number", {
            details: { issues: [{ path: "gateway.port", message: "expected number" }] }
          })
        },
        "cron.add": () => {
          throw rpcError("UNAVAILABLE", "rate limit exceeded for cron.add; retry after 12s", { retryable: true, retryAfterMs: 11_500 })
        }
      }
    })
    const client = await connect({ url: server.url, token: "t" })
    const invalid = await rejection(client.request("config.set", { raw: "{}" }))
    assert.strictEqual(invalid.code, "INVALID_REQUEST")
    assert.strictEqual(invalid.message, "invalid config: gateway.port: expected number")
    assert.deepStrictEqual(invalid.details, { issues: [{ path: "gateway.port", message: "expected number" }] })
    const limited = await rejection(client.request("cron.add", {}))
    assert.strictEqual(limited.code, "UNAVAILABLE")
    assert.strictEqual(limited.retryAfterMs, 11_500)
    assert.strictEqual((await rejection(client.request("no.such.method"))).code, "INVALID_REQUEST")
    assert.isFalse(client.closed, "error answers leave the connection open")
    client.close()
  })

  it("times a request out without closing the connection", async () => {
    const server = await startServer({
      token: () => "t",
      handlers: { "never.answers": () => noAnswer, "answers": () => "yes" }
    })
    const client = await connect({ url: server.url, token: "t" })
    const started = Date.now()
    const timedOut = await rejection(client.request("never.answers", {}, { timeoutMs: 200 }))
    assert.strictEqual(timedOut.code, "TIMEOUT")
    assert.isAtLeast(Date.now() - started, 190)
    assert.strictEqual(await client.request("answers"), "yes")
    client.close()
  })

  it("fails pending requests when the gateway drops the connection, and then every request", async () => {
    let connection: Connection | undefined
    const server = await startServer({
      token: () => "t",
      handlers: { "never.answers": () => noAnswer },
      onConnect: (_params, accepted) => void (connection = accepted)
    })
    const client = await connect({ url: server.url, token: "t" })
    const pending = client.request("never.answers")
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection!.drop()
    assert.strictEqual((await rejection(pending)).code, "CLOSED")
    assert.isTrue(client.closed)
    assert.strictEqual((await rejection(client.request("never.answers"))).code, "CLOSED")
  })

  it("is refused with the engine's error for a wrong token, and closed", async () => {
    const server = await startServer({ token: () => "right" })
    const refused = await rejection(connect({ url: server.url, token: "wrong" }))
    assert.strictEqual(refused.code, "INVALID_REQUEST")
    assert.include(refused.message, "token mismatch")
    assert.strictEqual(server.connections.size, 0)
  })

  it("is UNAVAILABLE when nothing listens, or the handshake does not complete in time", async () => {
    const closed = Http.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    assert.strictEqual((await rejection(connect({ url: `ws://127.0.0.1:${port}`, token: "t" }))).code, "UNAVAILABLE")

    const silent = await startServer({ token: () => "t", sendChallenge: false })
    const started = Date.now()
    const timedOut = await rejection(connect({ url: silent.url, token: "t", timeoutMs: 300 }))
    assert.strictEqual(timedOut.code, "UNAVAILABLE")
    assert.isBelow(Date.now() - started, 5_000)
  })
})
