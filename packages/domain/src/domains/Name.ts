/**
 * The rules on what clients send when they add or change a domain, pure. A subdomain is one DNS label under the
 * deployment's apps domain; a custom domain is a host name, parsed with the WHATWG URL parser (which maps case and
 * width and turns an IDN into punycode), at least two labels, no IP literal, labels of at most 63 characters and
 * at most 253 in all, never under the apps domain. No name may contain the service's brand, in any case, inside a
 * label too, nor in an IDN's Unicode form. Ports are 1025–65535 except the gateway's 18789.
 */
import { toUnicode } from "punycode/punycode.es6.js"
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const brand = "cairn"
/** The most domains one agent may have (service interface §8). */
export const maxDomainsPerAgent = 5
/** The port every agent's gateway listens on inside its workspace: never an app's. */
export const gatewayPort = 18789

const invalid = (detail: string) => Result.fail(new ValidationFailed({ detail }))

const ldh = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

const branded = (ascii: string) => {
  if (ascii.includes(brand)) return true
  try {
    return toUnicode(ascii).normalize("NFKC").toLowerCase().includes(brand)
  } catch {
    return false
  }
}

/** The apps domain setting, normalized (lowercase, no trailing dot). */
export const normalizeAppsDomain = (appsDomain: string) => appsDomain.trim().toLowerCase().replace(/\.$/, "")

/** A host through the WHATWG URL parser: lowercase ASCII (punycode), or undefined when it is not a host name. */
const parseHost = (input: string): string | undefined => {
  if (input === "" || /[\s/\\:@?#[\]%]/.test(input)) return undefined
  try {
    const url = new URL(`http://${input}/`)
    return url.hostname
  } catch {
    return undefined
  }
}

/** A subdomain: one DNS label (LDH, or an IDN's punycode), lowercase. */
export const parseSubdomain = (input: unknown): Result.Result<string, ValidationFailed> => {
  if (typeof input !== "string" || input.trim() === "") return invalid("subdomain must be a non-empty string")
  const trimmed = input.trim()
  if (trimmed.toLowerCase().includes(brand)) return invalid(`a domain name may not contain "${brand}"`)
  if (trimmed.includes(".")) return invalid("subdomain must be a single DNS label, without dots")
  const host = parseHost(`${trimmed}.example`)
  const label = host?.slice(0, -".example".length)
  if (label === undefined || label.includes(".") || !ldh.test(label)) {
    return invalid("subdomain must be a DNS label: letters, digits and hyphens, at most 63, not starting or ending with a hyphen")
  }
  if (branded(label)) return invalid(`a domain name may not contain "${brand}"`)
  return Result.succeed(label)
}

/** A custom domain: a host name as its lowercase ASCII (punycode) form, without a trailing dot. */
export const parseCustomDomain = (input: unknown, appsDomain: string): Result.Result<string, ValidationFailed> => {
  if (typeof input !== "string" || input.trim() === "") return invalid("customDomain must be a non-empty string")
  const trimmed = input.trim()
  if (trimmed.toLowerCase().includes(brand)) return invalid(`a domain name may not contain "${brand}"`)
  const parsed = parseHost(trimmed)
  if (parsed === undefined) return invalid("customDomain must be a host name such as app.example.com (no scheme, port or path)")
  const host = parsed.replace(/\.$/, "")
  if (branded(host)) return invalid(`a domain name may not contain "${brand}"`)
  const labels = host.split(".")
  // The URL parser reads a host ending in a number as an IPv4 address; such hosts are never names.
  if (/^[0-9]+$/.test(labels.at(-1) ?? "") || /^0x[0-9a-f]*$/.test(labels.at(-1) ?? "")) {
    return invalid("customDomain must be a host name, not an IP address")
  }
  if (labels.length < 2) return invalid("customDomain must have at least two labels, such as example.com")
  if (host.length > 253) return invalid("customDomain must be at most 253 characters")
  const bad = labels.find((label) => !ldh.test(label))
  if (bad !== undefined) {
    return invalid(bad.length > 63
      ? "customDomain labels must be at most 63 characters"
      : "customDomain labels must be letters, digits and hyphens, not starting or ending with a hyphen")
  }
  const apps = normalizeAppsDomain(appsDomain)
  if (host === apps || host.endsWith(`.${apps}`)) {
    return invalid(`customDomain may not be under ${apps}: add a subdomain instead`)
  }
  return Result.succeed(host)
}

/** A target port: a whole number in 1025–65535, not the gateway's. */
export const parseTargetPort = (input: unknown): Result.Result<number, ValidationFailed> => {
  if (typeof input !== "number" || !Number.isInteger(input) || input < 1025 || input > 65535) {
    return invalid("targetPort must be a whole number from 1025 to 65535")
  }
  if (input === gatewayPort) return invalid(`targetPort ${gatewayPort} is the agent gateway's port`)
  return Result.succeed(input)
}

export const parseProtected = (input: unknown): Result.Result<boolean, ValidationFailed> =>
  typeof input === "boolean" ? Result.succeed(input) : invalid("protected must be true or false")

/**
 * The host a request names (its `Host` header: any case, maybe a port, maybe a trailing dot), as domains are
 * stored; undefined for an IP literal or anything that is not a host name.
 */
export const requestHost = (header: string): string | undefined => {
  let host = header.trim().toLowerCase()
  if (host.startsWith("[")) return undefined
  const colon = host.lastIndexOf(":")
  if (colon !== -1) {
    if (!/^[0-9]*$/.test(host.slice(colon + 1))) return undefined
    host = host.slice(0, colon)
  }
  host = host.replace(/\.$/, "")
  if (host === "" || host.length > 253) return undefined
  return host.split(".").every((label) => ldh.test(label) || /^[a-z0-9_-]{1,63}$/.test(label)) ? host : undefined
}
