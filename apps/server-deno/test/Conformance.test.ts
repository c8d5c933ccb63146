/**
 * The HTTP suite every runtime passes (`Conformance.ts`), on Deno: Cairn's web handler under `Deno.serve`, with the
 * Deno the project pins (a devDependency from the npm registry), run from the repository's root as a user runs it.
 */
import { conformanceOn } from "@cairn/server-node/testing"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
conformanceOn(
  "the HTTP suite on Deno",
  join(root, "node_modules/.bin/deno"),
  ["run", "-A", "--unstable-no-legacy-abort", "apps/server-deno/src/main.ts"],
  { cwd: root, embeddedStoreOnly: true }
)
