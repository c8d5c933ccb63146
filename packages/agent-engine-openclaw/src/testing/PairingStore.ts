/**
 * OpenClaw's channel pairing store, driven from a test as a channel drives it: no Telegram DM can arrive offline, so
 * a test makes a sender's request with OpenClaw's own `upsertChannelPairingRequest` (the code is OpenClaw's choice),
 * and reads the allow store with its `readChannelAllowFromStore`. Each runs in a Node process of its own, on the
 * agent's state database (`<home>/.openclaw/state/openclaw.sqlite`), with the home variables the gateway has.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** The engine's module holding OpenClaw's pairing store, and the name it exports `fn` under (bundles rename exports). */
const moduleExporting = (distDir: string, fn: string) => {
  for (const file of Fs.readdirSync(distDir)) {
    if (!file.startsWith("pairing-store-") || !file.endsWith(".mjs")) continue
    const text = Fs.readFileSync(Path.join(distDir, file), "utf8")
    const exported = new RegExp(`\\b${fn} as (\\w+)\\b`).exec(text)
    if (text.includes(`function ${fn}(`) && exported !== null) return { file: Path.join(distDir, file), name: exported[1]! }
  }
  throw new Error(`no pairing store exporting ${fn} in ${distDir}`)
}

/**
 * Runs one of the pairing store's functions of OpenClaw `version` (installed under `enginesDir`) on the agent's state
 * and returns its JSON result; `null` arguments are passed as `undefined` (OpenClaw's defaults).
 */
export const pairingStoreCall = (enginesDir: string, version: string, home: string, fn: string, args: ReadonlyArray<unknown>): unknown => {
  const { file, name } = moduleExporting(Path.join(enginesDir, version, "node_modules", "openclaw", "dist"), fn)
  const script = `import(${JSON.stringify(file)}).then(async (m) => ` +
    `process.stdout.write(JSON.stringify(await m.${name}(...${JSON.stringify(args)}.map((a) => a ?? undefined)) ?? null)))`
  const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    env: { PATH: process.env["PATH"] ?? "", HOME: home, OPENCLAW_HOME: home, OPENCLAW_CONFIG_PATH: Path.join(home, ".openclaw", "openclaw.json") },
    encoding: "utf8",
    timeout: 60_000
  })
  return JSON.parse(stdout)
}

/** A sender writes to the agent's bot on `channel`: their request is stored, and the code OpenClaw answers with. */
export const requestPairing = (enginesDir: string, version: string, home: string, channel: string, senderId: string) =>
  pairingStoreCall(enginesDir, version, home, "upsertChannelPairingRequest", [{ channel, id: senderId, accountId: "default" }]) as {
    readonly code: string
    readonly created: boolean
  }

/** The senders OpenClaw lets write on `channel` besides the configured `allowFrom` (its allow store). */
export const allowedSenders = (enginesDir: string, version: string, home: string, channel: string) =>
  pairingStoreCall(enginesDir, version, home, "readChannelAllowFromStore", [channel, null, "default"]) as ReadonlyArray<string>

/** The channel's pending requests as OpenClaw's store holds them. */
export const pendingPairing = (enginesDir: string, version: string, home: string, channel: string) =>
  pairingStoreCall(enginesDir, version, home, "listChannelPairingRequests", [channel]) as ReadonlyArray<{ readonly id: string; readonly code: string }>
