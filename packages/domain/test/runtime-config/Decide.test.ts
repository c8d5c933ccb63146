import { RuntimeConfig, ValidationFailed } from "@cairn/domain"
import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { given } from "../DeciderSpec.ts"

const at = "2026-11-23T10:00:00.000Z"
const write = { agentId: "a1", workspaceId: "w1", changedPaths: ["agents"], previousHash: "h1", hash: "h2", at }

describe("the config record", () => {
  it("records a write with the top-level paths it changed and the hashes, never a value", () => {
    given(RuntimeConfig.decider).when(new RuntimeConfig.RecordConfigWrite(write)).then([new RuntimeConfig.RuntimeConfigWritten(write)])
    const state = given(RuntimeConfig.decider, [new RuntimeConfig.RuntimeConfigWritten(write)]).when(
      new RuntimeConfig.RecordConfigWrite({ ...write, changedPaths: ["models"], previousHash: "h2", hash: "h3" })
    ).state()
    assert.deepStrictEqual(state, Result.succeed({ lastHash: "h3", writes: 2 }))
  })

  it("records nothing for a write that changed nothing, and records one whose previous version could not be read", () => {
    given(RuntimeConfig.decider).when(new RuntimeConfig.RecordConfigWrite({ ...write, changedPaths: [], hash: "h1" })).then([])
    const { previousHash: _, ...unread } = write
    given(RuntimeConfig.decider).when(new RuntimeConfig.RecordConfigWrite({ ...unread, changedPaths: [] })).then([
      new RuntimeConfig.RuntimeConfigWritten({ ...unread, changedPaths: [] })
    ])
    // The same top-level keys with a new hash: something below them changed.
    given(RuntimeConfig.decider).when(new RuntimeConfig.RecordConfigWrite({ ...write, changedPaths: [] })).then([
      new RuntimeConfig.RuntimeConfigWritten({ ...write, changedPaths: [] })
    ])
  })
})

describe("what clients send", () => {
  const invalidJson = (result: Result.Result<unknown, unknown>) => {
    assert.isTrue(Result.isFailure(result), "expected a refusal")
    const error = (result as Result.Failure<unknown, RuntimeConfig.InvalidJson>).failure
    assert.strictEqual(error._tag, "InvalidJson")
    assert.strictEqual(error.status, 400)
    assert.strictEqual(error.message, "Invalid JSON")
  }

  it("takes a config as an object or as a string holding one", () => {
    assert.deepStrictEqual(RuntimeConfig.parseCandidate(`{"config":{"a":1}}`), Result.succeed({ a: 1 }))
    assert.deepStrictEqual(RuntimeConfig.parseCandidate(JSON.stringify({ config: JSON.stringify({ a: { b: [1] } }) })), Result.succeed({ a: { b: [1] } }))
    assert.deepStrictEqual(RuntimeConfig.parseWrite(`{"config":{"a":1},"baseHash":"h"}`), Result.succeed({ config: { a: 1 }, baseHash: "h" }))
    assert.deepStrictEqual(RuntimeConfig.parseWrite(`{"config":"{}","baseHash":null}`), Result.succeed({ config: {} }))
  })

  it("refuses anything else as Invalid JSON: a body or config string that does not parse, a missing config, one that is no object", () => {
    for (const body of ["", "not json", "[1]", "42", `{"config":"{oops"}`, `{}`, `{"config":null}`, `{"config":[1]}`, `{"config":"[1]"}`, `{"config":7}`, `{"config":"\\"text\\""}`]) {
      invalidJson(RuntimeConfig.parseCandidate(body))
      invalidJson(RuntimeConfig.parseWrite(body))
    }
  })

  it("refuses a baseHash that is no non-empty string as Validation failed", () => {
    for (const baseHash of [1, "", true, {}]) {
      const result = RuntimeConfig.parseWrite(JSON.stringify({ config: {}, baseHash }))
      assert.deepStrictEqual(result, Result.fail(new ValidationFailed({ detail: "baseHash must be a non-empty string" })))
    }
  })

  it("names the top-level keys a write changes, added and removed ones included, whatever the key order", () => {
    const before = { gateway: { port: 1, bind: "x" }, agents: { list: [1, 2] }, old: true }
    const after = { agents: { list: [1, 2] }, gateway: { bind: "x", port: 1 }, models: {} }
    assert.deepStrictEqual(RuntimeConfig.changedPaths(before, after), ["models", "old"])
    assert.deepStrictEqual(RuntimeConfig.changedPaths(before, { ...before, agents: { list: [2, 1] } }), ["agents"])
    assert.deepStrictEqual(RuntimeConfig.changedPaths(before, before), [])
    assert.deepStrictEqual(RuntimeConfig.changedPaths({ a: null }, { a: {} }), ["a"])
  })

  it("documents its refusals with their statuses and strings", () => {
    const cases: Array<[{ status: number; message: string }, number, string]> = [
      [new RuntimeConfig.InvalidConfig({ issues: [] }), 400, "Invalid config"],
      [new RuntimeConfig.ConfigChangedSinceRead({ agentId: "a" }), 409, "Config changed since it was read"],
      [new RuntimeConfig.SettingsManagedByCairn({ paths: ["gateway.port", "gateway.bind"] }), 400, "Settings managed by Cairn cannot be changed: gateway.port, gateway.bind"],
      [new RuntimeConfig.FailedToReadConfig({ agentId: "a" }), 500, "Failed to read config"],
      [new RuntimeConfig.FailedToWriteConfig({ agentId: "a" }), 500, "Failed to write config"],
      [new RuntimeConfig.ValidationCommandFailed({ agentId: "a" }), 500, "Validation command failed"]
    ]
    for (const [error, status, message] of cases) {
      assert.strictEqual(error.status, status)
      assert.strictEqual(error.message, message)
    }
    assert.deepStrictEqual(new RuntimeConfig.InvalidConfig({ issues: [{ path: "a", message: "b" }] }).details, { issues: [{ path: "a", message: "b" }] })
  })
})
