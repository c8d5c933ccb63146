import { PgDatabase } from "@cairn/event-store-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Opens PGlite in `dataDir` (from `templates` when given), writes a row, and reads back what the directory holds. */
const roundTrip = (dataDir: string, templates: string | undefined) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS notes (body text NOT NULL)`
    yield* sql`INSERT INTO notes (body) VALUES (${dataDir})`
    return (yield* sql<{ body: string }>`SELECT body FROM notes`).map((row) => row.body)
  }).pipe(Effect.provide(PgDatabase.layerPglite(dataDir, templates)), Effect.scoped)

describe("new embedded databases from a template", () => {
  it.effect("the first initialises the template, the next is a copy of it, and each is a database of its own", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "cairn-pglite-template-"))
      try {
        const templates = join(root, "templates")
        const first = yield* roundTrip(join(root, "a", "pg"), templates)
        assert.deepStrictEqual(readdirSync(templates).filter((name) => name.startsWith("pglite-")).length, 1)
        const template = join(templates, readdirSync(templates)[0]!)
        assert.isTrue(existsSync(join(template, "PG_VERSION")))
        const second = yield* roundTrip(join(root, "b", "pg"), templates)
        // Only what initdb made is in the template: nothing either database wrote.
        assert.deepStrictEqual(first, [join(root, "a", "pg")])
        assert.deepStrictEqual(second, [join(root, "b", "pg")])
        // An existing database is opened as it is.
        assert.deepStrictEqual(yield* roundTrip(join(root, "a", "pg"), templates), [join(root, "a", "pg"), join(root, "a", "pg")])
        // No scratch directories are left behind.
        assert.deepStrictEqual(readdirSync(root).sort(), ["a", "b", "templates"])
        assert.deepStrictEqual(readdirSync(templates).length, 1)
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }), { timeout: 300_000 })

  it.effect("a template directory that cannot be made leaves the initialisation to PGlite", () =>
    Effect.gen(function*() {
      const root = mkdtempSync(join(tmpdir(), "cairn-pglite-template-"))
      try {
        const blocked = join(root, "a-file")
        writeFileSync(blocked, "not a directory")
        assert.deepStrictEqual(yield* roundTrip(join(root, "c", "pg"), blocked), [join(root, "c", "pg")])
        assert.deepStrictEqual(readdirSync(root).sort(), ["a-file", "c"])
      } finally {
        rmSync(root, { recursive: true, force: true })
      }
    }), { timeout: 300_000 })
})
