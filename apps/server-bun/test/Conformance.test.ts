/**
 * The HTTP suite every runtime passes (`Conformance.ts`), on Bun: Cairn's web handler under `Bun.serve`, with the
 * Bun the project pins (a devDependency from the npm registry).
 */
import { conformanceOn } from "@cairn/server-node/testing"
import { fileURLToPath } from "node:url"

const bun = fileURLToPath(new URL("../../../node_modules/.bin/bun", import.meta.url))
conformanceOn("the HTTP suite on Bun", bun, [fileURLToPath(new URL("../src/main.ts", import.meta.url))], { embeddedStoreOnly: true })
