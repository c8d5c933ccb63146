import { Audit, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-28T10:00:00.000Z"
const sealed = { keyId: "dk-1", nonce: "bm9uY2U=", ciphertext: "Y2lwaGVy" }
const registered = (webhookId: string) =>
  new Audit.AuditWebhookRegistered({ webhookId, workspaceId: "w1", userId: "u1", url: "https://siem.example.com/hook", sealed, at })
const register = (webhookId: string) => {
  const { _tag, ...fields } = registered(webhookId)
  return new Audit.RegisterAuditWebhook(fields)
}

describe("a workspace's audit webhooks", () => {
  it("are registered up to the limit, then refused", () => {
    given(Audit.decider).when(register("h1")).then([registered("h1")])
    const full = Array.from({ length: Audit.maxWebhooks }, (_, i) => registered(`h${i}`))
    given(Audit.decider, full).when(register("hx")).thenFails(new Audit.TooManyAuditWebhooks({ limit: Audit.maxWebhooks }))
    // A removal frees a place.
    const removed = new Audit.AuditWebhookRemoved({ webhookId: "h0", workspaceId: "w1", at })
    given(Audit.decider, [...full, removed]).when(register("hx")).then([registered("hx")])
  })

  it("are removed once; an unknown one is not found", () => {
    const remove = new Audit.RemoveAuditWebhook({ webhookId: "h1", workspaceId: "w1", at })
    given(Audit.decider, [registered("h1")]).when(remove).then([new Audit.AuditWebhookRemoved({ webhookId: "h1", workspaceId: "w1", at })])
    const removed = new Audit.AuditWebhookRemoved({ webhookId: "h1", workspaceId: "w1", at })
    given(Audit.decider, [registered("h1"), removed]).when(remove).thenFails(new Audit.AuditWebhookNotFound({ webhookId: "h1" }))
    assert.strictEqual(new Audit.AuditWebhookNotFound({ webhookId: "h1" }).message, "Audit webhook not found")
  })
})

describe("a webhook's URL", () => {
  it("is an http(s) URL without credentials, at most 2048 characters", () => {
    assert.strictEqual(Audit.checkUrl("https://siem.example.com/hook?x=1"), "https://siem.example.com/hook?x=1")
    assert.strictEqual(Audit.checkUrl("http://127.0.0.1:8080/hook"), "http://127.0.0.1:8080/hook")
    const detail = (input: unknown) => {
      const checked = Audit.checkUrl(input)
      return checked instanceof ValidationFailed ? checked.message : checked
    }
    assert.strictEqual(detail(undefined), "Validation failed: url is required")
    assert.strictEqual(detail("nope"), "Validation failed: url is not an absolute URL")
    assert.strictEqual(detail("ftp://example.com/x"), "Validation failed: url must be http or https")
    assert.strictEqual(detail("file:///etc/passwd"), "Validation failed: url must be http or https")
    assert.strictEqual(detail("javascript:alert(1)"), "Validation failed: url must be http or https")
    assert.strictEqual(detail("https://user:pw@example.com/"), "Validation failed: url must not carry credentials")
    assert.strictEqual(detail(`https://example.com/${"a".repeat(2048)}`), "Validation failed: url is longer than 2048 characters")
  })
})

describe("what the audit feed shows of an event", () => {
  it("is its data without any sealed value, however deep", () => {
    const data = {
      secretId: "s1",
      sealed,
      settings: { botToken: { sealingId: "x", sealed, hint: "abcd" } },
      list: [{ sealed, name: "a" }]
    }
    assert.deepStrictEqual(Audit.shownData(data), {
      secretId: "s1",
      settings: { botToken: { sealingId: "x", hint: "abcd" } },
      list: [{ name: "a" }]
    })
    assert.strictEqual(Audit.shownData(null), null)
    assert.strictEqual(Audit.shownData("text"), "text")
  })
})
