/**
 * Pairing devices with an agent's gateway through the real routes, on the simulated engine: approve and reject a
 * request, approve all, unpair a device, each recorded in the agent's trail with who did it; unknown or malformed
 * ids are 404 `Device not found`, another workspace's agent 404, a gateway that cannot answer 500 `CLI error`.
 */
import { ApiKit, TestRuntime } from "@cairn/runtime/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"

const { request, workspace, key, control, dispose } = TestRuntime.makeTestApi()
const { expectError } = ApiKit
const kit = ApiKit.make(request)

let owner: string
let agentId: string

beforeAll(async () => {
  owner = (await key(await workspace(5))).token
  agentId = (await kit.createAgent(owner, { name: "paired" })).body!["agent"].agentId
  await kit.waitForStatus(owner, agentId, "running")
}, 60_000)

afterAll(dispose)

const devices = async () => (await request("GET", `/v0/agents/${agentId}/devices`, owner)).body as {
  pending: Array<{ id: string }>
  paired: Array<{ id: string }>
}
const ids = (list: Array<{ id: string }>) => list.map((device) => device.id).sort()
const pending = (id: string, name = id) => control((c) => c.addDevice(agentId, { id, name }, "pending"))

describe("pairing devices", () => {
  it("approves a request (the device is paired), rejects another (it is gone), and records both with who did it", async () => {
    await pending("browser-1", "Chromium on Linux")
    await pending("phone-1")
    const approved = await request("POST", `/v0/agents/${agentId}/devices/browser-1/approve`, owner)
    assert.deepStrictEqual(approved.body, { success: true, message: "Device approved" })
    const rejected = await request("POST", `/v0/agents/${agentId}/devices/phone-1/reject`, owner)
    assert.deepStrictEqual(rejected.body, { success: true, message: "Pairing request rejected" })
    const now = await devices()
    assert.deepStrictEqual(ids(now.pending), [])
    assert.deepStrictEqual(ids(now.paired), ["browser-1"])
    // Answered once: a second answer finds no request.
    expectError(await request("POST", `/v0/agents/${agentId}/devices/phone-1/approve`, owner), 404, "Device not found")

    const trail = (await request("GET", `/v0/agents/${agentId}/events`, owner)).body as { events: Array<{ type: string; actor: string; stream: string; data: { deviceId: string } }> }
    const recorded = trail.events.filter((event) => event.stream === `devices-${agentId}`)
    assert.deepStrictEqual(recorded.map((event) => [event.type, event.data.deviceId]), [["DevicePairingApproved", "browser-1"], ["DevicePairingRejected", "phone-1"]])
    assert.isTrue(recorded.every((event) => event.actor === recorded[0]!.actor && event.actor !== ""))
  })

  it("approves every pending request at once, and unpairs a device", async () => {
    await pending("tablet-1")
    await pending("laptop-1")
    const all = await request("POST", `/v0/agents/${agentId}/devices/approve-all`, owner)
    assert.strictEqual(all.status, 200, JSON.stringify(all.body))
    assert.deepStrictEqual((all.body!["approved"] as Array<string>).sort(), ["laptop-1", "tablet-1"])
    assert.deepStrictEqual(ids((await devices()).paired), ["browser-1", "laptop-1", "tablet-1"])
    assert.deepStrictEqual((await request("POST", `/v0/agents/${agentId}/devices/approve-all`, owner)).body, { success: true, approved: [] })

    assert.deepStrictEqual((await request("DELETE", `/v0/agents/${agentId}/devices/tablet-1`, owner)).body, { success: true, message: "Device removed" })
    assert.deepStrictEqual(ids((await devices()).paired), ["browser-1", "laptop-1"])
    expectError(await request("DELETE", `/v0/agents/${agentId}/devices/tablet-1`, owner), 404, "Device not found")
  })

  it("refuses unknown and malformed ids, other workspaces, and a gateway that cannot answer", async () => {
    expectError(await request("POST", `/v0/agents/${agentId}/devices/nobody/approve`, owner), 404, "Device not found")
    expectError(await request("POST", `/v0/agents/${agentId}/devices/${encodeURIComponent("a b")}/reject`, owner), 404, "Device not found")
    expectError(await request("DELETE", `/v0/agents/${agentId}/devices/${"x".repeat(90)}!`, owner), 404, "Device not found")
    const stranger = (await key(await workspace(1))).token
    await pending("theirs")
    expectError(await request("POST", `/v0/agents/${agentId}/devices/theirs/approve`, stranger), 404, "Agent not found")
    expectError(await request("POST", `/v0/agents/${agentId}/devices/approve-all`, stranger), 404, "Agent not found")
    await control((c) => c.failCli(agentId, "gateway unreachable"))
    expectError(await request("POST", `/v0/agents/${agentId}/devices/theirs/approve`, owner), 500, "CLI error")
    await control((c) => c.clearFailures(agentId))
    assert.deepInclude(ids((await devices()).pending), "theirs")
  })
})
