/**
 * The answers of OpenClaw's WhatsApp QR login, as its plugin words them (`extensions/whatsapp/src/login-qr.ts`,
 * 2026.9.6), read into where the link stands; an answer of another shape is refused with a description.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as WhatsAppLink from "../src/WhatsAppLink.ts"

const png = "data:image/png;base64,iVBORw0KGgo="
const read = (answer: unknown) => Effect.runSync(WhatsAppLink.parse("web.login.start", answer))

describe("WhatsAppLink.parse", () => {
  it("reads each answer of the plugin's login", () => {
    assert.deepStrictEqual(read({ qrDataUrl: png, message: "Scan this QR in WhatsApp → Linked Devices." }), {
      status: "waiting",
      message: "Scan this QR in WhatsApp → Linked Devices.",
      qrDataUrl: png
    })
    assert.deepInclude(read({ qrDataUrl: png, message: "QR already active. Scan it in WhatsApp → Linked Devices." }), { status: "waiting", qrDataUrl: png })
    assert.deepInclude(read({ connected: false, message: "QR refreshed. Scan the latest code in WhatsApp → Linked Devices.", qrDataUrl: png }), { status: "waiting" })
    assert.deepStrictEqual(read({ connected: false, message: "Still waiting for the QR scan. Let me know when you’ve scanned it." }), {
      status: "waiting",
      message: "Still waiting for the QR scan. Let me know when you’ve scanned it."
    })
    assert.deepInclude(read({ connected: true, message: "✅ Linked! WhatsApp is ready." }), { status: "linked" })
    assert.deepInclude(read({ message: "WhatsApp recovered the existing linked session (+15551234567).", connected: true }), { status: "linked" })
    assert.deepInclude(read({ message: "WhatsApp is already linked (+15551234567). Say “relink” if you want a fresh QR." }), { status: "linked" })
    assert.deepInclude(read({ connected: false, message: "No active WhatsApp login in progress." }), { status: "not_started" })
    assert.deepInclude(read({ connected: false, message: "The login QR expired. Ask me to generate a new one." }), { status: "expired" })
    for (
      const message of [
        "WhatsApp login failed: WebSocket Error (getaddrinfo ENOTFOUND web.whatsapp.com)",
        "Failed to get QR: Error: Timed out waiting for WhatsApp QR",
        "WhatsApp auth state is still stabilizing. Retry login in a moment."
      ]
    ) assert.deepStrictEqual(read({ message }), { status: "failed", message })
    assert.deepStrictEqual(read({}), { status: "failed", message: "the engine gave no reason" })
    // Not an image: not a code to hand out.
    assert.deepInclude(read({ qrDataUrl: "javascript:alert(1)", message: "Scan this QR in WhatsApp → Linked Devices." }), { status: "waiting" })
    assert.notProperty(read({ qrDataUrl: "javascript:alert(1)", message: "Scan this QR" }), "qrDataUrl")
  })

  it("refuses an answer of another shape", () => {
    const refused = Effect.runSync(Effect.flip(WhatsAppLink.parse("web.login.wait", { connected: "yes" })))
    assert.match(refused, /^unexpected answer of web\.login\.wait/)
  })
})
