/**
 * An agent's messaging channels (Telegram, Slack, Discord, WhatsApp): list, configure, remove. Tokens are checked
 * (shape 400, format 500 `Configuration failed`, as the spec has it) and sealed by the SecretVault before anything
 * is decided; events carry only their ciphertext and a hint. The gateway's owner then hands them to the engine
 * (`Gateway.applyChannels`: its config written, the tokens in the gateway's environment, ChannelDelivery.ts) and
 * restarts a running gateway, so the restart is one of the agent's own, recorded as any other. An engine that refuses the
 * configuration leaves the channel as it was (the change is reverted in the log) and answers `Configuration failed`.
 * Channels are a paid feature: the free plan gets 403. A channel in pairing mode answers unknown senders with a
 * code, which the owner approves here (the gateway is asked; each approval goes on the agent's trail). WhatsApp
 * takes no token: it is linked to a phone by a QR code the gateway gets from WhatsApp, handed out here.
 */
import { AgentEngine, type AgentNotProvisioned, type ChannelsUnavailable, type WhatsAppLink, type WhatsAppLinkStatus } from "@cairn/agent-engine"
import { Agent, AgentChats, Channel, ChannelPairing } from "@cairn/domain"
import { Context, Effect, Layer, Option, type Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { Gateway } from "../gateway/Gateway.ts"
import * as ChannelDelivery from "../gateway/ChannelDelivery.ts"
import { CommandHandler } from "../CommandHandler.ts"
import { now } from "../Now.ts"
import { ChannelsTable, WorkspacesTable } from "../readmodels/index.ts"
import { SecretVault } from "../secrets/SecretVault.ts"
import * as QrText from "./QrText.ts"

interface TokenView {
  readonly set: boolean
  readonly hint: string | null
}

/** `GET …/channels`: every channel, configured or not; a token only as whether it is set and its hint. */
export interface ChannelsView {
  readonly telegram: ChannelCommon & { readonly botTokenSet: boolean; readonly botTokenHint: string | null }
  readonly slack: ChannelCommon & {
    readonly botTokenSet: boolean
    readonly botTokenHint: string | null
    readonly appTokenSet: boolean
    readonly appTokenHint: string | null
  }
  readonly discord: ChannelCommon & { readonly botTokenSet: boolean; readonly botTokenHint: string | null }
  readonly whatsapp: ChannelCommon & { readonly linked: boolean }
}

/** `…/channels/whatsapp/link`: where linking the agent's WhatsApp stands, with the code to scan while it waits. */
export interface WhatsAppLinkView {
  readonly status: Exclude<WhatsAppLinkStatus, "failed">
  readonly message: string
  /** The QR code as text (QrText.ts), while `waiting` with a code. */
  readonly qr: string | null
  /** The same code as a PNG data URL. */
  readonly qrDataUrl: string | null
}

interface ChannelCommon {
  readonly configured: boolean
  readonly enabled: boolean
  readonly dmPolicy: Channel.DmPolicy | null
  readonly allowFrom: ReadonlyArray<string>
}

const label: Readonly<Record<Channel.ChannelName, string>> = { telegram: "Telegram", slack: "Slack", discord: "Discord", whatsapp: "WhatsApp" }

export class Channels extends Context.Service<Channels>()("cairn/Channels", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const vault = yield* SecretVault
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const gateway = yield* Gateway
    const engine = yield* AgentEngine
    const sql = yield* SqlClient.SqlClient
    const table = ChannelsTable.queries(sql)
    const workspaces = WorkspacesTable.queries(sql)

    const channelOf = (name: string) => Effect.fromResult(Channel.requireChannel(name))

    /** The agent (404 otherwise) on a plan with channels (403 otherwise). */
    const payingAgent = (principal: Principal, agentId: string) =>
      Effect.gen(function*() {
        const agent = yield* agents.visibleIn(principal.workspaceId, agentId)
        const workspace = yield* workspaces.byId(principal.workspaceId)
        if (Option.isSome(workspace) && workspace.value.plan === "free") return yield* new Channel.ChannelsNotOnPlan()
        return agent
      })

    const list = Effect.fn("Channels.list")(function*(principal: Principal, agentId: string) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      const rows = new Map((yield* table.ofAgent(agentId)).map((row) => [row.channel, row]))
      const common = (channel: Channel.ChannelName): ChannelCommon => {
        const row = rows.get(channel)
        return { configured: row !== undefined, enabled: row?.enabled ?? false, dmPolicy: row?.dmPolicy ?? null, allowFrom: row?.allowFrom ?? [] }
      }
      const token = (channel: Channel.ChannelName, kind: Channel.TokenKind): TokenView => {
        const row = rows.get(channel)
        return kind === "botToken"
          ? { set: row?.botTokenSet ?? false, hint: row?.botTokenHint ?? null }
          : { set: row?.appTokenSet ?? false, hint: row?.appTokenHint ?? null }
      }
      const bot = (channel: Channel.ChannelName) => ({ botTokenSet: token(channel, "botToken").set, botTokenHint: token(channel, "botToken").hint })
      // Linked is the engine's to say (a phone scanned the QR code inside the agent); a gateway not running says no.
      const linked = rows.has("whatsapp")
        ? yield* engine.channelStatus(agentId).pipe(
          Effect.map((statuses) => statuses.find((s) => s.channel === "whatsapp")?.linked === true),
          Effect.orElseSucceed(() => false)
        )
        : false
      return {
        telegram: { ...common("telegram"), ...bot("telegram") },
        slack: { ...common("slack"), ...bot("slack"), appTokenSet: token("slack", "appToken").set, appTokenHint: token("slack", "appToken").hint },
        discord: { ...common("discord"), ...bot("discord") },
        whatsapp: { ...common("whatsapp"), linked }
      } satisfies ChannelsView
    })

    /** Seals a token for the agent's channel under a sealing id of its own. */
    const seal = (workspaceId: string, agentId: string, channel: Channel.ChannelName, kind: Channel.TokenKind, token: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const sealingId = `channel:${agentId}:${channel}:${kind}:${crypto.randomUUID()}`
        const sealed = yield* vault.seal(workspaceId, sealingId, ChannelDelivery.tokenVersion, token)
        const hint = Channel.hintOf(token)
        return { sealingId, sealed, ...(hint === undefined ? {} : { hint }) } satisfies Channel.SealedToken
      })

    const configure = Effect.fn("Channels.configure")(function*(principal: Principal, agentId: string, channelName: string, body: unknown) {
      const channel = yield* channelOf(channelName)
      yield* payingAgent(principal, agentId)
      const input = yield* Effect.fromResult(Channel.parseConfigureInput(channel, body))
      yield* Effect.fromResult(Channel.checkTokenFormats(channel, input))
      const { workspaceId, userId } = principal
      const tokens: { botToken?: Channel.SealedToken; appToken?: Channel.SealedToken } = {}
      for (const kind of Channel.tokenKinds[channel]) {
        const token = input[kind]
        if (token !== undefined) tokens[kind] = yield* seal(workspaceId, agentId, channel, kind, token)
      }
      const loaded = yield* commands.load(Channel.decider, Channel.stream(agentId))
      const previous = loaded.state.channels.get(channel)
      const at = yield* now
      yield* commands.execute(Channel.decider, Channel.stream(agentId), new Channel.ConfigureChannel({
        agentId,
        workspaceId,
        channel,
        ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
        ...(input.dmPolicy === undefined ? {} : { dmPolicy: input.dmPolicy }),
        ...(input.allowFrom === undefined ? {} : { allowFrom: input.allowFrom }),
        ...tokens,
        at
      }), { actor: userId }, loaded)
      yield* gateway.applyChannels(principal, agentId).pipe(
        Effect.catch((error) =>
          Effect.gen(function*() {
            yield* Effect.logWarning(`Agent ${agentId}: the engine refused the ${channel} configuration; reverting it`, error)
            yield* commands.execute(Channel.decider, Channel.stream(agentId), new Channel.RevertChannel({
              agentId,
              workspaceId,
              channel,
              ...(previous === undefined ? {} : { previous }),
              at: yield* now
            }), { actor: "engine" }).pipe(Effect.ignore)
            yield* gateway.applyChannels(principal, agentId).pipe(Effect.ignore)
            return yield* new Channel.ConfigurationFailed({ channel, reason: "the engine did not take the configuration" })
          })
        )
      )
      const enabled = input.enabled ?? true
      return `${label[channel]} ${previous === undefined ? "configured" : "updated"}${enabled ? "" : " (disabled)"}`
    })

    const remove = Effect.fn("Channels.remove")(function*(principal: Principal, agentId: string, channelName: string) {
      const channel = yield* channelOf(channelName)
      yield* agents.visibleIn(principal.workspaceId, agentId)
      const { events } = yield* commands.execute(Channel.decider, Channel.stream(agentId), new Channel.RemoveChannel({
        agentId,
        channel,
        at: yield* now
      }), { actor: principal.userId })
      if (events.length === 0) return `${label[channel]} was not configured`
      // The log already says removed: the next start applies it whatever happens here.
      yield* gateway.applyChannels(principal, agentId).pipe(
        Effect.tapError((error) => Effect.logWarning(`Agent ${agentId}: the engine did not drop ${channel}`, error)),
        Effect.mapError(() => new Channel.RemovalFailed({ channel }))
      )
      return `${label[channel]} removed`
    })

    /**
     * The channel, checked as far as Cairn can before the gateway is asked about its pairing requests: the agent
     * (404), the channel configured (409), enabled (409) and in pairing mode (409), then its gateway up (waited for
     * while it starts: 503 after that; 409 when stopped).
     */
    const pairingChannel = (principal: Principal, agentId: string, channelName: string) =>
      Effect.gen(function*() {
        const channel = yield* channelOf(channelName)
        const row = yield* enabledChannel(principal, agentId, channel)
        if (row.dmPolicy !== "pairing") return yield* new ChannelPairing.ChannelNotPairing({ channel })
        return channel
      })

    /** The agent's channel as configured: the agent (404), the channel configured (409) and enabled (409). */
    const enabledChannel = (principal: Principal, agentId: string, channel: Channel.ChannelName) =>
      Effect.gen(function*() {
        yield* agents.visibleIn(principal.workspaceId, agentId)
        const row = (yield* table.ofAgent(agentId)).find((configured) => configured.channel === channel)
        if (row === undefined) return yield* new ChannelPairing.ChannelNotConfigured({ channel })
        if (!row.enabled) return yield* new ChannelPairing.ChannelDisabled({ channel })
        return row
      })

    const whenRunning = (agentId: string) =>
      Effect.gen(function*() {
        yield* gateway.ready(agentId)
        if (!(yield* gateway.isRunning(agentId))) return yield* new AgentChats.AgentNotRunning({ agentId })
      })

    const engineFailure = (agentId: string) => (error: ChannelsUnavailable | AgentNotProvisioned): Effect.Effect<never, Agent.CliError> =>
      Effect.andThen(Effect.logWarning(`Agent ${agentId}: the engine could not answer about channel pairing`, error), Effect.fail(new Agent.CliError({ agentId })))

    /** The senders waiting on the channel for the owner's approval, with the codes the channel sent them. */
    const pairingRequests = Effect.fn("Channels.pairingRequests")(function*(principal: Principal, agentId: string, channelName: string) {
      const channel = yield* pairingChannel(principal, agentId, channelName)
      yield* whenRunning(agentId)
      return yield* engine.listChannelPairing(agentId, channel).pipe(Effect.catch(engineFailure(agentId)))
    })

    /**
     * Approves the sender who got `code` on the channel: they may write to the agent from now on. Recorded on the
     * agent's trail (stream `pairings-<agentId>`: the channel, the sender's id, who approved), never what they wrote.
     */
    const approvePairing = Effect.fn("Channels.approvePairing")(function*(principal: Principal, agentId: string, channelName: string, code: string) {
      const channel = yield* pairingChannel(principal, agentId, channelName)
      const checked = yield* Effect.fromResult(ChannelPairing.requirePairingCode(code))
      yield* whenRunning(agentId)
      const { senderId } = yield* engine.approveChannelPairing(agentId, channel, checked).pipe(
        Effect.catch((error): Effect.Effect<never, ChannelPairing.PairingRequestNotFound | Agent.CliError> =>
          error._tag === "UnknownPairingCode"
            ? Effect.fail(new ChannelPairing.PairingRequestNotFound({ channel }))
            : engineFailure(agentId)(error)
        )
      )
      const at = yield* now
      yield* commands.record(
        ChannelPairing.decider,
        ChannelPairing.stream(agentId),
        new ChannelPairing.RecordPairingApproval({ agentId, workspaceId: principal.workspaceId, channel, senderId, at }),
        { actor: principal.userId }
      )
      return `${label[channel]} sender ${senderId} approved`
    })

    /**
     * The agent's WhatsApp channel, checked as far as Cairn can before its gateway is asked to link it: the agent
     * (404), the channel configured (409) and enabled (409), then its gateway up (waited for while it starts or
     * wakes: 503 after that; 409 when stopped).
     */
    const whatsAppChannel = (principal: Principal, agentId: string) =>
      Effect.andThen(enabledChannel(principal, agentId, "whatsapp"), whenRunning(agentId))

    /** What the engine says of a link, for the caller: the QR code also as text; a failure is 502 with its reason. */
    const linkView = (link: WhatsAppLink): Effect.Effect<WhatsAppLinkView, ChannelPairing.WhatsAppLinkFailed> =>
      link.status === "failed"
        ? Effect.fail(new ChannelPairing.WhatsAppLinkFailed({ reason: link.message }))
        : Effect.succeed({
          status: link.status,
          message: link.message,
          qr: link.qrDataUrl === undefined ? null : QrText.qrText(link.qrDataUrl) ?? null,
          qrDataUrl: link.qrDataUrl ?? null
        })

    const linkUnavailable = (error: ChannelsUnavailable | AgentNotProvisioned) =>
      Effect.andThen(
        Effect.logWarning("The engine could not answer about a WhatsApp link", error),
        Effect.fail(new ChannelPairing.WhatsAppLinkFailed({ reason: error._tag === "ChannelsUnavailable" ? error.detail : "the agent's gateway is gone" }))
      )

    /** A link made: on the agent's trail once for each link begun through Cairn (the pairings log decides). */
    const recordLinked = (principal: Principal, agentId: string) =>
      Effect.gen(function*() {
        const command = new ChannelPairing.RecordWhatsAppLinked({ agentId, workspaceId: principal.workspaceId, at: yield* now })
        yield* commands.execute(ChannelPairing.decider, ChannelPairing.stream(agentId), command, { actor: principal.userId })
      })

    /**
     * Begins linking the agent's WhatsApp to a phone: the QR code to scan (`waiting`; the begun link goes on the
     * agent's trail), or `linked` when a phone is linked already (`force` drops that link for a new code).
     */
    const startWhatsAppLink = Effect.fn("Channels.startWhatsAppLink")(function*(principal: Principal, agentId: string, force: boolean) {
      yield* whatsAppChannel(principal, agentId)
      const view = yield* engine.startWhatsAppLink(agentId, { force }).pipe(Effect.catch(linkUnavailable), Effect.flatMap(linkView))
      if (view.status === "waiting") {
        yield* commands.record(
          ChannelPairing.decider,
          ChannelPairing.stream(agentId),
          new ChannelPairing.RecordWhatsAppLinkStarted({ agentId, workspaceId: principal.workspaceId, force, at: yield* now }),
          { actor: principal.userId }
        )
      }
      if (view.status === "linked") yield* recordLinked(principal, agentId)
      return view
    })

    /** Where the link stands, without waiting: the current code while it waits, `linked` once scanned, or its end. */
    const whatsAppLink = Effect.fn("Channels.whatsAppLink")(function*(principal: Principal, agentId: string) {
      yield* whatsAppChannel(principal, agentId)
      const view = yield* engine.whatsAppLink(agentId).pipe(Effect.catch(linkUnavailable), Effect.flatMap(linkView))
      if (view.status === "linked") yield* recordLinked(principal, agentId)
      return view
    })

    return { list, configure, remove, pairingRequests, approvePairing, startWhatsAppLink, whatsAppLink }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

