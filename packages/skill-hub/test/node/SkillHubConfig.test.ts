import { SkillHub } from "@cairn/skill-hub"
import { SkillHubConfig } from "@cairn/skill-hub/node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const registryWith = (env: Record<string, string>) =>
  Effect.gen(function*() {
    return (yield* SkillHub).registry
  }).pipe(
    Effect.provide(SkillHubConfig.layer({ dataDir: "/var/lib/cairn" }).pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
    ))
  )

describe("SkillHubConfig", () => {
  it.effect("CLAWHUB_URL picks the ClawHub registry at that URL", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* registryWith({ CLAWHUB_URL: "https://hub.example/", CLAWHUB_TOKEN: "clh_x" }), "https://hub.example")
    }))

  it.effect("otherwise the local catalog in HUB_DIR, or in <dataDir>/hub", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* registryWith({ HUB_DIR: "/srv/skills" }), pathToFileURL("/srv/skills").href)
      assert.strictEqual(yield* registryWith({}), pathToFileURL(join("/var/lib/cairn", "hub")).href)
      assert.strictEqual(yield* registryWith({ CLAWHUB_URL: " " }), pathToFileURL(join("/var/lib/cairn", "hub")).href)
    }))
})
