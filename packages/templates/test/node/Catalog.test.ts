import { assert, describe, it } from "@effect/vitest"
import * as Catalog from "../../src/node/Catalog.ts"
import { listingOf } from "../../src/Manifest.ts"
import { validateTemplate } from "../../src/Validate.ts"

describe("the shipped catalog", () => {
  it("has its templates, each valid against manifest v1, with persona files", async () => {
    const shipped = await Catalog.shipped()
    assert.deepStrictEqual(shipped.map((t) => t.slug), ["code-reviewer", "daily-briefing", "research-assistant"])
    for (const template of shipped) {
      const result = validateTemplate(template.files)
      assert.deepStrictEqual(result.errors, [], template.slug)
      for (const persona of ["SOUL.md", "IDENTITY.md", "AGENTS.md"]) {
        assert.isTrue(template.files.some((f) => f.path === persona), `${template.slug} has ${persona}`)
      }
      const listing = listingOf(result.manifest!)
      assert.isAbove(listing.description.length, 20, template.slug)
      assert.notStrictEqual(listing.category, "general", template.slug)
    }
  })

  it("has a daily briefing with a cron task in each shape", async () => {
    const briefing = (await Catalog.shipped()).find((t) => t.slug === "daily-briefing")!
    const tasks = validateTemplate(briefing.files).manifest!.tasks!
    assert.deepStrictEqual(tasks.map((t) => typeof t.schedule === "string" ? t.schedule : t.schedule.kind), ["cron", "0 16 * * 5"])
  })
})
