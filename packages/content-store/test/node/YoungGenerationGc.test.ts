/**
 * Uploads pace young-generation collections by the body bytes they read (YoungGenerationGc.ts): a scavenge runs once
 * `bytesPerYoungCollection` bytes have been counted, and not before.
 */
import { bodyBytesRead, bytesPerYoungCollection } from "@cairn/content-store/node"
import { assert, describe, it } from "@effect/vitest"
import { constants, PerformanceObserver } from "node:perf_hooks"

/** The young-generation collections V8 reports while `run` runs. */
const minorCollections = async (run: () => void) => {
  const seen: Array<number> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) seen.push((entry as unknown as { readonly detail: { readonly kind: number } }).detail.kind)
  })
  observer.observe({ entryTypes: ["gc"] })
  run()
  // Entries are delivered asynchronously.
  await new Promise((resolve) => setTimeout(resolve, 50))
  observer.disconnect()
  return seen.filter((kind) => kind === constants.NODE_PERFORMANCE_GC_MINOR).length
}

describe("bodyBytesRead", () => {
  it("collects the young generation once per bytesPerYoungCollection bytes read", async () => {
    assert.isAbove(bytesPerYoungCollection, 0)
    // Start from a fresh count: whatever was counted before is collected now.
    bodyBytesRead(bytesPerYoungCollection)
    const under = await minorCollections(() => bodyBytesRead(bytesPerYoungCollection - 1))
    const over = await minorCollections(() => bodyBytesRead(1))
    assert.strictEqual(under, 0)
    assert.strictEqual(over, 1)
  })
})

describe("the collector's function", () => {
  it("is not left as a global in contexts made later", async () => {
    bodyBytesRead(bytesPerYoungCollection)
    const { runInNewContext } = await import("node:vm")
    assert.strictEqual(runInNewContext("typeof gc"), typeof (globalThis as { readonly gc?: unknown }).gc)
  })
})
