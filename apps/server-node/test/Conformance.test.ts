/** The HTTP suite every runtime passes (`Conformance.ts`), on the Node server: the reference the others match. */
import { fileURLToPath } from "node:url"
import { conformanceOn } from "../src/testing/index.ts"

conformanceOn("the HTTP suite on Node's server", process.execPath, [fileURLToPath(new URL("../src/main.ts", import.meta.url))])
