import { assert, describe, it } from "@effect/vitest"
import * as _ from "../../src/simulated/ConfigValidator.ts"

// The expected issues are what `openclaw config validate --json` (2026.9.6) printed for the same documents.
describe("ConfigValidator", () => {
  it("accepts the offline config Cairn writes, and an empty one", () => {
    const offline = {
      gateway: { mode: "local", port: 18789, bind: "loopback", auth: { mode: "token", token: "${OPENCLAW_GATEWAY_TOKEN}" } },
      update: { checkOnStart: false },
      telemetry: { enabled: false },
      discovery: { mdns: { mode: "off" } },
      models: { catalogRefresh: { enabled: false } },
      logging: { file: "/tmp/x.log", level: "debug" }
    }
    assert.deepStrictEqual(_.issuesOf(offline), [])
    assert.deepStrictEqual(_.issuesOf({}), [])
    assert.deepStrictEqual(_.validate({}, "/h/openclaw.json"), { valid: true, issues: [], output: "Config valid: /h/openclaw.json" })
  })

  it("refuses unknown top-level keys, one or several, at <root>, after the other issues", () => {
    assert.deepStrictEqual(_.issuesOf({ bogusKey: 1 }), [{ path: "<root>", message: `Unrecognized key: "bogusKey"` }])
    assert.deepStrictEqual(_.issuesOf({ zzz: 1, gateway: { zz: 1, port: "1" }, aaa: 2 }), [
      { path: "gateway.port", message: "Invalid input: expected number, received string" },
      { path: "gateway", message: `Unrecognized key: "zz"` },
      { path: "<root>", message: `Unrecognized keys: "zzz", "aaa"` }
    ])
  })

  it("wants an integer port between 1 and 65535", () => {
    const port = (value: unknown) => _.issuesOf({ gateway: { port: value } })
    assert.deepStrictEqual(port("18789"), [{ path: "gateway.port", message: "Invalid input: expected number, received string" }])
    assert.deepStrictEqual(port(null), [{ path: "gateway.port", message: "Invalid input: expected number, received null" }])
    assert.deepStrictEqual(port(1.5), [{ path: "gateway.port", message: "Invalid input: expected int, received number" }])
    assert.deepStrictEqual(port(0), [{ path: "gateway.port", message: "Too small: expected number to be >=1 (minimum: 1)" }])
    assert.deepStrictEqual(port(70000), [{ path: "gateway.port", message: "Too big: expected number to be <=65535 (maximum: 65535)" }])
  })

  it("wants a document that is an object, and sections of their types", () => {
    assert.deepStrictEqual(_.issuesOf([]), [{ path: "<root>", message: "Invalid input: expected object, received array" }])
    assert.deepStrictEqual(_.issuesOf("x"), [{ path: "<root>", message: "Invalid input: expected object, received string" }])
    assert.deepStrictEqual(_.issuesOf(null), [{ path: "<root>", message: "Invalid input: expected object, received null" }])
    assert.deepStrictEqual(_.issuesOf({ worktreeAcceleration: "x", bindings: {}, $schema: 1, logging: "x" }), [
      { path: "$schema", message: "Invalid input: expected string, received number" },
      { path: "logging", message: "Invalid input: expected object, received string" },
      { path: "worktreeAcceleration", message: "Invalid input: expected boolean, received string (allowed: true, false)" },
      { path: "bindings", message: "Invalid input: expected array, received object" }
    ])
  })

  it("checks the gateway's mode, bind address and auth", () => {
    assert.deepStrictEqual(_.issuesOf({ gateway: { mode: "x", bind: "y" } }), [
      { path: "gateway.mode", message: `Invalid input (allowed: "local", "remote")` },
      { path: "gateway.bind", message: `Invalid input (allowed: "auto", "lan", "loopback", "custom", "tailnet")` }
    ])
    assert.deepStrictEqual(_.issuesOf({ gateway: { auth: "x" } }), [
      { path: "gateway.auth", message: "Invalid input: expected object, received string" }
    ])
    assert.deepStrictEqual(_.issuesOf({ gateway: { auth: { mode: "x", token: 5 } } }), [
      { path: "gateway.auth.mode", message: `Invalid input (allowed: "none", "token", "password", "trusted-proxy")` },
      { path: "gateway.auth.token", message: "Invalid input" }
    ])
  })

  it("prints the issues for people", () => {
    const result = _.validate({ bogusKey: 1 }, "/h/openclaw.json")
    assert.isFalse(result.valid)
    assert.strictEqual(result.output, `Config invalid: /h/openclaw.json\n  × <root>: Unrecognized key: "bogusKey"`)
  })
})
