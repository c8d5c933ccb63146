/**
 * The JSON Schema (draft 2020-12) of a template's `manifest.json`, version 1: Pinata's manifest v1
 * (shared/docs/reference/pinata-compat.md §3.3, "Templates") with both task shapes Pinata's own templates use, and
 * Cairn's top-level `category`, `tags` and `openclawVersion` beside Pinata's `template` block. `validateTemplate`
 * checks manifests with it (ajv); it is also served as is, so editors can point `$schema` at it.
 *
 * `errorHint` is Cairn's annotation: the message a failure at that node reads as, where ajv's own would be
 * unreadable (a regular expression, a `oneOf` of shapes).
 */

const envName = "^[A-Z_][A-Z0-9_]*$"
const envRef = "^env:[A-Za-z_][A-Za-z0-9_]*$"

/** A channel token: a reference to one of the agent's secrets (`env:VAR`); a template never carries a token itself. */
const token = {
  type: "string",
  pattern: envRef,
  errorHint: "must reference a secret as env:VAR_NAME (a template never carries a token itself)"
} as const

const dmPolicy = { enum: ["open", "pairing"] } as const
const allowFrom = { type: "array", maxItems: 100, items: { type: "string", minLength: 1, maxLength: 200 } } as const

/** `{kind: "cron", expr, tz?}`, `{kind: "every", everyMs}` or `{kind: "at", at}` (OpenClaw's cron job schedule). */
const schedule = {
  type: "object",
  required: ["kind"],
  discriminator: { propertyName: "kind" },
  oneOf: [
    {
      type: "object",
      properties: {
        kind: { const: "cron" },
        expr: { type: "string", minLength: 1, maxLength: 200 },
        tz: { type: "string", minLength: 1, maxLength: 100 },
        exact: { type: "boolean" },
        staggerMs: { type: "integer", minimum: 0 }
      },
      required: ["kind", "expr"],
      additionalProperties: false
    },
    {
      type: "object",
      properties: {
        kind: { const: "every" },
        everyMs: { type: "integer", minimum: 60_000, errorHint: "must be at least 60000 (one minute)" },
        staggerMs: { type: "integer", minimum: 0 }
      },
      required: ["kind", "everyMs"],
      additionalProperties: false
    },
    {
      type: "object",
      properties: {
        kind: { const: "at" },
        at: { type: "string", minLength: 1, maxLength: 100 }
      },
      required: ["kind", "at"],
      additionalProperties: false
    }
  ]
} as const

/** `{kind: "agentTurn", text, …}` or `{kind: "systemEvent", message}`. */
const payload = {
  type: "object",
  required: ["kind"],
  discriminator: { propertyName: "kind" },
  oneOf: [
    {
      type: "object",
      properties: {
        kind: { const: "agentTurn" },
        text: { type: "string", minLength: 1, maxLength: 20_000 },
        model: { type: "string", minLength: 1, maxLength: 200 },
        thinking: { type: "string", maxLength: 50 },
        timeoutSeconds: { type: "integer", minimum: 1, maximum: 86_400 }
      },
      required: ["kind", "text"],
      additionalProperties: false
    },
    {
      type: "object",
      properties: {
        kind: { const: "systemEvent" },
        message: { type: "string", minLength: 1, maxLength: 20_000 }
      },
      required: ["kind", "message"],
      additionalProperties: false
    }
  ]
} as const

const taskName = { type: "string", minLength: 1, maxLength: 100 } as const

/** The task shape of the tasks API (`POST /v0/agents/{id}/tasks`). */
const fullTask = {
  type: "object",
  properties: {
    name: taskName,
    description: { type: "string", maxLength: 2000 },
    enabled: { type: "boolean" },
    schedule,
    sessionTarget: { enum: ["main", "isolated"] },
    wakeMode: { enum: ["now", "next-heartbeat"] },
    payload,
    delivery: {
      type: "object",
      properties: {
        mode: { enum: ["none", "announce", "webhook"] },
        channel: { type: "string", minLength: 1, maxLength: 100 },
        to: { type: "string", minLength: 1, maxLength: 2000 },
        bestEffort: { type: "boolean" }
      },
      additionalProperties: false
    }
  },
  required: ["name", "schedule", "payload"],
  additionalProperties: false
} as const

/** Pinata's simplified task: a cron expression and the prompt the agent gets. */
const simpleTask = {
  type: "object",
  properties: {
    name: taskName,
    description: { type: "string", maxLength: 2000 },
    prompt: { type: "string", minLength: 1, maxLength: 20_000 },
    schedule: { type: "string", minLength: 1, maxLength: 200 },
    tz: { type: "string", minLength: 1, maxLength: 100 },
    enabled: { type: "boolean" }
  },
  required: ["name", "prompt", "schedule"],
  additionalProperties: false
} as const

export const schema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "urn:cairn:schemas:template-manifest:v1",
  title: "Agent template manifest, version 1",
  description: "manifest.json at the root of a template folder: the agent's identity, and what it needs and runs.",
  type: "object",
  required: ["version", "agent"],
  properties: {
    $schema: { type: "string" },
    version: { const: 1, errorHint: "must be 1 (the only manifest version)" },
    engine: { enum: ["openclaw", "hermes"] },
    agent: {
      type: "object",
      required: ["name"],
      properties: {
        name: { type: "string", minLength: 1, maxLength: 100 },
        description: { type: "string", maxLength: 10_000 },
        vibe: { type: "string", maxLength: 200 },
        emoji: { type: "string", maxLength: 32 }
      },
      additionalProperties: false
    },
    model: {
      anyOf: [
        { type: "string", minLength: 1, maxLength: 200 },
        {
          type: "object",
          properties: { primary: { type: ["string", "null"], maxLength: 200 } },
          additionalProperties: false
        }
      ],
      errorHint: "must be a model id (\"provider/model\") or {primary: \"provider/model\"}"
    },
    openclawVersion: {
      type: "string",
      pattern: "^(?:latest|beta|v?\\d{4}\\.\\d{1,2}\\.\\d{1,2}(?:[-.][0-9A-Za-z.-]+)?)$",
      errorHint: "must be an OpenClaw version such as 2026.3.8, or latest or beta"
    },
    category: { type: "string", minLength: 1, maxLength: 50 },
    tags: { type: "array", maxItems: 10, items: { type: "string", minLength: 1, maxLength: 50 } },
    template: {
      type: "object",
      properties: {
        slug: {
          type: "string",
          minLength: 1,
          maxLength: 100,
          pattern: "^[a-z0-9]+(?:-[a-z0-9]+)*$",
          errorHint: "must be lowercase letters and digits in words joined by single hyphens"
        },
        category: { type: "string", minLength: 1, maxLength: 50 },
        tags: { type: "array", maxItems: 10, items: { type: "string", minLength: 1, maxLength: 50 } },
        authorName: { type: "string", minLength: 1, maxLength: 100 },
        authorUrl: { type: "string", maxLength: 2000 },
        authorLogoUrl: { type: "string", maxLength: 2000 }
      },
      additionalProperties: false
    },
    secrets: {
      type: "array",
      maxItems: 50,
      items: {
        type: "object",
        required: ["name"],
        properties: {
          name: {
            type: "string",
            minLength: 1,
            maxLength: 128,
            pattern: envName,
            errorHint: "must be an environment variable name: capital letters, digits and _, not starting with a digit"
          },
          description: { type: "string", maxLength: 2000 },
          guideUrl: { type: "string", format: "uri", maxLength: 2000 },
          guideSteps: { type: "array", maxItems: 20, items: { type: "string", maxLength: 2000 } },
          required: { type: "boolean", default: true }
        },
        additionalProperties: false
      }
    },
    skills: {
      type: "array",
      maxItems: 10,
      items: {
        type: "object",
        required: ["name"],
        properties: {
          name: { type: "string", minLength: 1, maxLength: 100 },
          clawhub_slug: { type: "string", minLength: 1, maxLength: 200 },
          cid: { type: "string", minLength: 1, maxLength: 200 }
        },
        additionalProperties: false,
        oneOf: [{ required: ["clawhub_slug"] }, { required: ["cid"] }],
        errorHint: "must have exactly one of clawhub_slug or cid"
      }
    },
    tasks: {
      type: "array",
      maxItems: 20,
      items: {
        type: "object",
        // A string schedule is Pinata's simplified shape; anything else is the full one.
        if: { properties: { schedule: { type: "string" } }, required: ["schedule"] },
        then: simpleTask,
        else: fullTask
      }
    },
    scripts: {
      type: "object",
      properties: {
        build: { type: "string", maxLength: 10_000 },
        start: { type: "string", maxLength: 10_000 }
      },
      additionalProperties: false
    },
    routes: {
      type: "array",
      maxItems: 10,
      items: {
        type: "object",
        required: ["port"],
        properties: {
          port: {
            type: "integer",
            minimum: 1025,
            maximum: 65_535,
            not: { const: 18_789 },
            errorHint: "must be a port from 1025 to 65535 other than 18789 (the gateway's)"
          },
          path: { type: "string", pattern: "^/", maxLength: 200, errorHint: "must start with /" },
          protected: { type: "boolean" }
        },
        additionalProperties: false
      }
    },
    channels: {
      type: "object",
      properties: {
        telegram: {
          type: "object",
          required: ["botToken"],
          properties: { enabled: { type: "boolean" }, botToken: token, dmPolicy, allowFrom },
          additionalProperties: false
        },
        slack: {
          type: "object",
          required: ["botToken", "appToken"],
          properties: { enabled: { type: "boolean" }, botToken: token, appToken: token, dmPolicy, allowFrom },
          additionalProperties: false
        },
        discord: {
          type: "object",
          required: ["botToken"],
          properties: { enabled: { type: "boolean" }, botToken: token, applicationId: { type: "string", maxLength: 100 }, dmPolicy, allowFrom },
          additionalProperties: false
        },
        whatsapp: {
          type: "object",
          required: ["dmPolicy", "allowFrom"],
          properties: { enabled: { type: "boolean" }, dmPolicy, allowFrom },
          additionalProperties: false
        }
      },
      additionalProperties: false
    }
  },
  // Keys starting with `_` are notes (Pinata's starter has a `_docs` block); any other unknown key is a mistake.
  patternProperties: { "^_": true },
  additionalProperties: false
} as const
