/** Where the server listens by default: loopback only, so `/metrics`, `/admin` and the API are not open to the network. */
import { CairnServer } from "@cairn/runtime"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"

const addressWith = (env: Record<string, string>) =>
  Effect.gen(function*() { return yield* CairnServer.address }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))))

describe("the listen address", () => {
  it.effect("is 127.0.0.1:3000 unless HOST and PORT say otherwise", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* addressWith({}), { port: 3000, hostname: "127.0.0.1" })
      assert.deepStrictEqual(yield* addressWith({ HOST: "0.0.0.0", PORT: "8080" }), { port: 8080, hostname: "0.0.0.0" })
    }))
})
