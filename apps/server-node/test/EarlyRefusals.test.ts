/**
 * Uploads refused before their body is read (a bad key, a declared length past the limit) through the real Node
 * server: the status is sent at once, and the connection stays open while the client writes the rest, so a client
 * that reads only once it has written (fetch) sees the status instead of `write EPIPE` (LingeringClose.ts). And the
 * limit itself: a file of exactly 100 MiB is taken.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { cli, embeddedStorePass, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const dataDir = mkdtempSync(join(tmpdir(), "cairn-early-"))
let server: ServerProcess
let writer: string

beforeAll(async () => {
  if (!embeddedStorePass) return
  server = await startServer({ DATA_DIR: dataDir })
  await waitUntilServing(server)
  const env = { url: server.url, dataDir }
  const workspace = cli(env, "workspace", "create", "--name", "Acme")
  writer = cli(env, "key", "create", "--workspace", workspace, "--user", "ada", "--scopes", "org:files:write")
}, 120_000)

afterAll(async () => {
  if (!embeddedStorePass) return
  server.child.kill("SIGTERM")
  await server.exited
  rmSync(dataDir, { recursive: true, force: true })
})

const MiB = 1024 * 1024

/** One raw HTTP/1.1 connection: what it has received, whether the server has ended it, and any error on it. */
const connect = async () => {
  const { hostname, port } = new URL(server.url)
  const socket = Net.connect({ host: hostname, port: Number(port) })
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  let received = ""
  let ended = false
  let failure: string | undefined
  const waiters: Array<() => void> = []
  const wakeAll = () => {
    for (const wake of waiters.splice(0)) wake()
  }
  socket.on("data", (chunk) => {
    received += chunk.toString("latin1")
    wakeAll()
  })
  socket.on("end", () => {
    ended = true
    wakeAll()
  })
  socket.on("close", wakeAll)
  socket.on("error", (error) => {
    failure = (error as NodeJS.ErrnoException).code ?? String(error)
    wakeAll()
  })
  const until = async (done: () => boolean) => {
    while (!done() && failure === undefined && !socket.destroyed) await new Promise<void>((wake) => waiters.push(wake))
  }
  return {
    socket,
    failure: () => failure,
    /** The whole response (head and its Content-Length body). */
    response: async () => {
      const complete = () => {
        const head = received.indexOf("\r\n\r\n")
        if (head < 0) return false
        const length = Number(/content-length: (\d+)/i.exec(received.slice(0, head))?.[1] ?? 0)
        return received.length >= head + 4 + length
      }
      await until(() => complete() || ended)
      assert.isTrue(complete(), `no whole response (${failure ?? "the connection ended"}): ${received}`)
      return received
    },
    /** Writes `bytes` zero bytes in 1 MiB writes, each once the socket takes more; false if the connection broke. */
    write: async (bytes: number) => {
      const chunk = Buffer.alloc(MiB)
      for (let left = bytes; left > 0 && failure === undefined; left -= MiB) {
        if (!socket.write(left >= MiB ? chunk : chunk.subarray(0, left))) {
          await new Promise<void>((resume) => {
            socket.once("drain", resume)
            waiters.push(resume)
          })
        }
      }
      return failure === undefined
    },
    /** Resolves once the server has closed the connection cleanly (a FIN, no reset). */
    closedCleanly: async () => {
      await until(() => ended)
      return ended && failure === undefined
    }
  }
}

const uploadHead = (token: string, length: number) =>
  `POST /v3/files HTTP/1.1\r\nHost: cairn\r\nAuthorization: Bearer ${token}\r\n` +
  `Content-Type: multipart/form-data; boundary=X\r\nContent-Length: ${length}\r\n\r\n`

describe.runIf(embeddedStorePass)("an upload refused before its body is read", () => {
  it("is answered at once, and the client can still write the rest of its body before the connection closes", async () => {
    const connection = await connect()
    const length = 64 * MiB
    connection.socket.write(uploadHead("not-a-key", length))
    assert.isTrue(await connection.write(MiB))
    const refusal = await connection.response()
    assert.match(refusal, /^HTTP\/1\.1 401 /)
    // The adapter's own drain stopped after 256 KiB and reset the socket under this writer (write EPIPE).
    assert.isTrue(await connection.write(length - MiB), `the connection broke while the body was written: ${connection.failure()}`)
    assert.isTrue(await connection.closedCleanly(), `the connection was reset: ${connection.failure()}`)
    connection.socket.destroy()
  }, 120_000)

  it("is 413 File too large as soon as its Content-Length passes the limit, before a byte of it is sent", async () => {
    const connection = await connect()
    connection.socket.write(uploadHead(writer, 200 * MiB))
    const refusal = await connection.response()
    assert.match(refusal, /^HTTP\/1\.1 413 /)
    assert.include(refusal, `{"error":"File too large"}`)
    connection.socket.destroy()
  }, 60_000)

  it("reaches fetch as its status, not as `fetch failed`", async () => {
    const form = () => {
      const body = new FormData()
      body.append("file", new Blob([new Uint8Array(64 * MiB)]), "big.bin")
      body.append("network", "private")
      return body
    }
    const unauthorized = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: "Bearer nope" }, body: form() })
    assert.strictEqual(unauthorized.status, 401)
    const tooLarge = new FormData()
    tooLarge.append("file", new Blob([new Uint8Array(150 * MiB)]), "big.bin")
    const refused = await fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${writer}` }, body: tooLarge })
    assert.strictEqual(refused.status, 413)
    assert.deepStrictEqual(await refused.json(), { error: "File too large" })
  }, 120_000)
})

describe.runIf(embeddedStorePass)("the multipart upload limit", () => {
  const upload = (bytes: number) => {
    const body = new FormData()
    body.append("file", new Blob([new Uint8Array(bytes).fill(7)]), "edge.bin")
    body.append("network", "private")
    return fetch(`${server.url}/v3/files`, { method: "POST", headers: { authorization: `Bearer ${writer}` }, body })
  }

  it("takes a file of exactly 100 MiB, as the docs say, and refuses one byte more", async () => {
    const exact = await upload(100 * MiB)
    assert.strictEqual(exact.status, 200, await exact.clone().text())
    assert.strictEqual(((await exact.json()) as { data: { size: number } }).data.size, 100 * MiB)
    const over = await upload(100 * MiB + 1)
    assert.strictEqual(over.status, 413)
    assert.deepStrictEqual(await over.json(), { error: "File too large" })
  }, 180_000)
})
