/** The route cache on a clock the test moves: fresh, stale-while-refreshing (absence only), shared lookups, bound. */
import { assert, describe, it } from "vitest"
import { RouteCache } from "../src/index.ts"

const setup = (maxEntries = 100) => {
  let now = 0
  const asked: Array<string> = []
  const answers = new Map<string, string>()
  const cache = new RouteCache<string>(async (host) => {
    asked.push(host)
    return answers.get(host)
  }, { ttlMs: 1_000, staleMs: 10_000, maxEntries, now: () => now })
  return { cache, asked, answers, at: (ms: number) => (now = ms) }
}

describe("RouteCache", () => {
  it("answers from memory within the TTL, and looks a host up once for concurrent requests", async () => {
    const { cache, asked, answers } = setup()
    answers.set("app.test", "route")
    assert.isUndefined(cache.peek("app.test"))
    const [a, b] = await Promise.all([cache.load("app.test"), cache.load("app.test")])
    assert.deepStrictEqual([a, b, asked], ["route", "route", ["app.test"]])
    assert.strictEqual(cache.peek("app.test"), "route")
    await cache.load("cairn.test")
    assert.isNull(cache.peek("cairn.test"), "known absence")
  })

  it("keeps answering a host's absence while it looks it up again, but never serves an expired route", async () => {
    const { cache, asked, answers, at } = setup()
    answers.set("app.test", "route")
    await cache.load("app.test")
    await cache.load("cairn.test")
    at(1_500)
    assert.isUndefined(cache.peek("app.test"), "an expired route waits for its lookup")
    answers.set("cairn.test", "new route")
    assert.isNull(cache.peek("cairn.test"), "absence, while it is refreshed")
    await new Promise((resolve) => setImmediate(resolve))
    assert.strictEqual(cache.peek("cairn.test"), "new route")
    at(20_000)
    assert.isUndefined(cache.peek("cairn.test"), "too old to use at all")
    assert.deepStrictEqual(asked, ["app.test", "cairn.test", "cairn.test"])
  })

  it("forgets everything rather than grow past its bound, and forgets a host on request", async () => {
    const { cache } = setup(3)
    for (const host of ["a", "b", "c"]) await cache.load(host)
    assert.isNull(cache.peek("c"))
    await cache.load("d")
    assert.isUndefined(cache.peek("a"))
    assert.isNull(cache.peek("d"))
    cache.invalidate("d")
    assert.isUndefined(cache.peek("d"))
  })
})
