/**
 * Domains: the host names an agent's own app is reached by. A subdomain (`<label>.<APPS_DOMAIN>`) is active at
 * once, its label claimed on a reservation stream in the same append, so that of any number of concurrent requests
 * for one name exactly one wins, across tenants. A custom domain (paid plans) starts `pending_ownership` with a
 * random TXT value to publish at `_service-verify.<domain>`; verify looks it up through the Dns port and, when it is
 * there, activates the domain and claims its name (the first agent to prove it wins; later ones get 409). A
 * background job re-checks pending custom domains with a doubling wait, expires them after DOMAIN_VERIFY_TIMEOUT
 * and removes the domains of agents deleted before a delete released them itself. `routeFor` is what the app router and the TLS ask endpoint use.
 */
import { Dns, type DnsUnavailable } from "@cairn/dns"
import { Domain, Reservation, ValidationFailed } from "@cairn/domain"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import type { Principal } from "../Access.ts"
import * as AgentsTable from "../readmodels/AgentsTable.ts"
import { CommandHandler, decision } from "../CommandHandler.ts"
import { DomainSettings } from "./DomainSettings.ts"
import { now } from "../Now.ts"
import * as DomainsTable from "../readmodels/DomainsTable.ts"
import * as WorkspacesTable from "../readmodels/WorkspacesTable.ts"

/** Where requests for an active domain go: the agent's app on `targetPort`. */
export interface DomainRoute {
  readonly domainId: string
  readonly agentId: string
  /** Lowercase ASCII (punycode) host. */
  readonly host: string
  readonly targetPort: number
  readonly protected: boolean
  /** For the agent's gateway itself (added without a port, `targetPort` is then Domain.gatewayPort), always protected. */
  readonly gateway: boolean
}

/** A domain as the API shows it. */
export interface DomainView {
  readonly id: string
  readonly agentId: string
  readonly subdomain: string | null
  readonly customDomain: string | null
  readonly targetPort: number
  readonly protected: boolean
  readonly status: Domain.Status
  readonly verification?: { readonly type: "TXT"; readonly name: string; readonly value: string }
  readonly createdAt: string
  readonly updatedAt: string
}

export interface VerifyOutcome {
  readonly domain: DomainView
  readonly verified: boolean
  readonly message: string
}

export const domainView = (domain: Domain.Domain): DomainView => ({
  id: domain.domainId,
  agentId: domain.agentId,
  subdomain: domain.kind === "subdomain" ? domain.name : null,
  customDomain: domain.kind === "custom" ? domain.name : null,
  targetPort: domain.targetPort,
  protected: domain.protected,
  status: domain.status,
  ...(domain.kind === "custom" && domain.verificationValue !== undefined
    ? { verification: { type: "TXT" as const, name: Domain.verificationName(domain.name), value: domain.verificationValue } }
    : {}),
  createdAt: domain.createdAt,
  updatedAt: domain.updatedAt
})

/** What `POST …/domains` and `PUT …/domains/{id}` bodies may hold; every field is checked here, not by a schema. */
export interface DomainInput {
  readonly subdomain?: unknown
  readonly customDomain?: unknown
  readonly targetPort?: unknown
  readonly protected?: unknown
}

const given = (value: unknown) => value !== undefined && value !== null

const gatewayUnprotected = "a domain for the agent's gateway (one without targetPort) is always protected"

/** A random TXT value: 128 bits, hex. */
const verificationValue = () =>
  `cairn-verify-${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("")}`

export class Domains extends Context.Service<Domains>()("cairn/Domains", {
  make: Effect.gen(function*() {
    const commands = yield* CommandHandler
    const agents = AgentsTable.queries(yield* SqlClient.SqlClient)
    const dns = yield* Dns
    const settings = yield* DomainSettings
    const sql = yield* SqlClient.SqlClient
    const table = DomainsTable.queries(sql)
    const workspaces = WorkspacesTable.queries(sql)
    const appsDomain = Domain.normalizeAppsDomain(settings.appsDomain)
    const agentsDomain = Domain.normalizeAppsDomain(settings.agentsDomain)

    const loadDomain = (agentId: string, domainId: string) =>
      Effect.gen(function*() {
        const loaded = yield* commands.load(Domain.decider, Domain.stream(agentId))
        const domain = yield* Effect.fromResult(Domain.domainOf(loaded.state, domainId))
        return { loaded, domain }
      })

    const list = Effect.fn("Domains.list")(function*(principal: Principal, agentId: string) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      return (yield* table.ofAgent(agentId)).map(domainView)
    })

    const add = Effect.fn("Domains.add")(function*(principal: Principal, agentId: string, input: DomainInput) {
      const agent = yield* agents.visibleIn(principal.workspaceId, agentId)
      if (given(input.subdomain) === given(input.customDomain)) {
        return yield* new ValidationFailed({ detail: "give exactly one of subdomain and customDomain" })
      }
      const kind: Domain.Kind = given(input.subdomain) ? "subdomain" : "custom"
      const name = yield* Effect.fromResult(
        kind === "subdomain" ? Domain.parseSubdomain(input.subdomain) : Domain.parseCustomDomain(input.customDomain, appsDomain)
      )
      if (kind === "custom" && agentsDomain !== "" && (name === agentsDomain || name.endsWith(`.${agentsDomain}`))) {
        return yield* new ValidationFailed({ detail: `customDomain may not be under ${agentsDomain}: its hosts are the agents' own` })
      }
      // Without a port, the domain is for the agent's gateway (as its own host is), and protected by its token.
      const forGateway = !given(input.targetPort)
      const targetPort = forGateway ? Domain.gatewayPort : yield* Effect.fromResult(Domain.parseTargetPort(input.targetPort))
      const isProtected = input.protected === undefined ? forGateway : yield* Effect.fromResult(Domain.parseProtected(input.protected))
      if (forGateway && !isProtected) return yield* new ValidationFailed({ detail: gatewayUnprotected })
      if (kind === "custom") {
        const workspace = yield* workspaces.byId(agent.workspaceId)
        if (Option.isSome(workspace) && workspace.value.plan === "free") return yield* new Domain.CustomDomainsNotOnFreePlan()
        // A custom domain another agent proved is not added again (its own claim is only made at verify).
        const { state } = yield* commands.load(Reservation.decider, Domain.nameReservation("custom", name))
        if (state._tag === "Held") {
          const own = (yield* table.ofAgent(agentId)).some((d) => d.domainId === state.owner)
          return yield* (own ? new Domain.DomainAlreadyAdded({ name }) : new Domain.DomainAlreadyVerified({ name }))
        }
      }
      const domainId = crypto.randomUUID()
      const at = yield* now
      const command = new Domain.AddDomain({
        domainId,
        agentId,
        workspaceId: agent.workspaceId,
        kind,
        name,
        targetPort,
        protected: isProtected,
        ...(kind === "custom" ? { verificationValue: verificationValue() } : {}),
        limit: settings.maxPerAgent,
        at
      })
      const [{ state }] = yield* commands.executeAll([
        decision(Domain.decider, Domain.stream(agentId), command),
        ...(kind === "subdomain"
          ? [decision(Reservation.decider, Domain.nameReservation("subdomain", name), new Reservation.ClaimReservation({ owner: domainId, at }))]
          : [])
      ], { actor: principal.userId }).pipe(Effect.catchTag("ReservationTaken", () => Effect.fail(new Domain.SubdomainTaken({ name }))))
      return domainView(state.domains.get(domainId)!)
    })

    const update = Effect.fn("Domains.update")(function*(principal: Principal, agentId: string, domainId: string, input: DomainInput) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      if (given(input.subdomain) || given(input.customDomain)) {
        return yield* new ValidationFailed({ detail: "a domain's name cannot be changed: remove it and add another" })
      }
      const targetPort = input.targetPort === undefined ? undefined : yield* Effect.fromResult(Domain.parseTargetPort(input.targetPort))
      const isProtected = input.protected === undefined ? undefined : yield* Effect.fromResult(Domain.parseProtected(input.protected))
      const { loaded, domain } = yield* loadDomain(agentId, domainId)
      if ((targetPort ?? domain.targetPort) === Domain.gatewayPort && !(isProtected ?? domain.protected)) {
        return yield* new ValidationFailed({ detail: gatewayUnprotected })
      }
      const command = new Domain.ChangeDomain({
        domainId,
        agentId,
        ...(targetPort === undefined ? {} : { targetPort }),
        ...(isProtected === undefined ? {} : { protected: isProtected }),
        at: yield* now
      })
      const { state } = yield* commands.execute(Domain.decider, Domain.stream(agentId), command, { actor: principal.userId }, loaded)
      return domainView(state.domains.get(domainId)!)
    })

    /** Removes one domain and gives its name back, in one append. */
    const removeOne = (agentId: string, domainId: string, reason: Domain.RemovalReason, actor: string) =>
      commands.executePlan(Effect.gen(function*() {
        const { loaded, domain } = yield* loadDomain(agentId, domainId)
        const at = yield* now
        return [
          decision(Domain.decider, Domain.stream(agentId), new Domain.RemoveDomain({ domainId, agentId, reason, at }), loaded),
          decision(Reservation.decider, Domain.nameReservation(domain.kind, domain.name), new Reservation.ReleaseReservation({ owner: domainId, at }))
        ]
      }), { actor })

    const remove = Effect.fn("Domains.remove")(function*(principal: Principal, agentId: string, domainId: string) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      yield* removeOne(agentId, domainId, "removed", principal.userId)
    })

    /** Whether the domain's TXT record holds its value now; the resolver's reason when it does not. */
    const lookUp = (domain: Domain.Domain) =>
      dns.txt(Domain.verificationName(domain.name)).pipe(
        Effect.tapError((error: DnsUnavailable) => Effect.logWarning(`DNS lookup of ${error.name} failed: ${error.code}`)),
        Effect.map((answer) => ({ found: answer.records.some((r) => r.trim() === domain.verificationValue), reason: answer.reason }))
      )

    /** Activates the domain and claims its name; another agent's claim is 409. */
    const activate = (agentId: string, domain: Domain.Domain, actor: string) =>
      Effect.gen(function*() {
        const at = yield* now
        const [{ state }] = yield* commands.executeAll([
          decision(Domain.decider, Domain.stream(agentId), new Domain.VerifyDomain({ domainId: domain.domainId, agentId, at })),
          decision(Reservation.decider, Domain.nameReservation("custom", domain.name), new Reservation.ClaimReservation({ owner: domain.domainId, at }))
        ], { actor }).pipe(Effect.catchTag("ReservationTaken", () => Effect.fail(new Domain.DomainAlreadyVerified({ name: domain.name }))))
        return state.domains.get(domain.domainId)!
      })

    const verify = Effect.fn("Domains.verify")(function*(principal: Principal, agentId: string, domainId: string) {
      yield* agents.visibleIn(principal.workspaceId, agentId)
      const { domain } = yield* loadDomain(agentId, domainId)
      if (domain.status === "active") return { domain: domainView(domain), verified: true, message: "Domain is active" } satisfies VerifyOutcome
      const record = Domain.verificationName(domain.name)
      const { found, reason } = yield* lookUp(domain)
      if (!found) {
        return {
          domain: domainView(domain),
          verified: false,
          message: `The TXT record ${record} does not hold the verification value yet${reason === undefined ? "" : ` (${reason})`}: ` +
            "publish it and verify again; DNS changes can take a while to be seen"
        } satisfies VerifyOutcome
      }
      const active = yield* activate(agentId, domain, principal.userId)
      return { domain: domainView(active), verified: true, message: "Domain verified and active" } satisfies VerifyOutcome
    })

    /** The route for a request's Host (any case, maybe with a port): only active domains of live agents. */
    const routeFor = (hostHeader: string): Effect.Effect<Option.Option<DomainRoute>> =>
      Effect.gen(function*() {
        const host = Domain.requestHost(hostHeader)
        if (host === undefined) return Option.none()
        const label = host.endsWith(`.${appsDomain}`) ? host.slice(0, -(appsDomain.length + 1)) : undefined
        const found = label !== undefined && !label.includes(".")
          ? yield* table.active("subdomain", label)
          : yield* table.active("custom", host)
        return Option.map(found, (domain): DomainRoute => ({
          domainId: domain.domainId,
          agentId: domain.agentId,
          host,
          targetPort: domain.targetPort,
          protected: domain.protected,
          gateway: domain.targetPort === Domain.gatewayPort
        }))
      })

    /** The agent whose own host (`<agentId>.<AGENTS_DOMAIN>`, decision 0046) `host` names, by its name alone. */
    const agentOfHost = (host: string): string | undefined => {
      if (agentsDomain === "" || !host.endsWith(`.${agentsDomain}`)) return undefined
      const label = host.slice(0, -(agentsDomain.length + 1))
      return label === "" || label.includes(".") ? undefined : label
    }

    /** The agent of an agent's own host, for a request's Host (any case, maybe with a port): only a live agent's. */
    const agentHostFor = (hostHeader: string): Effect.Effect<Option.Option<string>> =>
      Effect.gen(function*() {
        const host = Domain.requestHost(hostHeader)
        const agentId = host === undefined ? undefined : agentOfHost(host)
        if (agentId === undefined) return Option.none()
        return Option.map(yield* agents.byId(agentId), (agent) => agent.agentId)
      })

    /**
     * The decisions that remove every domain of an agent being deleted and release their names, for the delete's
     * own append: when it answers, the names are free. Planned again with the delete if the domains change meanwhile.
     */
    const releaseAll = (agentId: string, at: string) =>
      Effect.map(commands.load(Domain.decider, Domain.stream(agentId)), (loaded) => [
        decision(Domain.decider, Domain.stream(agentId), new Domain.RemoveAllDomains({ agentId, at }), loaded),
        ...[...loaded.state.domains.values()].map((domain) =>
          decision(Reservation.decider, Domain.nameReservation(domain.kind, domain.name), new Reservation.ReleaseReservation({ owner: domain.domainId, at }))
        )
      ])

    /**
     * Removes every domain of an agent deleted before deletes released them in their own append, and releases their
     * names: the background job's sweep of what older logs left behind. Best effort: failures are logged.
     */
    const afterAgentDeleted = (agentId: string, actor: string) =>
      Effect.gen(function*() {
        const { state } = yield* commands.load(Domain.decider, Domain.stream(agentId))
        for (const domainId of state.domains.keys()) {
          yield* removeOne(agentId, domainId, "agent-deleted", actor).pipe(Effect.catchTag("DomainNotFound", () => Effect.void))
        }
      }).pipe(Effect.catchCause((cause) => Effect.logWarning(`Agent ${agentId}: its domains were not removed yet`, cause)))

    // The background job's per-domain wait: checks of one pending domain are spaced by a doubling interval.
    const backoff = new Map<string, { readonly checks: number; readonly next: number }>()

    /** One pass of the background job: orphans removed, pending custom domains expired or checked when due. */
    const round = Effect.gen(function*() {
      const orphans = yield* table.orphaned
      for (const agentId of new Set(orphans.map((d) => d.agentId))) yield* afterAgentDeleted(agentId, "domains")
      const pending = yield* table.pending
      const nowMs = Date.parse(yield* now)
      const live = new Set(pending.map((d) => d.domainId))
      for (const id of backoff.keys()) if (!live.has(id)) backoff.delete(id)
      for (const domain of pending) {
        const at = new Date(nowMs).toISOString()
        if (nowMs - Date.parse(domain.createdAt) >= settings.verifyTimeoutMs) {
          yield* commands.execute(Domain.decider, Domain.stream(domain.agentId),
            new Domain.ExpireDomain({ domainId: domain.domainId, agentId: domain.agentId, at }), { actor: "domains" })
          backoff.delete(domain.domainId)
          continue
        }
        const wait = backoff.get(domain.domainId)
        if (wait !== undefined && nowMs < wait.next) continue
        const checked = yield* lookUp(domain).pipe(
          Effect.flatMap(({ found }) => found ? Effect.as(activate(domain.agentId, domain, "domains"), true) : Effect.succeed(false)),
          Effect.catchCause((cause) => Effect.as(Effect.logWarning(`Domain ${domain.name}: background verification failed`, cause), false))
        )
        if (checked) {
          backoff.delete(domain.domainId)
          continue
        }
        const checks = (wait?.checks ?? 0) + 1
        const delay = Math.min(settings.maxBackoffMs, settings.checkIntervalMs * 2 ** Math.min(checks - 1, 30))
        backoff.set(domain.domainId, { checks, next: nowMs + delay })
      }
    })

    /** The background job, for as long as the node runs (nothing when DOMAIN_CHECK_INTERVAL is 0). */
    const run = Effect.gen(function*() {
      if (settings.checkIntervalMs <= 0) return
      yield* Effect.sleep(settings.checkIntervalMs).pipe(
        Effect.andThen(round),
        Effect.catchCause((cause) => Effect.logError("Domain check round failed", cause)),
        Effect.forever
      )
    })

    return { appsDomain, agentsDomain, agentOfHost, agentHostFor, list, add, update, remove, verify, routeFor, releaseAll, afterAgentDeleted, round, run }
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
