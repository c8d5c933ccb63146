/**
 * WhatsApp linking through OpenClaw's QR login: the `@openclaw/whatsapp` plugin's gateway methods (its
 * `login-qr.ts`). `web.login.start` opens a WhatsApp Web session and answers once WhatsApp sent the first code (a
 * PNG data URL), or with a message when a phone is linked already or no code came; `web.login.wait` reports the
 * login's progress. Neither names an outcome beyond `connected` and `qrDataUrl`, so the rest is told by the
 * plugin's messages, read here and nowhere else.
 */
import type { WhatsAppLink } from "@cairn/agent-engine"
import { Effect, Schema } from "effect"

/** How long `web.login.start` waits for WhatsApp's first code (the plugin's default, 30 s; at least 5 s). */
export const startTimeoutMs = 30_000
/** The shortest wait `web.login.wait` allows: a look at the login, not a wait for it. */
export const lookTimeoutMs = 1_000
/** How a code's image begins (the plugin's RPC schema requires it of a code sent back). */
const pngDataUrl = "data:image/png;base64,"
/**
 * Passed as the code the caller holds (an image of nothing), so that `web.login.wait` answers at once with the
 * login's current code: it answers early only with a code other than the caller's.
 */
export const noCode = pngDataUrl

const Answer = Schema.Struct({
  connected: Schema.optionalKey(Schema.Boolean),
  qrDataUrl: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String)
})
const decodeAnswer = Schema.decodeUnknownEffect(Answer)

const isDataUrl = (value: string | undefined): value is string => value !== undefined && value.startsWith(pngDataUrl)

/** The plugin's messages for what its answers do not otherwise say. */
const alreadyLinked = /already linked|recovered the existing linked session/i
const noLogin = /no active whatsapp login/i
const expired = /expired/i
const stillWaiting = /still waiting|qr already active|qr refreshed|scan (this|the latest)/i

const classify = (answer: typeof Answer.Type): WhatsAppLink => {
  const message = answer.message ?? ""
  if (answer.connected === true || alreadyLinked.test(message)) return { status: "linked", message }
  if (isDataUrl(answer.qrDataUrl)) return { status: "waiting", message, qrDataUrl: answer.qrDataUrl }
  if (noLogin.test(message)) return { status: "not_started", message }
  if (expired.test(message)) return { status: "expired", message }
  if (stillWaiting.test(message)) return { status: "waiting", message }
  return { status: "failed", message: message === "" ? "the engine gave no reason" : message }
}

/** Reads an answer of `web.login.start` or `web.login.wait`; fails with a description when it is not one. */
export const parse = (method: string, answer: unknown): Effect.Effect<WhatsAppLink, string> =>
  decodeAnswer(answer).pipe(
    Effect.map(classify),
    Effect.mapError((issue) => `unexpected answer of ${method} (${issue})`)
  )
