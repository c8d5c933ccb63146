/**
 * A template's slug: its name in URLs (`GET /v0/templates/{slug}`), unique across the catalog. Lowercase letters
 * and digits in words joined by single hyphens, at most 100 characters (Pinata's manifest rule), given or made
 * from the template's name.
 */
import { Result } from "effect"
import { ValidationFailed } from "../ValidationFailed.ts"

export const maxSlugLength = 100
const pattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/

/** Words the routes use beside slugs, so a slug never reads like one of them. */
export const reservedSlugs: ReadonlySet<string> = new Set(["id", "validate", "branches", "refs", "schema"])

/** `My Agent! (v2)` → `my-agent-v2`; accents dropped, anything else a separator. A name with no letters or digits gives `template`. */
export const slugify = (name: string): string => {
  const words = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().split(/[^a-z0-9]+/).filter((w) => w !== "")
  let slug = ""
  for (const word of words) {
    const next = slug === "" ? word : `${slug}-${word}`
    if (next.length > maxSlugLength) break
    slug = next
  }
  if (slug === "") slug = words[0]?.slice(0, maxSlugLength) ?? ""
  return slug === "" || reservedSlugs.has(slug) ? `${slug === "" ? "" : `${slug}-`}template` : slug
}

export const validateSlug = (slug: unknown): Result.Result<string, ValidationFailed> =>
  typeof slug !== "string" || slug === ""
    ? Result.fail(new ValidationFailed({ detail: "slug must be a non-empty string" }))
    : slug.length > maxSlugLength
    ? Result.fail(new ValidationFailed({ detail: `slug must be at most ${maxSlugLength} characters` }))
    : !pattern.test(slug)
    ? Result.fail(new ValidationFailed({ detail: "slug must be lowercase letters and digits in words joined by single hyphens" }))
    : reservedSlugs.has(slug)
    ? Result.fail(new ValidationFailed({ detail: `slug ${slug} is reserved` }))
    : Result.succeed(slug)
