/**
 * The HTML page the gateway answers for a folder without an `index.html`: its entries (a link to each, `/` after a
 * folder's name, its CID and a file's size) and a link up unless it is the CID itself. Names come from whoever made
 * the folder, so every one is HTML-escaped in the text and percent-encoded in the link (relative to the folder's
 * own URL, which ends with `/`), and the page is served under a Content-Security-Policy that allows no script.
 */
import type { DirectoryLink } from "@cairn/content-store"

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** Bytes as people read them: `12 B`, `1.5 KiB`, `100.0 MiB`. */
export const humanSize = (bytes: number) => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

/** The policy the listing is served under: no script, no outside resource, its own inline style only. */
export const contentSecurityPolicy = "sandbox; default-src 'none'; style-src 'unsafe-inline'"

/** The listing of the folder at `path` (`/ipfs/<cid>/docs/`, as decoded names), `root` when it is the CID itself. */
export const html = (path: string, entries: ReadonlyArray<DirectoryLink>, root: boolean) => {
  const rows = entries.map((entry) => {
    const folder = entry.kind === "directory"
    const href = `${encodeURIComponent(entry.name)}${folder ? "/" : ""}`
    const size = entry.kind === "file" ? humanSize(entry.size) : ""
    return `<tr><td><a href="${escapeHtml(href)}">${escapeHtml(entry.name)}${folder ? "/" : ""}</a></td>`
      + `<td><code>${escapeHtml(entry.cid)}</code></td><td class="size">${size}</td></tr>`
  })
  const up = root ? [] : [`<tr><td><a href="../">../</a></td><td></td><td></td></tr>`]
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Index of ${escapeHtml(path)}</title>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2rem auto;max-width:64rem;padding:0 1rem}h1{font-size:1.1rem;word-break:break-all}table{border-collapse:collapse;width:100%}td{padding:.2rem .5rem;border-bottom:1px solid #eee;word-break:break-all}td.size{text-align:right;white-space:nowrap}code{font-size:.75rem;color:#666}</style>
</head>
<body>
<h1>Index of ${escapeHtml(path)}</h1>
<table>
${[...up, ...rows].join("\n")}
</table>
<p>${entries.length} ${entries.length === 1 ? "entry" : "entries"}</p>
</body>
</html>
`
}
