/**
 * Which SkillHub adapter a server uses, from its configuration: `CLAWHUB_URL` set → ClawHubRegistry at that URL
 * (with `CLAWHUB_TOKEN` as its bearer token when set); otherwise → LocalCatalog on `HUB_DIR`, or `<dataDir>/hub`,
 * which works offline and is empty until someone lays skills out in it (LocalCatalog.ts has the format).
 */
import { Config, Effect, Layer, Option } from "effect"
import { join } from "node:path"
import * as ClawHubRegistry from "../ClawHubRegistry.ts"
import * as LocalCatalog from "./LocalCatalog.ts"

export interface Options {
  readonly dataDir: string
}

/** Where the offline catalog lives when `HUB_DIR` is not set. */
export const catalogDir = (dataDir: string) => join(dataDir, "hub")

const nonEmpty = (value: Option.Option<string>) => Option.filter(Option.map(value, (text) => text.trim()), (text) => text !== "")

export const layer = (options: Options) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const url = nonEmpty(yield* Config.option(Config.String("CLAWHUB_URL")))
      if (Option.isSome(url)) {
        const token = yield* Config.option(Config.Redacted("CLAWHUB_TOKEN"))
        return ClawHubRegistry.layer({ url: url.value, token: Option.getOrUndefined(token) })
      }
      const dir = nonEmpty(yield* Config.option(Config.String("HUB_DIR")))
      return LocalCatalog.layer({ dir: Option.getOrElse(dir, () => catalogDir(options.dataDir)) })
    })
  )
