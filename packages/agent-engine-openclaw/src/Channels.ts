/**
 * An agent's messaging channels in OpenClaw's config (shared/docs/reference/openclaw-features.md §10): each channel's
 * block under `channels.<id>` with its tokens as env SecretRefs (`{source:"env",provider:"default",id}`: the token
 * itself is only ever in the gateway's environment, never on disk), its plugin enabled under `plugins.entries.<id>`,
 * and for Slack, Discord and WhatsApp, which OpenClaw would fetch from npm on first use, `plugins.load.paths` to the
 * copy installed with the engine version (EngineVersions.ts): a gateway with Slack configured starts offline. Cairn
 * owns these keys for the four channels: settings not listed are removed with their plugin entries and paths.
 * Also reads `channels.status` answers.
 */
import { EngineChannels } from "@cairn/agent-engine"
import type { Channel } from "@cairn/domain"

type Json = Record<string, unknown>
const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

export const channelIds: ReadonlyArray<Channel.ChannelName> = ["telegram", "slack", "discord", "whatsapp"]

/** Channels whose plugin OpenClaw does not bundle: installed from npm with each engine version. */
export const externalPlugins: ReadonlyArray<Channel.ChannelName> = ["slack", "discord", "whatsapp"]

/** The config key each token is written under. */
const tokenKey = (channel: Channel.ChannelName, kind: Channel.TokenKind) =>
  channel === "discord" && kind === "botToken" ? "token" : kind

const envRef = (id: string) => ({ source: "env", provider: "default", id })

/** OpenClaw's `open` DM policy needs `"*"` in `allowFrom`; `pairing` admits the listed senders without a code. */
const allowFromOf = (spec: EngineChannels.ChannelSpec) =>
  spec.dmPolicy === "open" ? ["*", ...spec.allowFrom.filter((entry) => entry !== "*")] : [...spec.allowFrom]

/**
 * `config` with the four channels made exactly `specs`. `pluginPath(channel)` is where the channel's external
 * plugin is installed (undefined when it is not: the key is then left out, and OpenClaw would need npm).
 */
export const applyChannels = (
  config: Json,
  specs: ReadonlyArray<EngineChannels.ChannelSpec>,
  pluginPath: (channel: Channel.ChannelName) => string | undefined
): Json => {
  const result = structuredClone(config)
  const channels: Json = isRecord(result["channels"]) ? result["channels"] : {}
  const plugins: Json = isRecord(result["plugins"]) ? result["plugins"] : {}
  const entries: Json = isRecord(plugins["entries"]) ? plugins["entries"] : {}
  const load: Json = isRecord(plugins["load"]) ? plugins["load"] : {}
  const ourPaths = new Set(externalPlugins.flatMap((channel) => pluginPath(channel) ?? []))
  // Paths to other copies of these plugins (another engine version's) go too: only the current version's may load.
  const isChannelPluginPath = (path: unknown) =>
    typeof path === "string" && (ourPaths.has(path) || externalPlugins.some((channel) => path.replaceAll("\\", "/").endsWith(`/@openclaw/${channel}`)))
  const paths: Array<unknown> = (Array.isArray(load["paths"]) ? load["paths"] : []).filter((path) => !isChannelPluginPath(path))

  for (const channel of channelIds) {
    const spec = specs.find((s) => s.channel === channel)
    if (spec === undefined) {
      delete channels[channel]
      delete entries[channel]
      continue
    }
    const block: Json = {
      enabled: spec.enabled,
      dmPolicy: spec.dmPolicy,
      allowFrom: allowFromOf(spec)
    }
    for (const kind of spec.tokens) block[tokenKey(channel, kind)] = envRef(EngineChannels.tokenVariable(channel, kind))
    channels[channel] = block
    entries[channel] = { ...(isRecord(entries[channel]) ? entries[channel] : {}), enabled: spec.enabled }
    const path = externalPlugins.includes(channel) ? pluginPath(channel) : undefined
    if (path !== undefined && !paths.includes(path)) paths.push(path)
  }

  const setOrDrop = (parent: Json, key: string, value: Json | Array<unknown>) => {
    if ((Array.isArray(value) ? value.length : Object.keys(value).length) === 0) delete parent[key]
    else parent[key] = value
  }
  setOrDrop(load, "paths", paths)
  setOrDrop(plugins, "load", load)
  setOrDrop(plugins, "entries", entries)
  setOrDrop(result, "plugins", plugins)
  setOrDrop(result, "channels", channels)
  return result
}

/** Whether any of the specs runs a channel transport (which can make a gateway slow to stop: see `stopGrace`). */
export const anyEnabled = (specs: ReadonlyArray<EngineChannels.ChannelSpec>) => specs.some((spec) => spec.enabled)

/**
 * The four channels as a `channels.status` answer reports them: `channels.<id>` (configured, running, lastError)
 * and `channelAccounts.<id>[]` (tokenStatus, linked, connected). Channels the answer does not mention are reported
 * not configured.
 */
export const parseStatus = (answer: unknown): ReadonlyArray<EngineChannels.ChannelStatus> => {
  const root = isRecord(answer) ? answer : {}
  const channels = isRecord(root["channels"]) ? root["channels"] : {}
  const accounts = isRecord(root["channelAccounts"]) ? root["channelAccounts"] : {}
  return channelIds.map((channel): EngineChannels.ChannelStatus => {
    const summary = isRecord(channels[channel]) ? channels[channel] : {}
    const list = Array.isArray(accounts[channel]) ? accounts[channel].filter(isRecord) : []
    const account = list.find((a) => a["accountId"] === "default") ?? list[0] ?? {}
    // Telegram says `tokenStatus`; Slack only where each token came from (`botTokenSource`, `appTokenSource`:
    // "config" for a resolved SecretRef, "none" when missing) [observed, 2026.9.6].
    const sources = ["botTokenSource", "appTokenSource"].flatMap((key) => typeof account[key] === "string" ? [account[key]] : [])
    const tokenStatus = typeof account["tokenStatus"] === "string"
      ? account["tokenStatus"]
      : sources.length === 0 ? undefined : sources.every((source) => source !== "none") ? "available" : "missing"
    const lastError = typeof summary["lastError"] === "string" ? summary["lastError"] : typeof account["lastError"] === "string" ? account["lastError"] : undefined
    const linked = typeof account["linked"] === "boolean" ? account["linked"] : typeof summary["linked"] === "boolean" ? summary["linked"] : undefined
    return {
      channel,
      configured: summary["configured"] === true || account["configured"] === true,
      running: summary["running"] === true || account["running"] === true,
      ...(tokenStatus === undefined ? {} : { tokenStatus }),
      ...(channel === "whatsapp" ? { linked: linked ?? false } : {}),
      ...(lastError === undefined ? {} : { lastError })
    }
  })
}
