/**
 * Whether a folder is a template: `manifest.json` at its root, JSON, valid against manifest v1 (checked with ajv,
 * never by hand), and a folder Cairn will store and copy into agents' workspaces: safe relative paths, regular
 * files only, at most 1000 files and 20 MiB. `.git/` is not part of a template and is skipped. Every failure is one
 * readable string (`/agent/name: must NOT have more than 100 characters`), so clients can show them as a list.
 */
import { RelativePath } from "@cairn/domain"
import type { ErrorObject } from "ajv"
import { Result } from "effect"
import type { Manifest } from "./Manifest.ts"
// ajv's compiled validator for ManifestSchema.ts, kept as code (ManifestValidatorCode.ts): no ajv to load or compile.
import { validate as check } from "./ManifestValidator.generated.js"

export const maxFiles = 1000
export const maxTotalBytes = 20 * 1024 * 1024
export const manifestPath = "manifest.json"

/** One entry of a template folder, as read from a directory, a git tree or IPFS. */
export interface TemplateFile {
  readonly path: string
  readonly content: Uint8Array
  /** A regular file when left out; a symlink or a git submodule is refused. */
  readonly kind?: "file" | "symlink" | "submodule"
}

export interface ManifestValidation {
  readonly valid: boolean
  readonly errors: ReadonlyArray<string>
  /** The manifest when it is valid (and as parsed when it is JSON but invalid); null when it is not JSON. */
  readonly manifest: Manifest | null
}

export interface TemplateValidation extends ManifestValidation {
  /** The template's files, `.git/` left out: what is stored when it is valid. */
  readonly files: ReadonlyArray<TemplateFile>
}

const pathOf = (instancePath: string) => (instancePath === "" ? "/" : instancePath)

interface Hinted {
  readonly errorHint?: string
  readonly oneOf?: ReadonlyArray<{ readonly properties?: { readonly [key: string]: { readonly const?: unknown } } }>
}

/** ajv's errors as one readable line each: hints where the schema has them, no noise from the shapes not chosen. */
const readable = (errors: ReadonlyArray<ErrorObject>): Array<string> => {
  // A node with a hint speaks for everything below it that failed (the branches of a `oneOf`, say).
  const hinted = errors.filter((e) => (e.parentSchema as Hinted | undefined)?.errorHint !== undefined).map((e) => e.schemaPath)
  const lines: Array<string> = []
  for (const error of errors) {
    if (error.keyword === "if") continue
    if (hinted.some((prefix) => error.schemaPath.startsWith(`${prefix}/`))) continue
    const parent = error.parentSchema as Hinted | undefined
    const path = pathOf(error.instancePath)
    const params = error.params as Record<string, unknown>
    let line: string
    if (parent?.errorHint !== undefined) line = `${path}: ${parent.errorHint}`
    else if (error.keyword === "required") line = `${error.instancePath}/${String(params["missingProperty"])}: is required`
    else if (error.keyword === "additionalProperties") line = `${error.instancePath}/${String(params["additionalProperty"])}: is not a known property`
    else if (error.keyword === "enum") line = `${path}: must be one of ${(params["allowedValues"] as Array<unknown>).map(String).join(", ")}`
    else if (error.keyword === "const") line = `${path}: must be ${JSON.stringify(params["allowedValue"])}`
    else if (error.keyword === "discriminator") {
      const tag = String(params["tag"])
      const kinds = (parent?.oneOf ?? []).map((branch) => String(branch.properties?.[tag]?.const))
      line = `${error.instancePath}/${tag}: must be one of ${kinds.join(", ")}`
    } else line = `${path}: ${error.message ?? "is invalid"}`
    if (!lines.includes(line)) lines.push(line)
  }
  return lines
}

/** Checks a parsed manifest against manifest v1. */
export const validateManifest = (value: unknown): ManifestValidation =>
  check(value)
    ? { valid: true, errors: [], manifest: value as Manifest }
    : { valid: false, errors: readable(check.errors ?? []), manifest: typeof value === "object" && value !== null ? (value as Manifest) : null }

/** A template path's refusal, in the words template validation has always used. */
const unsafeReason = (problem: RelativePath.Problem): string => {
  switch (problem.reason) {
    case "Empty":
      return "path must not be empty"
    case "Nul":
      return "path must not contain a NUL character"
    case "ControlCharacter":
      return "path must not contain a control character"
    case "NotUnicode":
      return "path must be valid Unicode"
    case "Backslash":
      return "path must not contain a backslash"
    case "Absolute":
    case "DriveLetter":
      return "path must be relative"
    case "DotDotSegment":
    case "DotSegment":
    case "EmptySegment":
      return "path must not have empty, . or .. segments"
    case "TooLong":
      return `path must be at most ${RelativePath.maxBytes} bytes`
    case "SegmentTooLong":
      return `path must have names of at most ${RelativePath.maxSegmentBytes} bytes`
  }
}

/**
 * Whether a path could escape the folder or mean something else elsewhere, by the domain's `RelativePath` rule:
 * empty, absolute, a drive, `..`, `.` or empty segments, `\`, control characters (NUL included), too long.
 */
export const unsafePath = (path: string): string | undefined => {
  const checked = RelativePath.validate(path)
  return Result.isFailure(checked) ? unsafeReason(checked.failure) : undefined
}

/** Whether an entry belongs to git's own bookkeeping (a `.git` folder anywhere), which is never part of a template. */
export const isGitInternal = (path: string) => path.split("/").includes(".git")

const decoder = new TextDecoder("utf-8", { fatal: true })

/** Checks a whole template folder: its files, then its manifest. */
export const validateTemplate = (input: ReadonlyArray<TemplateFile>): TemplateValidation => {
  const files = input.filter((file) => !isGitInternal(file.path))
  const errors: Array<string> = []
  if (files.length > maxFiles) errors.push(`template has ${files.length} files; at most ${maxFiles} are allowed`)
  const total = files.reduce((sum, file) => sum + file.content.byteLength, 0)
  if (total > maxTotalBytes) errors.push(`template is ${total} bytes; at most ${maxTotalBytes} (20 MiB) are allowed`)
  const seen = new Set<string>()
  for (const file of files) {
    const unsafe = unsafePath(file.path)
    if (unsafe !== undefined) errors.push(`${JSON.stringify(file.path)}: ${unsafe}`)
    else if (file.kind === "symlink") errors.push(`${file.path}: symbolic links are not allowed`)
    else if (file.kind === "submodule") errors.push(`${file.path}: git submodules are not allowed`)
    else if (seen.has(file.path)) errors.push(`${file.path}: appears twice`)
    seen.add(file.path)
  }
  const manifestFile = files.find((file) => file.path === manifestPath && (file.kind ?? "file") === "file")
  if (manifestFile === undefined) {
    return { valid: false, errors: [...errors, "manifest.json: missing (it must be at the template's root)"], manifest: null, files }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(manifestFile.content))
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return { valid: false, errors: [...errors, `manifest.json: not valid JSON (${reason})`], manifest: null, files }
  }
  const manifest = validateManifest(parsed)
  const all = [...errors, ...manifest.errors]
  return { valid: all.length === 0, errors: all, manifest: manifest.manifest, files }
}
