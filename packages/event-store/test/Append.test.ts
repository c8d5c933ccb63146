import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Append from "../src/Append.ts"
import * as ExpectedVersion from "../src/ExpectedVersion.ts"

const roundTrip = (value: unknown) => JSON.parse(JSON.stringify(value))

describe("Append.prepare keeps the caller's data only when JSON gives it back unchanged", () => {
  // Whatever JSON.parse makes is plain (a generated JSON value may hold -0, which its text turns into 0).
  it("finds what JSON.parse makes plain, and its JSON text parses back to an equal value", () =>
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const parsed = roundTrip(value)
      assert.isTrue(Append.isPlainJson(parsed))
      assert.deepStrictEqual(roundTrip(parsed), parsed)
    }), { numRuns: 2000 }))

  it("finds nothing plain whose JSON text parses back to something else", () =>
    fc.assert(fc.property(
      fc.anything({
        withBoxedValues: true,
        withMap: true,
        withSet: true,
        withDate: true,
        withTypedArray: true,
        withSparseArray: true,
        withNullPrototype: true,
        withObjectString: true
      }),
      (value) => {
        let text: string | undefined
        try {
          text = JSON.stringify(value)
        } catch {
          return
        }
        if (Append.isPlainJson(value)) assert.deepStrictEqual(text === undefined ? undefined : JSON.parse(text), value)
      }
    ), { numRuns: 2000 }))

  it("refuses the values a round trip changes", () => {
    class Point {
      readonly x = 1
    }
    const withExtra = Object.assign([1, 2], { label: "extra" })
    const changed: ReadonlyArray<unknown> = [
      undefined,
      -0,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      new Date(0),
      new Point(),
      { gone: undefined },
      { when: new Date(0) },
      [1, , 3],
      withExtra,
      { [Symbol("hidden")]: 1, shown: 2 },
      { toJSON: () => "other" },
      new Map([["a", 1]]),
      () => 1
    ]
    for (const value of changed) assert.isFalse(Append.isPlainJson(value), String(value))
  })

  it.effect("holds the caller's plain data as is, and the parsed JSON of anything else", () =>
    Effect.gen(function*() {
      const plain = { n: 1, list: [true, null, "x", { deep: 2.5 }] }
      const dated = { at: new Date(0), gone: undefined, n: -0 }
      const [stream] = yield* Append.prepare([{
        stream: "s",
        expected: ExpectedVersion.Any,
        events: [{ type: "Plain", data: plain }, { type: "Dated", data: dated }]
      }])
      assert.strictEqual(stream!.events[0]!.data, plain)
      assert.deepStrictEqual(stream!.events[1]!.data, { at: "1970-01-01T00:00:00.000Z", n: 0 })
      assert.deepStrictEqual(stream!.events.map((e) => JSON.parse(e.dataJson)), stream!.events.map((e) => e.data))
    }))
})
