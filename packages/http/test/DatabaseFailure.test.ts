/** Database errors answer by their SQLSTATE, wherever it sits in the cause chain (ports wrap the driver's error). */
import { assert, describe, it } from "@effect/vitest"
import * as DatabaseFailure from "../src/DatabaseFailure.ts"

const wrapped = (code: string) => ({ _tag: "EventStoreUnavailable", unavailable: true, cause: { _tag: "SqlError", cause: { code } } })

describe("DatabaseFailure.classify", () => {
  it("a data exception (NUL in text 22021, bad escape 22P05, out of range 22003) is bad input", () => {
    for (const code of ["22021", "22P05", "22003"]) assert.strictEqual(DatabaseFailure.classify(wrapped(code)), "bad-input")
  })

  it("a connection, resource, shutdown or transient transaction failure is an outage", () => {
    for (const code of ["08006", "08001", "53300", "57P01", "57P03", "58030", "40001"]) {
      assert.strictEqual(DatabaseFailure.classify(wrapped(code)), "unavailable")
    }
  })

  it("anything else with a SQLSTATE (a constraint, a syntax error, a missing table) is a bug, never an outage", () => {
    for (const code of ["23505", "42601", "42P01"]) assert.strictEqual(DatabaseFailure.classify(wrapped(code)), "bug")
  })

  it("an error without a SQLSTATE (a refused socket: ECONNREFUSED) is left to the port's own classification", () => {
    assert.strictEqual(DatabaseFailure.classify({ cause: { code: "ECONNREFUSED" } }), undefined)
    assert.strictEqual(DatabaseFailure.classify(new Error("boom")), undefined)
  })
})
