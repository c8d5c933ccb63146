/**
 * Linking an agent's WhatsApp to a phone through the real routes, on the simulated engine (which links as OpenClaw's
 * QR login does: a code to scan, a phone that scans it, a link that stays): the code as a PNG and as text, both the
 * very QR code the engine drew (checked module by module against an independent encoding of what it holds); the
 * login polled until `linked`, the channel then linked; a forced relink; the link begun and made on the agent's
 * trail, once each, with no code in it; and every refusal: 409 for a channel not configured or disabled and for a
 * stopped gateway, 404 for another workspace, 400 for a malformed body, 502 with the engine's reason when no code
 * comes or the phone's login fails. Runs on PGlite, and on Postgres with DATABASE_URL.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import QRCode from "qrcode"

const { request, workspace, key, control, dispose } = TestRuntime.makeTestApi({ readyWait: "1 second" })
const { expectError } = ApiKit
const { newAgent, waitForStatus } = ApiKit.make(request)

let owner: string
let agentId: string

const link = (body?: unknown, token = owner, id = agentId) => request("POST", `/v0/agents/${id}/channels/whatsapp/link`, token, body)
const look = (token = owner, id = agentId) => request("GET", `/v0/agents/${id}/channels/whatsapp/link`, token)
const configure = async (id: string, body: unknown) => {
  const response = await request("POST", `/v0/agents/${id}/channels/whatsapp`, owner, body)
  assert.strictEqual(response.status, 200, JSON.stringify(response.body))
}
const trail = async () => {
  const { events } = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body as {
    events: Array<{ type: string; actor: string; stream: string; data: Record<string, unknown> }>
  }
  return events.filter((event) => event.stream === `pairings-${agentId}`)
}

/** The modules a QR code's text shows (two rows a line, half blocks), without its quiet zone. */
const modulesOfText = (text: string) => {
  const lines = text.split("\n")
  const rows = lines.flatMap((line) => [[...line].map((c) => c === "█" || c === "▀"), [...line].map((c) => c === "█" || c === "▄")])
  const dark = rows.flatMap((row, y) => row.flatMap((isDark, x) => isDark ? [[x, y] as const] : []))
  const first = Math.min(...dark.map(([, y]) => y)), left = Math.min(...dark.map(([x]) => x))
  const size = Math.max(...dark.map(([x]) => x)) - left + 1
  return rows.slice(first, first + size).map((row) => row.slice(left, left + size))
}
/** The modules of the QR code that holds `content`, encoded by the `qrcode` library itself. */
const modulesOfContent = (content: string) => {
  const { modules } = QRCode.create(content, {})
  return Array.from({ length: modules.size }, (_, y) => Array.from({ length: modules.size }, (_, x) => modules.get(y, x) === 1))
}
const simulatedQr = (n: number) => `2@simulated,${agentId},${n}`

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  agentId = await newAgent(owner, "linked")
  await configure(agentId, { dmPolicy: "pairing", allowFrom: ["+15551234567"] })
  await waitForStatus(owner, agentId, "running")
}, 120_000)

afterAll(dispose)

describe("WhatsApp linking", () => {
  it("hands out the QR code as a PNG and as text, polls until a phone scans it, and records the link once", async () => {
    assert.deepInclude((await look()).body, { status: "not_started", qr: null, qrDataUrl: null })

    const started = await link()
    assert.strictEqual(started.status, 200, JSON.stringify(started.body))
    const { status, qr, qrDataUrl, message } = started.body as { status: string; qr: string; qrDataUrl: string; message: string }
    assert.strictEqual(status, "waiting")
    assert.match(message, /Linked Devices/)
    assert.match(qrDataUrl, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/)
    const png = await QRCode.toDataURL(simulatedQr(0), { margin: 4, scale: 6 })
    assert.strictEqual(qrDataUrl, png, "the engine's code, as it drew it")
    assert.deepStrictEqual(modulesOfText(qr), modulesOfContent(simulatedQr(0)), "the text is the same QR code, module by module")
    assert.match(qr.split("\n")[0]!, /^ +$/, "with a quiet zone")

    // While it waits: the same code (a login lasts three minutes), whether looked at or begun again.
    assert.deepStrictEqual((await look()).body, { ...(started.body as object), message: (await look()).body!["message"] })
    assert.strictEqual((await link()).body!["qrDataUrl"], qrDataUrl)

    assert.isTrue(await control((c) => c.scanWhatsAppQr(agentId)))
    assert.deepInclude((await look()).body, { status: "linked", qr: null, qrDataUrl: null })
    assert.deepInclude((await look()).body, { status: "linked" }, "and stays linked")
    const channels = (await request("GET", `/v0/agents/${agentId}/channels`, owner)).body as { whatsapp: { linked: boolean; configured: boolean } }
    assert.deepInclude(channels.whatsapp, { configured: true, linked: true })
    // Linked already: no new code, nothing new begun, unless forced.
    assert.deepInclude((await link()).body, { status: "linked", qrDataUrl: null })

    const recorded = await trail()
    assert.deepStrictEqual(recorded.map((event) => event.type), ["WhatsAppLinkStarted", "WhatsAppLinkStarted", "WhatsAppLinked"])
    assert.deepInclude(recorded[0]!.data, { agentId, force: false })
    for (const event of recorded) assert.strictEqual(event.actor, "ada")
    assert.notInclude(JSON.stringify(recorded), "simulated,", "no code is kept")
    assert.notInclude(JSON.stringify(recorded), "base64", "no code is kept")
  })

  it("relinks with force: the phone's link dropped, a new code to scan", async () => {
    const relink = await link({ force: true })
    assert.deepInclude(relink.body, { status: "waiting" })
    assert.deepStrictEqual(modulesOfText(relink.body!["qr"] as string), modulesOfContent(simulatedQr(1)))
    const channels = (await request("GET", `/v0/agents/${agentId}/channels`, owner)).body as { whatsapp: { linked: boolean } }
    assert.isFalse(channels.whatsapp.linked)
    assert.isTrue(await control((c) => c.scanWhatsAppQr(agentId)))
    assert.deepInclude((await look()).body, { status: "linked" })
    const recorded = await trail()
    assert.deepStrictEqual(recorded.slice(-2).map((event) => [event.type, event.data["force"]]), [["WhatsAppLinkStarted", true], ["WhatsAppLinked", undefined]])
  })

  it("is 502 with the engine's reason when no code comes or the phone's login fails", async () => {
    await control((c) => c.failWhatsAppLogin(agentId, "getaddrinfo EAI_AGAIN web.whatsapp.com"))
    expectError(await link({ force: true }), 502, "WhatsApp link failed", { reason: "Failed to get QR: getaddrinfo EAI_AGAIN web.whatsapp.com" })

    assert.deepInclude((await link()).body, { status: "waiting" })
    await control((c) => c.failWhatsAppLogin(agentId, "the phone logged out"))
    expectError(await look(), 502, "WhatsApp link failed", { reason: "WhatsApp login failed: the phone logged out" })
    assert.deepInclude((await look()).body, { status: "not_started" }, "told once; nothing is under way then")
  })

  it("refuses a channel not configured or disabled, a stopped gateway, another workspace and a malformed body", async () => {
    const other = await newAgent(owner, "unlinked")
    await waitForStatus(owner, other, "running")
    expectError(await link(undefined, owner, other), 409, "Channel is not configured")
    expectError(await look(owner, other), 409, "Channel is not configured")
    await configure(other, { dmPolicy: "open", enabled: false })
    expectError(await link(undefined, owner, other), 409, "Channel is disabled")
    expectError(await look(owner, other), 409, "Channel is disabled")

    expectError(await link({ force: "yes" }), 400, /^Validation failed: .*force/)
    const stranger = (await key(await workspace(1))).token
    expectError(await link(undefined, stranger), 404, "Agent not found")
    expectError(await look(stranger), 404, "Agent not found")
    expectError(await look(owner, "nosuchagent"), 404, "Agent not found")

    await control((c) => c.crash(agentId))
    expectError(await link(), 409, "Agent is not running")
    expectError(await look(), 409, "Agent is not running")
  })
})
