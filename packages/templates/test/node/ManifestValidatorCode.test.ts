import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { generate, generatedFile } from "../../src/node/ManifestValidatorCode.ts"

describe("ManifestValidator.generated.js", () => {
  it("is what ajv compiles from ManifestSchema.ts now (else: npm run generate:validator -w @cairn/templates)", () => {
    assert.strictEqual(readFileSync(generatedFile, "utf8"), generate())
  })
})
