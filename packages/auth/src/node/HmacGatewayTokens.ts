/**
 * The GatewayTokens adapter: a token is HMAC-SHA256 of the agent id and its token generation under a server secret,
 * compared in constant time. The secret is `CAIRN_GATEWAY_KEY` when set, otherwise `<dataDir>/gateway-key`,
 * generated (32 random bytes, mode 0600) at first start; every node of one installation needs the same.
 */
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { join } from "node:path"
import { GatewayTokens } from "../GatewayTokens.ts"
import * as SecretFile from "./SecretFile.ts"

const prefix = "gw_"

export const make = (key: Redacted.Redacted<string>) =>
  GatewayTokens.of((() => {
    const derive = (agentId: string, generation: number) =>
      prefix + createHmac("sha256", Redacted.value(key)).update(`${agentId}\u0000${generation}`).digest("base64url")
    return {
      tokenFor: (agentId, generation) => Redacted.make(derive(agentId, generation)),
      matches: (agentId, generation, candidate) => {
        const expected = Buffer.from(derive(agentId, generation))
        const given = Buffer.from(candidate)
        return given.length === expected.length && timingSafeEqual(given, expected)
      }
    }
  })())

export const layer = (key: Redacted.Redacted<string>) => Layer.succeed(GatewayTokens, make(key))

export const keyFilePath = (dataDir: string) => join(dataDir, "gateway-key")

export const layerConfig = (options: { readonly dataDir: string }) =>
  Layer.effect(
    GatewayTokens,
    Effect.gen(function*() {
      const configured = yield* Config.option(Config.Redacted("CAIRN_GATEWAY_KEY"))
      if (Option.isSome(configured)) return make(configured.value)
      const { content } = yield* SecretFile.readOrCreate(
        keyFilePath(options.dataDir),
        Effect.sync(() => Redacted.make(randomBytes(32).toString("base64url")))
      )
      return make(Redacted.make(Redacted.value(content).trim()))
    })
  )
