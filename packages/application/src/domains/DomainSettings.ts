/**
 * How domains behave in this deployment. The runtime sets them from the environment (APPS_DOMAIN, AGENTS_DOMAIN,
 * DOMAIN_VERIFY_TIMEOUT, DOMAIN_CHECK_INTERVAL; docs/operations.md, "Domains, DNS and TLS"); these defaults apply
 * otherwise.
 */
import { Domain } from "@cairn/domain"
import { Context } from "effect"

export interface DomainSettingValues {
  /** Subdomains are `<label>.<appsDomain>`; custom domains may not be under it. */
  readonly appsDomain: string
  /** Each agent's own host is `<agentId>.<agentsDomain>` (decision 0046); custom domains may not be under it either. */
  readonly agentsDomain: string
  /** A custom domain whose TXT record is not seen within this long after it was added expires (7 days). */
  readonly verifyTimeoutMs: number
  /** How often the background job looks at pending custom domains (60 s; 0 turns the job off). */
  readonly checkIntervalMs: number
  /** The longest wait between two checks of one pending domain: the wait doubles from the interval up to this (1 h). */
  readonly maxBackoffMs: number
  /** Domains per agent (5, service interface §8). */
  readonly maxPerAgent: number
}

export const defaultDomainSettings: DomainSettingValues = {
  appsDomain: "apps.localhost",
  agentsDomain: "agents.localhost",
  verifyTimeoutMs: 7 * 24 * 60 * 60 * 1000,
  checkIntervalMs: 60_000,
  maxBackoffMs: 60 * 60 * 1000,
  maxPerAgent: Domain.maxDomainsPerAgent
}

export const DomainSettings = Context.Reference<DomainSettingValues>("cairn/DomainSettings", { defaultValue: () => defaultDomainSettings })
