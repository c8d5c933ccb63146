/**
 * What the MasterKeys tests share: raw keys as an operator would configure them, the id the port promises for them,
 * a way to get the service out of a layer, captured log lines, and a wrap/unwrap round trip showing a key works.
 */
import { type MasterKey, MasterKeys } from "@cairn/auth"
import { ConfigProvider, Context, Effect, Layer, Logger } from "effect"
import { createHash } from "node:crypto"

/** A fresh key as `openssl rand -base64 32` prints it, and the id MasterKeys must give it. */
export const configuredKey = () => {
  const raw = crypto.getRandomValues(new Uint8Array(32))
  return {
    base64: Buffer.from(raw).toString("base64"),
    id: `mk-${createHash("sha256").update(raw).digest("hex").slice(0, 12)}`
  }
}

export const withConfig = (env: Record<string, string>) =>
  Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))

export const build = <E, R>(layer: Layer.Layer<MasterKeys, E, R>) =>
  Layer.build(layer).pipe(Effect.map(Context.get(MasterKeys)))

export interface LogLine {
  readonly level: string
  readonly message: string
}

/** Runs `effect` and returns its result with the lines it logged. */
export const withLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const lines: Array<LogLine> = []
    const capture = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel, message: String(message) })
    })
    return effect.pipe(
      Effect.provide(Logger.layer([capture])),
      Effect.map((result) => ({ result, lines }))
    )
  })

export interface Wrapped {
  readonly dataKey: Uint8Array<ArrayBuffer>
  readonly iv: Uint8Array<ArrayBuffer>
  readonly additionalData: Uint8Array<ArrayBuffer>
  readonly wrapped: Uint8Array<ArrayBuffer>
}

/** Wraps 32 random bytes (a data key) under a master key, as the secrets service will. */
export const wrap = (masterKey: MasterKey) =>
  Effect.promise(async (): Promise<Wrapped> => {
    const dataKey = crypto.getRandomValues(new Uint8Array(32))
    const iv = crypto.getRandomValues(new Uint8Array(12))
    const additionalData = new TextEncoder().encode(`workspace ws-1, master key ${masterKey.id}`)
    const wrapped = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, masterKey.key, dataKey)
    return { dataKey, iv, additionalData, wrapped: new Uint8Array(wrapped) }
  })

/** The data key back, or a failure when `masterKey` is not the key it was wrapped under. */
export const unwrap = (masterKey: MasterKey, { additionalData, iv, wrapped }: Wrapped) =>
  Effect.tryPromise(() => crypto.subtle.decrypt({ name: "AES-GCM", iv, additionalData }, masterKey.key, wrapped)).pipe(
    Effect.map((bytes) => new Uint8Array(bytes))
  )

/** Wraps a data key under `wrapWith` and unwraps it under `unwrapWith`; fails when the two keys differ. */
export const roundTrip = (wrapWith: MasterKey, unwrapWith: MasterKey = wrapWith) =>
  Effect.gen(function*() {
    const wrapped = yield* wrap(wrapWith)
    return { ...wrapped, unwrapped: yield* unwrap(unwrapWith, wrapped) }
  })
