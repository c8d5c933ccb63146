/**
 * Domains through the real routes (PGlite, or Postgres with DATABASE_URL) with a real DNS server on loopback (dns2,
 * ephemeral port) behind the Dns port: subdomains active at once, custom domains from pending_ownership to active
 * through the published TXT record (by verify and by the background job), expiry, every documented refusal, 20
 * parallel requests for one name (exactly one wins), the app router's lookup and Caddy's TLS ask endpoint, and the
 * removal of a deleted agent's domains.
 */
import { Domains } from "@cairn/application"
import { NodeDns } from "@cairn/dns/node"
import { LoopbackDns } from "@cairn/dns/testing"
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Option } from "effect"

const dns = await LoopbackDns.start()
const apps = "apps.test"
const options = {
  dns: NodeDns.layer({ servers: [dns.server], timeoutMs: 300, tries: 1 }),
  // The background job is not forked in tests (rounds are run by hand); its wait after a miss starts at an hour.
  domains: { appsDomain: apps, checkIntervalMs: 3_600_000 }
}
const { runtime, web, request, workspace, key, dispose } = TestRuntime.makeTestApi(options)

const { expectError } = ApiKit
const { newAgent } = ApiKit.make(request)

type Request = typeof request

let owner: string
let other: string
let free: string
let agentId: string
let otherAgent: string
let freeAgent: string
const add = (body: unknown, token = owner, id = agentId, send: Request = request) => send("POST", `/v0/agents/${id}/domains`, token, body)
const list = async (token = owner, id = agentId) => (await request("GET", `/v0/agents/${id}/domains`, token)).body!["domains"] as Array<Record<string, any>>
const remove = (domainId: string, token = owner, id = agentId) => request("DELETE", `/v0/agents/${id}/domains/${domainId}`, token)
const verify = (domainId: string, token = owner, id = agentId, send: Request = request) =>
  send("POST", `/v0/agents/${id}/domains/${domainId}/verify`, token)
const routeFor = (host: string) => runtime.runPromise(Domains.use((d) => d.routeFor(host)))
const ask = async (domain: string) => (await web.handler(new Request(`http://cairn/tls/ask?domain=${encodeURIComponent(domain)}`))).status
const clearAll = async (token = owner, id = agentId) => {
  for (const domain of await list(token, id)) await remove(domain["id"], token, id)
}

beforeAll(async () => {
  owner = (await key(await workspace(10))).token
  other = (await key(await workspace(10))).token
  free = (await key(await workspace(1, { plan: "free" }))).token
  ;[agentId, otherAgent, freeAgent] = await Promise.all([newAgent(owner, "apps"), newAgent(other, "others"), newAgent(free, "free")])
}, 120_000)

afterAll(async () => {
  await dispose()
  await dns.close()
})

describe("subdomains", () => {
  it("adds <label>.<APPS_DOMAIN>, active at once, listed, routed (any case, with a port) and approved for TLS", async () => {
    const created = await add({ subdomain: "Shop", targetPort: 3000 })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.strictEqual(created.body!["success"], true)
    const domain = created.body!["domain"]
    assert.deepStrictEqual(Object.keys(domain).sort(), ["agentId", "createdAt", "customDomain", "id", "protected", "status", "subdomain", "targetPort", "updatedAt"])
    assert.include(domain, { agentId, subdomain: "shop", customDomain: null, targetPort: 3000, protected: false, status: "active" })
    assert.strictEqual(domain.createdAt, domain.updatedAt)
    assert.deepStrictEqual(await list(), [domain])

    const route = await routeFor("SHOP.Apps.Test:8443")
    assert.deepStrictEqual(Option.getOrUndefined(route), { domainId: domain.id, agentId, host: "shop.apps.test", targetPort: 3000, protected: false, gateway: false })
    assert.isTrue(Option.isNone(await routeFor("nope.apps.test")))
    assert.isTrue(Option.isNone(await routeFor("shop.apps.test.evil.example")))
    assert.strictEqual(await ask("shop.apps.test"), 200)
    assert.strictEqual(await ask("nope.apps.test"), 404)
    assert.strictEqual(await ask(""), 404)
    await clearAll()
  })

  it("changes the port and protection (never the name) with PUT, and the route follows", async () => {
    const id = (await add({ subdomain: "edit", targetPort: 3000 })).body!["domain"].id as string
    const put = await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { targetPort: 4000, protected: true })
    assert.strictEqual(put.status, 200, JSON.stringify(put.body))
    assert.strictEqual(put.body!["success"], true)
    assert.include(put.body!["domain"], { targetPort: 4000, protected: true, subdomain: "edit" })
    assert.include(Option.getOrUndefined(await routeFor("edit.apps.test")), { targetPort: 4000, protected: true })
    expectError(await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { subdomain: "renamed" }),
      400, "Validation failed: a domain's name cannot be changed: remove it and add another")
    expectError(await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { targetPort: 18789 }),
      400, "Validation failed: targetPort 18789 is the agent gateway's port")
    await clearAll()
  })

  it("deleting releases the name: another tenant can take it then, not before", async () => {
    const id = (await add({ subdomain: "handover", targetPort: 3000 })).body!["domain"].id as string
    expectError(await add({ subdomain: "handover", targetPort: 3000 }, other, otherAgent), 409, "Subdomain already taken")
    const deleted = await remove(id)
    assert.strictEqual(deleted.status, 200)
    assert.deepStrictEqual(deleted.body, { success: true, message: "Domain removed" })
    assert.isTrue(Option.isNone(await routeFor("handover.apps.test")))
    const taken = await add({ subdomain: "handover", targetPort: 3001 }, other, otherAgent)
    assert.strictEqual(taken.status, 201, JSON.stringify(taken.body))
    assert.strictEqual(Option.getOrUndefined(await routeFor("handover.apps.test"))?.agentId, otherAgent)
    await clearAll(other, otherAgent)
  })
})

describe("a domain without targetPort", () => {
  it("is for the agent's gateway, protected by its token, as the agent's own host is (decision 0046)", async () => {
    const created = await add({ subdomain: "front" })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    assert.include(created.body!["domain"], { subdomain: "front", targetPort: 18789, protected: true, status: "active" })
    const id = created.body!["domain"].id as string
    assert.include(Option.getOrUndefined(await routeFor("front.apps.test")), { agentId, targetPort: 18789, protected: true, gateway: true })
    expectError(await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { protected: false }), 400,
      "Validation failed: a domain for the agent's gateway (one without targetPort) is always protected")
    // Given a port, it is an app's domain again, and may be open.
    const moved = await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { targetPort: 3000, protected: false })
    assert.strictEqual(moved.status, 200, JSON.stringify(moved.body))
    assert.include(Option.getOrUndefined(await routeFor("front.apps.test")), { targetPort: 3000, protected: false, gateway: false })
    assert.strictEqual((await request("DELETE", `/v0/agents/${agentId}/domains/${id}`, owner, undefined)).status, 200)
  })
})

describe("refusals", () => {
  it("400 Validation failed for both or neither name, the brand, malformed names, IPs, bad ports and a custom domain under APPS_DOMAIN", async () => {
    const cases: Array<[unknown, string]> = [
      [{ subdomain: "a", customDomain: "a.example.com", targetPort: 3000 }, "give exactly one of subdomain and customDomain"],
      [{ targetPort: 3000 }, "give exactly one of subdomain and customDomain"],
      [{ subdomain: "MyCairnApp", targetPort: 3000 }, `a domain name may not contain "cairn"`],
      [{ customDomain: "shop.CAIRN.io", targetPort: 3000 }, `a domain name may not contain "cairn"`],
      [{ customDomain: "ｃａｉｒｎ.example", targetPort: 3000 }, `a domain name may not contain "cairn"`],
      [{ subdomain: "a.b", targetPort: 3000 }, "subdomain must be a single DNS label, without dots"],
      [{ customDomain: "10.0.0.1", targetPort: 3000 }, "customDomain must be a host name, not an IP address"],
      [{ customDomain: "localhost", targetPort: 3000 }, "customDomain must have at least two labels, such as example.com"],
      [{ customDomain: "https://x.example.com/", targetPort: 3000 }, "customDomain must be a host name such as app.example.com (no scheme, port or path)"],
      [{ customDomain: `${"a".repeat(64)}.example.com`, targetPort: 3000 }, "customDomain labels must be at most 63 characters"],
      [{ customDomain: "x.apps.test", targetPort: 3000 }, "customDomain may not be under apps.test: add a subdomain instead"],
      [{ subdomain: "p", targetPort: 80 }, "targetPort must be a whole number from 1025 to 65535"],
      [{ subdomain: "p", targetPort: 65536 }, "targetPort must be a whole number from 1025 to 65535"],
      [{ subdomain: "p", targetPort: "3000" }, "targetPort must be a whole number from 1025 to 65535"],
      [{ subdomain: "p", targetPort: null, protected: false }, "a domain for the agent's gateway (one without targetPort) is always protected"],
      [{ customDomain: "x.agents.localhost", targetPort: 3000 }, "customDomain may not be under agents.localhost: its hosts are the agents' own"],
      [{ subdomain: "p", targetPort: 18789 }, "targetPort 18789 is the agent gateway's port"],
      [{ subdomain: "p", targetPort: 3000, protected: "yes" }, "protected must be true or false"]
    ]
    for (const [body, detail] of cases) expectError(await add(body), 400, `Validation failed: ${detail}`)
    const notJson = await request("POST", `/v0/agents/${agentId}/domains`, owner, undefined)
    assert.strictEqual(notJson.status, 400)
    assert.match(notJson.body!["error"], /^Validation failed: /)
    assert.deepStrictEqual(await list(), [])
  })

  it("400 for a sixth domain on one agent (5 at most); a removed one frees its place", async () => {
    const ids: Array<string> = []
    for (const name of ["l1", "l2", "l3", "l4", "l5"]) {
      const created = await add({ subdomain: name, targetPort: 3000 })
      assert.strictEqual(created.status, 201, JSON.stringify(created.body))
      ids.push(created.body!["domain"].id)
    }
    expectError(await add({ subdomain: "l6", targetPort: 3000 }), 400, "Validation failed: an agent has at most 5 domains")
    expectError(await add({ customDomain: "l6.example.com", targetPort: 3000 }), 400, "Validation failed: an agent has at most 5 domains")
    await remove(ids[0]!)
    assert.strictEqual((await add({ subdomain: "l6", targetPort: 3000 })).status, 201)
    await clearAll()
  })

  it("404 Domain not found for an unknown id or another agent's domain; 404 Agent not found for another tenant's agent", async () => {
    const theirs = (await add({ subdomain: "theirs", targetPort: 3000 }, other, otherAgent)).body!["domain"].id as string
    for (const id of ["nope", theirs]) {
      expectError(await request("PUT", `/v0/agents/${agentId}/domains/${id}`, owner, { targetPort: 4000 }), 404, "Domain not found")
      expectError(await remove(id), 404, "Domain not found")
      expectError(await verify(id), 404, "Domain not found")
    }
    expectError(await add({ subdomain: "x", targetPort: 3000 }, owner, otherAgent), 404, "Agent not found")
    expectError(await request("GET", `/v0/agents/${otherAgent}/domains`, owner), 404, "Agent not found")
    await clearAll(other, otherAgent)
  })

  it("403 for a custom domain on the free plan; subdomains are allowed there", async () => {
    expectError(await add({ customDomain: "free.example.com", targetPort: 3000 }, free, freeAgent), 403,
      "Custom domains are not available on the free plan; subdomains are")
    assert.strictEqual((await add({ subdomain: "freebie", targetPort: 3000 }, free, freeAgent)).status, 201)
    await clearAll(free, freeAgent)
  })

  it("401 without credentials", async () => {
    assert.strictEqual((await request("GET", `/v0/agents/${agentId}/domains`)).status, 401)
  })
})

describe("exactly once", () => {
  it("20 parallel POSTs for one subdomain from two tenants: exactly one 201, the others 409 Subdomain already taken", async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0 ? add({ subdomain: "race", targetPort: 3000 }) : add({ subdomain: "race", targetPort: 3000 }, other, otherAgent)))
    const statuses = replies.map((r) => r.status)
    assert.strictEqual(statuses.filter((s) => s === 201).length, 1, JSON.stringify(replies.map((r) => r.body)))
    for (const reply of replies.filter((r) => r.status !== 201)) expectError(reply, 409, "Subdomain already taken")
    const held = [...await list(), ...await list(other, otherAgent)].filter((d) => d["subdomain"] === "race")
    assert.strictEqual(held.length, 1)
    await clearAll()
    await clearAll(other, otherAgent)
  })

  it("20 parallel POSTs for one name on one agent: one domain, never past the limit", async () => {
    const replies = await Promise.all(Array.from({ length: 20 }, () => add({ subdomain: "same", targetPort: 3000 })))
    assert.strictEqual(replies.filter((r) => r.status === 201).length, 1)
    for (const reply of replies.filter((r) => r.status !== 201)) expectError(reply, 409, "Subdomain already taken")
    const distinct = await Promise.all(Array.from({ length: 20 }, (_, i) => add({ subdomain: `many${i}`, targetPort: 3000 })))
    assert.strictEqual(distinct.filter((r) => r.status === 201).length, 4)
    for (const reply of distinct.filter((r) => r.status !== 201)) expectError(reply, 400, "Validation failed: an agent has at most 5 domains")
    assert.strictEqual((await list()).length, 5)
    await clearAll()
  })
})

describe("custom domains", () => {
  it("pending_ownership with a TXT record to publish → verify through the loopback DNS server → active", async () => {
    const created = await add({ customDomain: "Shop.Example.COM", targetPort: 8080, protected: true })
    assert.strictEqual(created.status, 201, JSON.stringify(created.body))
    const domain = created.body!["domain"]
    assert.include(domain, { customDomain: "shop.example.com", subdomain: null, status: "pending_ownership", protected: true })
    assert.strictEqual(domain.verification.type, "TXT")
    assert.strictEqual(domain.verification.name, "_service-verify.shop.example.com")
    assert.match(domain.verification.value, /^cairn-verify-[0-9a-f]{32}$/)
    assert.isTrue(Option.isNone(await routeFor("shop.example.com")))
    assert.strictEqual(await ask("shop.example.com"), 404)

    const notYet = await verify(domain.id)
    assert.strictEqual(notYet.status, 200, JSON.stringify(notYet.body))
    assert.include(notYet.body!, { success: true, verified: false })
    assert.match(notYet.body!["message"], /_service-verify\.shop\.example\.com does not hold the verification value yet \(ENOTFOUND\)/)
    assert.strictEqual(notYet.body!["domain"].status, "pending_ownership")

    dns.setTxt("_service-verify.shop.example.com", ["v=something-else", "cairn-verify-00000000000000000000000000000000"])
    assert.strictEqual((await verify(domain.id)).body!["verified"], false)

    dns.setTxt("_service-verify.shop.example.com", ["v=something-else", domain.verification.value])
    const verified = await verify(domain.id)
    assert.strictEqual(verified.status, 200, JSON.stringify(verified.body))
    assert.include(verified.body!, { success: true, verified: true, message: "Domain verified and active" })
    assert.strictEqual(verified.body!["domain"].status, "active")
    assert.strictEqual((await list())[0]!["status"], "active")
    assert.deepStrictEqual(Option.getOrUndefined(await routeFor("SHOP.example.com.")),
      { domainId: domain.id, agentId, host: "shop.example.com", targetPort: 8080, protected: true, gateway: false })
    assert.strictEqual(await ask("shop.example.com"), 200)
    assert.include((await verify(domain.id)).body!, { verified: true, message: "Domain is active" })

    // Verified by this agent: nobody else may add it now.
    expectError(await add({ customDomain: "shop.example.com", targetPort: 3000 }, other, otherAgent), 409, "Domain already registered and verified")
    expectError(await add({ customDomain: "shop.example.com", targetPort: 3000 }), 409, "Domain already added to this agent")

    // Removed: the name is free again, and no longer routed.
    await remove(domain.id)
    assert.strictEqual(await ask("shop.example.com"), 404)
    assert.strictEqual((await add({ customDomain: "shop.example.com", targetPort: 3000 }, other, otherAgent)).status, 201)
    dns.clear("_service-verify.shop.example.com")
    await clearAll(other, otherAgent)
  })

  it("two agents trying for one custom domain: the first to verify wins, the other gets 409", async () => {
    const mine = (await add({ customDomain: "contest.example.org", targetPort: 3000 })).body!["domain"]
    const theirs = (await add({ customDomain: "contest.example.org", targetPort: 3000 }, other, otherAgent)).body!["domain"]
    dns.setTxt("_service-verify.contest.example.org", [mine.verification.value, theirs.verification.value])
    const replies = await Promise.all([verify(mine.id), verify(theirs.id, other, otherAgent)])
    assert.deepStrictEqual(replies.map((r) => r.status).sort(), [200, 409], JSON.stringify(replies.map((r) => r.body)))
    const loser = replies.find((r) => r.status === 409)!
    expectError(loser, 409, "Domain already registered and verified")
    const winner = Option.getOrUndefined(await routeFor("contest.example.org"))
    assert.oneOf(winner?.agentId, [agentId, otherAgent])
    dns.clear("_service-verify.contest.example.org")
    await clearAll()
    await clearAll(other, otherAgent)
  })

  it("503 DNS lookup failed when the DNS server does not answer; the domain stays pending", async () => {
    const domain = (await add({ customDomain: "silent.example.net", targetPort: 3000 })).body!["domain"]
    dns.mute(true)
    try {
      expectError(await verify(domain.id), 503, "DNS lookup failed")
    } finally {
      dns.mute(false)
    }
    assert.strictEqual((await list())[0]!["status"], "pending_ownership")
    await clearAll()
  })

  it("the background job activates a pending domain whose record is published, and waits (backoff) after a miss", async () => {
    const round = () => runtime.runPromise(Domains.use((d) => d.round))
    const published = (await add({ customDomain: "soon.example.net", targetPort: 3000 })).body!["domain"]
    const missing = (await add({ customDomain: "later.example.net", targetPort: 3000 })).body!["domain"]
    dns.setTxt("_service-verify.soon.example.net", [published.verification.value])
    await round()
    const status = async (id: string) => (await list()).find((d) => d["id"] === id)!["status"]
    assert.strictEqual(await status(published.id), "active")
    assert.strictEqual(await ask("soon.example.net"), 200)
    assert.strictEqual(await status(missing.id), "pending_ownership")
    const asked = dns.asked("_service-verify.later.example.net")
    assert.strictEqual(asked, 1)

    // Published now, but the job's next check of this domain is an interval away: the next round does not ask.
    dns.setTxt("_service-verify.later.example.net", [missing.verification.value])
    await round()
    assert.strictEqual(dns.asked("_service-verify.later.example.net"), asked)
    assert.strictEqual(await status(missing.id), "pending_ownership")
    // A verify by hand is never held back by the job's wait.
    assert.include((await verify(missing.id)).body!, { verified: true })
    dns.clear("_service-verify.soon.example.net")
    dns.clear("_service-verify.later.example.net")
    await clearAll()
  })
})

describe("expiry", () => {
  it("an unverified custom domain expires after DOMAIN_VERIFY_TIMEOUT; a later verify still activates it", async () => {
    const api = TestRuntime.makeTestApi({ ...options, domains: { appsDomain: apps, verifyTimeoutMs: 0 } })
    try {
      const token = (await api.key(await api.workspace(2))).token
      const id = await ApiKit.make(api.request).newAgent(token, "expiring")
      const domain = (await add({ customDomain: "expiring.example.com", targetPort: 3000 }, token, id, api.request)).body!["domain"]
      await api.runtime.runPromise(Domains.use((d) => d.round))
      const listed = (await api.request("GET", `/v0/agents/${id}/domains`, token)).body!["domains"]
      assert.strictEqual(listed[0].status, "expired")
      dns.setTxt("_service-verify.expiring.example.com", [domain.verification.value])
      const verified = await verify(domain.id, token, id, api.request)
      assert.include(verified.body!, { verified: true })
      assert.strictEqual(verified.body!["domain"].status, "active")
      const events = (await api.request("GET", `/v0/agents/${id}/events`, token)).body!["events"] as Array<Record<string, any>>
      const types = events.map((e) => e["type"])
      for (const type of ["DomainAdded", "DomainExpired", "DomainVerified"]) assert.include(types, type)
    } finally {
      dns.clear("_service-verify.expiring.example.com")
      await api.dispose()
    }
  })
})

describe("agent deletion", () => {
  it("removes the agent's domains and releases their names", async () => {
    const id = await newAgent(owner, "doomed")
    await add({ subdomain: "doomed", targetPort: 3000 }, owner, id)
    const custom = (await add({ customDomain: "doomed.example.com", targetPort: 3000 }, owner, id)).body!["domain"]
    dns.setTxt("_service-verify.doomed.example.com", [custom.verification.value])
    assert.strictEqual((await verify(custom.id, owner, id)).body!["verified"], true)
    assert.strictEqual(await ask("doomed.apps.test"), 200)

    assert.strictEqual((await request("DELETE", `/v0/agents/${id}`, owner)).status, 200)
    assert.strictEqual(await ask("doomed.apps.test"), 404)
    assert.strictEqual(await ask("doomed.example.com"), 404)
    assert.strictEqual((await add({ subdomain: "doomed", targetPort: 3000 }, other, otherAgent)).status, 201)
    const again = await add({ customDomain: "doomed.example.com", targetPort: 3000 }, other, otherAgent)
    assert.strictEqual(again.status, 201, JSON.stringify(again.body))
    dns.clear("_service-verify.doomed.example.com")
    await clearAll(other, otherAgent)
  })
})
