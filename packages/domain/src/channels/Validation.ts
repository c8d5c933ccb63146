/**
 * What a channel request may say, and the token formats the engine itself never checks (OpenClaw accepts any
 * string and fails later at runtime: shared/docs/reference/openclaw-features.md §10). Shape errors are 400
 * `Validation failed: <detail>`; a token of the wrong format is 500 `Configuration failed` (service interface §7.2).
 * No message ever quotes a token.
 */
import { Redacted, Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"
import { ConfigurationFailed, UnsupportedChannel } from "./Errors.ts"
import { type ChannelName, channelNames, type DmPolicy, type TokenKind } from "./Events.ts"

export const isChannel = (name: string): name is ChannelName => (channelNames as ReadonlyArray<string>).includes(name)

export const requireChannel = (name: string): Result.Result<ChannelName, UnsupportedChannel> =>
  isChannel(name) ? Result.succeed(name) : Result.fail(new UnsupportedChannel({ channel: name }))

/** The tokens each channel takes; all of them are required when it is first set up. WhatsApp is linked in the agent. */
export const tokenKinds: Readonly<Record<ChannelName, ReadonlyArray<TokenKind>>> = {
  telegram: ["botToken"],
  slack: ["botToken", "appToken"],
  discord: ["botToken"],
  whatsapp: []
}

/** A configure request, checked for shape; tokens only inside `Redacted`. */
export interface ConfigureInput {
  readonly botToken?: Redacted.Redacted<string>
  readonly appToken?: Redacted.Redacted<string>
  readonly dmPolicy?: DmPolicy
  readonly allowFrom?: ReadonlyArray<string>
  readonly enabled?: boolean
}

export const maxAllowFrom = 100
export const maxAllowFromLength = 256
export const maxTokenLength = 4096

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Checks a configure body's shape. A blank token counts as absent: on a reconfigure it keeps the one there is. */
export const parseConfigureInput = (channel: ChannelName, body: unknown): Result.Result<ConfigureInput, ValidationFailed> => {
  const fail = (detail: string) => Result.fail(new ValidationFailed({ detail }))
  if (body === undefined || body === null) body = {}
  if (!isRecord(body)) return fail("the body must be a JSON object")
  const input: { -readonly [K in keyof ConfigureInput]: ConfigureInput[K] } = {}
  for (const kind of ["botToken", "appToken"] as const) {
    const value = body[kind]
    if (value === undefined || value === null) continue
    if (typeof value !== "string") return fail(`${kind} must be a string`)
    if (value.trim() === "") continue
    if (!tokenKinds[channel].includes(kind)) {
      return fail(channel === "whatsapp" ? "whatsapp takes no token: it is linked inside the agent" : `${kind} is only taken by slack`)
    }
    input[kind] = Redacted.make(value)
  }
  if (body["dmPolicy"] !== undefined) {
    if (body["dmPolicy"] !== "open" && body["dmPolicy"] !== "pairing") return fail(`dmPolicy must be "open" or "pairing"`)
    input.dmPolicy = body["dmPolicy"]
  }
  if (body["allowFrom"] !== undefined) {
    const allowFrom = body["allowFrom"]
    if (!Array.isArray(allowFrom)) return fail("allowFrom must be an array of strings")
    if (allowFrom.length > maxAllowFrom) return fail(`allowFrom holds at most ${maxAllowFrom} entries`)
    for (const entry of allowFrom) {
      if (typeof entry !== "string" || entry.trim() === "" || entry.length > maxAllowFromLength || /[\u0000-\u001f]/.test(entry)) {
        return fail(`allowFrom entries must be non-empty strings of at most ${maxAllowFromLength} characters`)
      }
    }
    input.allowFrom = [...new Set(allowFrom.map((entry: string) => entry.trim()))]
  }
  if (body["enabled"] !== undefined) {
    if (typeof body["enabled"] !== "boolean") return fail("enabled must be true or false")
    input.enabled = body["enabled"]
  }
  return Result.succeed(input)
}

const formats: Readonly<Record<ChannelName, Partial<Record<TokenKind, RegExp>>>> = {
  // Telegram documents no length for the part after the colon: its own example (core.telegram.org/bots/api) has 34
  // characters, BotFather's tokens 35.
  telegram: { botToken: /^\d{1,20}:[A-Za-z0-9_-]{30,64}$/ },
  slack: { botToken: /^xoxb-[A-Za-z0-9-]+$/, appToken: /^xapp-[A-Za-z0-9-]+$/ },
  // Three base64url parts separated by dots (user id, timestamp, HMAC).
  discord: { botToken: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/ },
  whatsapp: {}
}

/** What each format is, for the refusal's reason. */
const described: Readonly<Record<ChannelName, Partial<Record<TokenKind, string>>>> = {
  telegram: { botToken: "<digits>:<30 to 64 characters of A-Z a-z 0-9 _ ->" },
  slack: { botToken: "xoxb-…", appToken: "xapp-…" },
  discord: { botToken: "three base64url parts separated by dots" },
  whatsapp: {}
}

/** Checks the given tokens' formats: a malformed one is 500 `Configuration failed`, as the spec has it. */
export const checkTokenFormats = (channel: ChannelName, input: ConfigureInput): Result.Result<void, ConfigurationFailed> => {
  for (const kind of tokenKinds[channel]) {
    const token = input[kind]
    if (token === undefined) continue
    const value = Redacted.value(token)
    const format = formats[channel][kind]
    if (value.length > maxTokenLength || format === undefined || !format.test(value)) {
      return Result.fail(new ConfigurationFailed({ channel, reason: `${channel} ${kind} is malformed: expected ${described[channel][kind]}` }))
    }
  }
  return Result.succeed(undefined)
}

/** Tokens shorter than this get no hint: four characters of them would give away too much. */
export const minHintedLength = 16

/** At most the last four characters of a token, and none of a short one. */
export const hintOf = (token: Redacted.Redacted<string>): string | undefined => {
  const value = Redacted.value(token)
  return value.length >= minHintedLength ? value.slice(-4) : undefined
}
