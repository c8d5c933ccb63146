import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { applyChannels, parseStatus } from "../src/Channels.ts"
import * as EngineVersions from "../src/EngineVersions.ts"

const pluginPath = (channel: string) => `/engines/2026.9.6/channel-plugins/node_modules/@openclaw/${channel}`

describe("channels in OpenClaw's config", () => {
  it("writes each channel with env SecretRefs, its plugin entry, and the preinstalled plugin's path; keeps everything else", () => {
    const config = { gateway: { port: 1 }, plugins: { load: { paths: ["/mine"] }, entries: { other: { enabled: true } } } }
    const next = applyChannels(config, [
      { channel: "discord", enabled: false, dmPolicy: "pairing", allowFrom: ["42"], tokens: ["botToken"] },
      { channel: "slack", enabled: true, dmPolicy: "open", allowFrom: ["U1", "*"], tokens: ["botToken", "appToken"] }
    ], pluginPath)
    assert.deepStrictEqual(next, {
      gateway: { port: 1 },
      plugins: {
        load: { paths: ["/mine", pluginPath("slack"), pluginPath("discord")] },
        entries: { other: { enabled: true }, slack: { enabled: true }, discord: { enabled: false } }
      },
      channels: {
        slack: {
          enabled: true,
          dmPolicy: "open",
          allowFrom: ["*", "U1"],
          botToken: { source: "env", provider: "default", id: "CHANNEL_SLACK_BOT_TOKEN" },
          appToken: { source: "env", provider: "default", id: "CHANNEL_SLACK_APP_TOKEN" }
        },
        discord: { enabled: false, dmPolicy: "pairing", allowFrom: ["42"], token: { source: "env", provider: "default", id: "CHANNEL_DISCORD_BOT_TOKEN" } }
      }
    })
    assert.deepStrictEqual(config.plugins.load.paths, ["/mine"], "the input is left alone")
  })

  it("removes the channels not listed, their plugin entries and paths (another version's too), and empty blocks", () => {
    const config = {
      channels: { telegram: { enabled: true, botToken: "x" }, defaults: { groupPolicy: "open" } },
      plugins: { load: { paths: ["/engines/2026.9.5/channel-plugins/node_modules/@openclaw/slack"] }, entries: { telegram: { enabled: true } } }
    }
    assert.deepStrictEqual(applyChannels(config, [], pluginPath), { channels: { defaults: { groupPolicy: "open" } } })
  })

  it("reads channels.status: Telegram's tokenStatus, Slack's token sources, WhatsApp not linked", () => {
    const status = parseStatus({
      channels: { telegram: { configured: true, running: true }, slack: { configured: true, running: false, lastError: "boom" } },
      channelAccounts: {
        telegram: [{ accountId: "default", tokenStatus: "available" }],
        slack: [{ accountId: "default", botTokenSource: "config", appTokenSource: "none" }]
      }
    })
    assert.deepStrictEqual(status, [
      { channel: "telegram", configured: true, running: true, tokenStatus: "available" },
      { channel: "slack", configured: true, running: false, tokenStatus: "missing", lastError: "boom" },
      { channel: "discord", configured: false, running: false },
      { channel: "whatsapp", configured: false, running: false, linked: false }
    ])
  })
})

describe("channel plugins installed with the engine", () => {
  it.effect("come with a new install, and are added to an install made without them", () =>
    Effect.gen(function*() {
      const enginesDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "cairn-plugins-"))
      const versions = EngineVersions.make({
        enginesDir,
        npmPath: Path.join(import.meta.dirname, "fixtures", "fake-npm.mjs"),
        npmEnv: { PATH: process.env["PATH"] ?? "" },
        allowlist: ["2026.9.5"]
      })
      const installed = () => ["slack", "discord", "whatsapp"].filter((c) => Fs.existsSync(Path.join(versions.pluginPath("2026.9.5", c), "package.json")))
      yield* versions.ensureInstalled("2026.9.5")
      assert.isTrue(Fs.existsSync(versions.entryFile("2026.9.5")))
      assert.deepStrictEqual(installed(), ["slack", "discord", "whatsapp"])
      assert.strictEqual(Path.dirname(Path.dirname(Path.dirname(Path.dirname(versions.pluginPath("2026.9.5", "slack"))))), Path.join(enginesDir, "2026.9.5"))
      // An install from before channels: the plugins are added at its next use.
      Fs.rmSync(Path.join(enginesDir, "2026.9.5", "channel-plugins"), { recursive: true })
      yield* versions.ensureInstalled("2026.9.5")
      assert.deepStrictEqual(installed(), ["slack", "discord", "whatsapp"])
      assert.deepStrictEqual(Fs.readdirSync(Path.join(enginesDir, "2026.9.5")).filter((name) => name.includes("installing")), [], "no staging left")
      Fs.rmSync(enginesDir, { recursive: true, force: true })
    }))
})
