import { Eip1271SignatureVerifier, type SignedContent, SignatureVerifier } from "@cairn/signatures"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Predicate } from "effect"
import { createServer, type Server } from "node:net"
import { generatePrivateKey } from "viem/accounts"
import { malformed, notFromAKey, sign, vector } from "./Fixtures.ts"

// No Ethereum node runs here, so these tests cover what happens before and instead of an answer from the chain:
// signatures a key made never leave the process, and an endpoint that cannot answer is not read as "invalid".

const listen = (server: Server) =>
  Effect.callback<string>((resume) => {
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resume(Predicate.isObject(address) ? Effect.succeed(`http://127.0.0.1:${address.port}`) : Effect.die(address))
    })
  })

const close = (server: Server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))

/** A loopback URL whose port was just released, so nothing listens there. */
const closedEndpoint = Effect.gen(function*() {
  const server = createServer()
  const url = yield* listen(server)
  yield* close(server)
  return url
})

/** A loopback URL that accepts connections and drops them unanswered, counting them. */
const droppingEndpoint = Effect.gen(function*() {
  let connections = 0
  const server = createServer((socket) => {
    connections += 1
    socket.destroy()
  })
  const url = yield* Effect.acquireRelease(listen(server), () => close(server))
  return { url, connections: () => connections }
})

const verifierAt = (rpcUrl: string) =>
  Effect.map(Eip1271SignatureVerifier.make({ rpcUrl }), (verifier) => (content: SignedContent) => verifier.verify(content))

describe("Eip1271SignatureVerifier", () => {
  it.effect("accepts a key's signature with nothing listening at the endpoint", () =>
    Effect.gen(function*() {
      const verify = yield* verifierAt(yield* closedEndpoint)
      const signed = yield* Effect.promise(() => sign(generatePrivateKey(), vector.cid, vector.date))
      assert.isTrue(yield* verify(signed))
      assert.isTrue(yield* verify(vector))
    }))

  it.effect("accepts a key's signature without connecting to the endpoint", () =>
    Effect.gen(function*() {
      const endpoint = yield* droppingEndpoint
      const verify = yield* verifierAt(endpoint.url)
      assert.isTrue(yield* verify(vector))
      assert.isTrue(yield* verify({ ...vector, address: vector.address.toLowerCase() }))
      assert.strictEqual(endpoint.connections(), 0)
    }))

  it.effect.each(malformed)("rejects $name as invalid without connecting to the endpoint", ({ content }) =>
    Effect.gen(function*() {
      const endpoint = yield* droppingEndpoint
      const verify = yield* verifierAt(endpoint.url)
      assert.isFalse(yield* verify(content))
      assert.strictEqual(endpoint.connections(), 0)
    }))

  it.effect("answers VerifierUnavailable, not invalid, for a signature only the chain can judge when nothing listens", () =>
    Effect.gen(function*() {
      const verify = yield* verifierAt(yield* closedEndpoint)
      const byAnotherKey = yield* Effect.promise(() => sign(generatePrivateKey(), vector.cid, vector.date))
      const error = yield* Effect.flip(verify({ ...vector, signature: byAnotherKey.signature }))
      assert.strictEqual(error._tag, "VerifierUnavailable")
      assert.strictEqual(error.message, "Signature verifier unavailable")
    }))

  it.effect.each(notFromAKey)("asks the chain about $name, and answers VerifierUnavailable when it gets no answer", ({ content }) =>
    Effect.gen(function*() {
      const endpoint = yield* droppingEndpoint
      const verify = yield* verifierAt(endpoint.url)
      const error = yield* Effect.flip(verify(content))
      assert.strictEqual(error._tag, "VerifierUnavailable")
      assert.isAbove(endpoint.connections(), 0)
    }))

  it.effect("serves the SignatureVerifier port through its layer", () =>
    Effect.gen(function*() {
      const rpcUrl = yield* closedEndpoint
      const valid = yield* SignatureVerifier.use((verifier) => verifier.verify(vector)).pipe(
        Effect.provide(Eip1271SignatureVerifier.layer({ rpcUrl }))
      )
      assert.isTrue(valid)
    }))
})
