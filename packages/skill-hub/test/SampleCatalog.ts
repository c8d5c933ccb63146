/** The catalog the LocalCatalog and ClawHubRegistry tests share. */
import { skillMd } from "./Fixtures.ts"

/** Five skills, two of them with two versions, as an operator would lay them out. */
export const sampleCatalog = {
  "git-helper": {
    hub: { displayName: "Git Helper", summary: "Commits for you", category: "dev", tags: ["git", "vcs"], owner: "ada", installs: 40, featured: true },
    versions: {
      "1.2.0": { at: "2026-01-01T00:00:00.000Z", files: { "SKILL.md": skillMd("git-helper", "old"), "scripts/commit.sh": "git commit\n" } },
      "1.10.0": { at: "2026-03-01T00:00:00.000Z", files: { "SKILL.md": skillMd("git-helper", "new"), "scripts/commit.sh": "git commit -s\n" } }
    }
  },
  weather: {
    versions: {
      "0.1.0": { at: "2026-02-01T00:00:00.000Z", files: { "SKILL.md": skillMd("weather", "Tells the weather") } }
    }
  },
  "zeta-notes": {
    hub: { summary: "Keeps notes", category: "writing", installs: 5 },
    versions: {
      "2.0.0": { at: "2026-04-01T00:00:00.000Z", files: { "SKILL.md": skillMd("zeta", "front matter summary") } }
    }
  },
  "alpha-mail": {
    hub: { displayName: "Alpha Mail", category: "dev", installs: 100 },
    versions: {
      "1.0.0": { at: "2026-01-15T00:00:00.000Z", files: { "SKILL.md": skillMd("alpha-mail", "Sends mail") } },
      "1.0.1-beta.1": { at: "2026-01-20T00:00:00.000Z", files: { "SKILL.md": skillMd("alpha-mail", "Sends mail, beta") } }
    }
  },
  "no-front-matter": {
    versions: { "1.0.0": { at: "2026-05-01T00:00:00.000Z", files: { "SKILL.md": "# Just a title\n" } } }
  }
} as const

