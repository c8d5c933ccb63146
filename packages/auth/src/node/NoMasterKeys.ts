/**
 * The MasterKeys port when no master key is provisioned (several nodes share a database and the operator has not set
 * one): there is no current key and none by id, so the secrets endpoints answer 503 until a key is configured, and
 * rotating fails saying how to configure one.
 */
import { Effect, Layer } from "effect"
import { MasterKeys, RotationUnsupported } from "../MasterKeys.ts"

export const make = Effect.succeed(MasterKeys.of({
  source: "none: no master key is configured, so secrets are unavailable",
  current: Effect.succeedNone,
  byId: () => Effect.succeedNone,
  rotate: Effect.fail(new RotationUnsupported({ reason: "no-master-key" })),
  retire: Effect.void
}))

export const layer = Layer.effect(MasterKeys, make)
