/**
 * Which environment variables OpenClaw reads as one model provider's credential. OpenClaw takes the first non-empty
 * candidate in its own order and says nothing about the others (measured; shared/docs/reference/openclaw-features.md
 * §2.2), so two of them attached to one agent would silently use a credential the user may not expect: Cairn refuses
 * the pair instead (409 `Conflicting secrets`). Providers whose candidate lists overlap in OpenClaw's catalogs
 * (alibaba and qwen, minimax and minimax-portal, moonshot and kimi) are one group here: any two of them conflict.
 */

export interface Provider {
  readonly provider: string
  /** OpenClaw's candidates, in its precedence order (the first set one wins). */
  readonly variables: ReadonlyArray<string>
}

export const providers: ReadonlyArray<Provider> = [
  { provider: "anthropic", variables: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"] },
  { provider: "openai", variables: ["CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_OAUTH_TOKEN"] },
  { provider: "google", variables: ["GEMINI_API_KEY", "GOOGLE_API_KEY"] },
  { provider: "huggingface", variables: ["HUGGINGFACE_HUB_TOKEN", "HF_TOKEN"] },
  { provider: "fal", variables: ["FAL_KEY", "FAL_API_KEY"] },
  { provider: "elevenlabs", variables: ["ELEVENLABS_API_KEY", "XI_API_KEY"] },
  { provider: "runway", variables: ["RUNWAYML_API_SECRET", "RUNWAY_API_KEY"] },
  { provider: "minimax", variables: ["MINIMAX_CODE_PLAN_KEY", "MINIMAX_CODING_API_KEY", "MINIMAX_API_KEY", "MINIMAX_OAUTH_TOKEN"] },
  { provider: "alibaba", variables: ["MODELSTUDIO_API_KEY", "DASHSCOPE_API_KEY", "QWEN_API_KEY"] },
  { provider: "opencode", variables: ["OPENCODE_API_KEY", "OPENCODE_ZEN_API_KEY"] },
  { provider: "chutes", variables: ["CHUTES_API_KEY", "CHUTES_OAUTH_TOKEN"] },
  { provider: "comfy", variables: ["COMFY_API_KEY", "COMFY_CLOUD_API_KEY"] },
  { provider: "moonshot", variables: ["MOONSHOT_API_KEY", "KIMI_API_KEY", "KIMICODE_API_KEY"] },
  { provider: "zai", variables: ["ZAI_API_KEY", "Z_AI_API_KEY"] },
  { provider: "azure-speech", variables: ["AZURE_SPEECH_KEY", "AZURE_SPEECH_API_KEY", "SPEECH_KEY"] }
]

export interface Conflict {
  readonly provider: string
  /** The conflicting secrets' names, in OpenClaw's precedence order. */
  readonly names: ReadonlyArray<string>
}

/** The first provider for which `names` holds two or more credentials, if any. */
export const conflictAmong = (names: Iterable<string>): Conflict | undefined => {
  const present = new Set(names)
  for (const { provider, variables } of providers) {
    const held = variables.filter((variable) => present.has(variable))
    if (held.length > 1) return { provider, names: held }
  }
  return undefined
}
