import { assert, describe, it } from "@effect/vitest"
import { maxFiles, maxTotalBytes, type TemplateFile, validateManifest, validateTemplate } from "../src/Validate.ts"

const text = (s: string) => new TextEncoder().encode(s)
const manifestFile = (manifest: unknown): TemplateFile => ({ path: "manifest.json", content: text(JSON.stringify(manifest)) })
const minimal = { version: 1, agent: { name: "Helper" } }

describe("a manifest", () => {
  it("needs version 1 and an agent with a name of 1 to 100 characters", () => {
    assert.deepStrictEqual(validateManifest(minimal).errors, [])
    assert.deepStrictEqual(validateManifest({ version: 1, agent: { name: "x".repeat(101) } }).errors, ["/agent/name: must NOT have more than 100 characters"])
    assert.deepStrictEqual(validateManifest({ version: 1, agent: { name: "" } }).errors, ["/agent/name: must NOT have fewer than 1 characters"])
    assert.deepStrictEqual(validateManifest({ version: 2, agent: { name: "a" } }).errors, ["/version: must be 1 (the only manifest version)"])
    assert.deepStrictEqual(validateManifest({ version: 1 }).errors, ["/agent: is required"])
    assert.deepStrictEqual(validateManifest([]).errors, ["/: must be object"])
  })

  it("limits the agent's description, vibe and emoji, and refuses unknown keys (but not `_` notes)", () => {
    const agent = { name: "a", description: "d".repeat(10_001), vibe: "v".repeat(201), emoji: "e".repeat(33), mood: "x" }
    assert.deepStrictEqual(validateManifest({ version: 1, agent }).errors, [
      "/agent/mood: is not a known property",
      "/agent/description: must NOT have more than 10000 characters",
      "/agent/vibe: must NOT have more than 200 characters",
      "/agent/emoji: must NOT have more than 32 characters"
    ])
    assert.deepStrictEqual(validateManifest({ ...minimal, _docs: { any: "thing" }, $schema: "x" }).errors, [])
    assert.deepStrictEqual(validateManifest({ ...minimal, agnet: {} }).errors, ["/agnet: is not a known property"])
  })

  it("takes at most 10 skills, each with exactly one of clawhub_slug or cid", () => {
    const ok = { ...minimal, skills: [{ name: "a", clawhub_slug: "@o/a" }, { name: "b", cid: "bafy" }] }
    assert.isTrue(validateManifest(ok).valid)
    const bad = { ...minimal, skills: [{ name: "a" }, { name: "b", cid: "x", clawhub_slug: "y" }] }
    assert.deepStrictEqual(validateManifest(bad).errors, [
      "/skills/0: must have exactly one of clawhub_slug or cid",
      "/skills/1: must have exactly one of clawhub_slug or cid"
    ])
    const eleven = { ...minimal, skills: Array.from({ length: 11 }, (_, i) => ({ name: `s${i}`, cid: "bafy" })) }
    assert.deepStrictEqual(validateManifest(eleven).errors, ["/skills: must NOT have more than 10 items"])
  })

  it("accepts both task shapes, Pinata's simplified one and the tasks API's, and at most 20", () => {
    const tasks = [
      { name: "daily", prompt: "Check in", schedule: "0 9 * * *", enabled: true },
      { name: "cron", schedule: { kind: "cron", expr: "0 9 * * *", tz: "Europe/Paris" }, payload: { kind: "agentTurn", text: "Hi" } },
      { name: "every", schedule: { kind: "every", everyMs: 3_600_000 }, payload: { kind: "systemEvent", message: "tick" } },
      { name: "once", schedule: { kind: "at", at: "2026-04-01T12:00:00Z" }, payload: { kind: "agentTurn", text: "Once" }, delivery: { mode: "none" } }
    ]
    assert.deepStrictEqual(validateManifest({ ...minimal, tasks }).errors, [])
    const bad = [
      { name: "a", schedule: "0 9 * * *" },
      { name: "b", schedule: { kind: "weekly" }, payload: { kind: "agentTurn", text: "x" } },
      { name: "c", schedule: { kind: "every", everyMs: 1000 }, payload: { kind: "shout" } },
      { name: "d", schedule: { kind: "cron", expr: "* * * * *" } }
    ]
    assert.deepStrictEqual(validateManifest({ ...minimal, tasks: bad }).errors, [
      "/tasks/0/prompt: is required",
      "/tasks/1/schedule/kind: must be one of cron, every, at",
      "/tasks/2/schedule/everyMs: must be at least 60000 (one minute)",
      "/tasks/2/payload/kind: must be one of agentTurn, systemEvent",
      "/tasks/3/payload: is required"
    ])
    const many = Array.from({ length: 21 }, (_, i) => ({ name: `t${i}`, prompt: "p", schedule: "0 9 * * *" }))
    assert.deepStrictEqual(validateManifest({ ...minimal, tasks: many }).errors, ["/tasks: must NOT have more than 20 items"])
  })

  it("takes channel tokens only as references to secrets, never the token itself", () => {
    const channels = {
      telegram: { botToken: "env:TELEGRAM_BOT_TOKEN", dmPolicy: "pairing", allowFrom: ["123"] },
      slack: { botToken: "env:SLACK_BOT_TOKEN", appToken: "env:SLACK_APP_TOKEN" },
      discord: { botToken: "env:DISCORD_BOT_TOKEN" },
      whatsapp: { dmPolicy: "open", allowFrom: [] }
    }
    assert.deepStrictEqual(validateManifest({ ...minimal, channels }).errors, [])
    assert.deepStrictEqual(validateManifest({ ...minimal, channels: { telegram: { botToken: "123456:ABCdef" }, irc: {} } }).errors, [
      "/channels/irc: is not a known property",
      "/channels/telegram/botToken: must reference a secret as env:VAR_NAME (a template never carries a token itself)"
    ])
  })

  it("names required secrets as environment variables, routes on ports other than the gateway's, at most 10 routes", () => {
    const secrets = [{ name: "ANTHROPIC_API_KEY", description: "d", guideUrl: "https://example.com/keys", required: true }, { name: "OPTIONAL_1" }]
    assert.isTrue(validateManifest({ ...minimal, secrets }).valid)
    assert.deepStrictEqual(validateManifest({ ...minimal, secrets: [{ name: "lower-case" }, { name: "OK", guideUrl: "not a url" }] }).errors, [
      "/secrets/0/name: must be an environment variable name: capital letters, digits and _, not starting with a digit",
      "/secrets/1/guideUrl: must match format \"uri\""
    ])
    assert.isTrue(validateManifest({ ...minimal, routes: [{ port: 5173, path: "/app", protected: false }] }).valid)
    assert.deepStrictEqual(validateManifest({ ...minimal, routes: [{ port: 18789 }, { port: 80, path: "app" }] }).errors, [
      "/routes/0/port: must be a port from 1025 to 65535 other than 18789 (the gateway's)",
      "/routes/1/port: must be a port from 1025 to 65535 other than 18789 (the gateway's)",
      "/routes/1/path: must start with /"
    ])
    const routes = Array.from({ length: 11 }, (_, i) => ({ port: 3000 + i }))
    assert.deepStrictEqual(validateManifest({ ...minimal, routes }).errors, ["/routes: must NOT have more than 10 items"])
  })

  it("accepts Pinata's own template manifests (template block, model object, scripts, empty lists)", () => {
    const pinata = {
      $schema: "https://agents.pinata.cloud/schemas/manifest.v1.json",
      version: 1,
      agent: { name: "Useful Assistant", description: "A personal AI assistant", vibe: "resourceful", emoji: "🧠" },
      model: { primary: "anthropic/claude-sonnet-4-6" },
      template: { slug: "useful-assistant", category: "general", tags: ["assistant"], authorName: "Pinata" },
      secrets: [{ name: "MY_SECRET", description: "Example", required: false }],
      scripts: { build: "npm install", start: "" },
      routes: [{ port: 5173, path: "/app", protected: false }],
      tasks: [{ name: "daily-check", prompt: "Run your daily check-in routine", schedule: "0 9 * * *", enabled: true }],
      skills: [{ cid: "bafybeicglyjdb6wrrcbfyu6i2fe4lpxdxgvfvlht7yzdim7cvwt656whue", name: "@pinata/platform" }]
    }
    assert.deepStrictEqual(validateManifest(pinata).errors, [])
    assert.deepStrictEqual(validateManifest({ ...minimal, openclawVersion: "2026.3.8" }).errors, [])
    assert.deepStrictEqual(validateManifest({ ...minimal, openclawVersion: "next" }).errors, ["/openclawVersion: must be an OpenClaw version such as 2026.3.8, or latest or beta"])
  })
})

describe("a template folder", () => {
  it("is valid with a manifest at its root and regular files under safe paths; .git/ is skipped", () => {
    const result = validateTemplate([manifestFile(minimal), { path: "SOUL.md", content: text("soul") }, { path: ".git/HEAD", content: text("ref") }, { path: "sub/.git/x", content: text("") }])
    assert.deepStrictEqual(result.errors, [])
    assert.isTrue(result.valid)
    assert.deepStrictEqual(result.files.map((f) => f.path), ["manifest.json", "SOUL.md"])
    assert.strictEqual(result.manifest?.agent.name, "Helper")
  })

  it("needs manifest.json, as JSON", () => {
    assert.deepStrictEqual(validateTemplate([{ path: "SOUL.md", content: text("x") }]).errors, ["manifest.json: missing (it must be at the template's root)"])
    assert.deepStrictEqual(validateTemplate([{ path: "sub/manifest.json", content: text("{}") }]).errors, ["manifest.json: missing (it must be at the template's root)"])
    const broken = validateTemplate([{ path: "manifest.json", content: text("{ nope") }])
    assert.isFalse(broken.valid)
    assert.isNull(broken.manifest)
    assert.match(broken.errors[0]!, /^manifest\.json: not valid JSON \(/)
  })

  it("refuses paths that could leave the folder, symlinks and submodules", () => {
    const files: Array<TemplateFile> = [
      manifestFile(minimal),
      { path: "../escape", content: text("") },
      { path: "/etc/passwd", content: text("") },
      { path: "a\\b", content: text("") },
      { path: "nul\0", content: text("") },
      { path: "C:evil", content: text("") },
      { path: "a//b", content: text("") },
      { path: "line\nbreak", content: text("") },
      { path: "x".repeat(256), content: text("") },
      { path: "link.md", content: text("SOUL.md"), kind: "symlink" },
      { path: "vendor/lib", content: text(""), kind: "submodule" }
    ]
    assert.deepStrictEqual(validateTemplate(files).errors, [
      "\"../escape\": path must not have empty, . or .. segments",
      "\"/etc/passwd\": path must be relative",
      "\"a\\\\b\": path must not contain a backslash",
      "\"nul\\u0000\": path must not contain a NUL character",
      "\"C:evil\": path must be relative",
      "\"a//b\": path must not have empty, . or .. segments",
      "\"line\\nbreak\": path must not contain a control character",
      `"${"x".repeat(256)}": path must have names of at most 255 bytes`,
      "link.md: symbolic links are not allowed",
      "vendor/lib: git submodules are not allowed"
    ])
  })

  it("holds at most 1000 files and 20 MiB", () => {
    const many = [manifestFile(minimal), ...Array.from({ length: maxFiles }, (_, i) => ({ path: `f${i}.md`, content: text("x") }))]
    assert.deepStrictEqual(validateTemplate(many).errors, [`template has ${maxFiles + 1} files; at most 1000 are allowed`])
    const big = [manifestFile(minimal), { path: "big.bin", content: new Uint8Array(maxTotalBytes) }]
    assert.match(validateTemplate(big).errors[0]!, /^template is \d+ bytes; at most 20971520 \(20 MiB\) are allowed$/)
  })

  it("reports the manifest's errors after the folder's", () => {
    const result = validateTemplate([manifestFile({ version: 1, agent: { name: "" } }), { path: "../x", content: text("") }])
    assert.deepStrictEqual(result.errors, ["\"../x\": path must not have empty, . or .. segments", "/agent/name: must NOT have fewer than 1 characters"])
  })
})
