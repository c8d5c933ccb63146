/**
 * The git port on isomorphic-git (pure JavaScript, no `git` binary). A remote (`https://`, `http://`) is cloned
 * without a checkout into a temporary directory (shallow for a branch or tag, whole for a commit id) through
 * isomorphic-git's Node HTTP client, with the transfer capped; a local repository (a path or `file://` URL, a
 * working copy or a bare repository) is read in place. Either way the folder is read from git's objects: the
 * commit's tree under `path`, symlinks and submodules reported as such for validation to refuse. Reading stops as
 * soon as the folder is past the template limits.
 */
import { RelativePath } from "@cairn/domain"
import { Effect, Layer, Result } from "effect"
import * as git from "isomorphic-git"
import nodeHttp from "isomorphic-git/http/node"
import * as Dns from "node:dns/promises"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type FetchedTemplate, type FetchOptions, GitFetchFailed, GitRepositories, type GitSource, type RepositoryRefs } from "../GitRepositories.ts"
import { maxFiles, maxTotalBytes, type TemplateFile } from "../Validate.ts"

/** The most a clone may transfer: a template is at most 20 MiB of files, its history a few times that. */
export const maxTransferBytes = 100 * 1024 * 1024
export const timeout = "2 minutes"

class Refused extends Error {}

const refuse = (reason: string): never => {
  throw new Refused(reason)
}

/** Loopback, private, link-local, CGNAT and unspecified addresses: this machine and its networks. */
export const isInternalAddress = (address: string): boolean => {
  if (Net.isIPv4(address)) {
    const [a = 0, b = 0] = address.split(".").map(Number)
    return a === 0 || a === 10 || a === 127 || (a === 100 && b >= 64 && b <= 127) || (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)
  }
  if (Net.isIPv6(address)) {
    const lower = address.toLowerCase()
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)
    if (mapped?.[1] !== undefined) return isInternalAddress(mapped[1])
    return lower === "::" || lower === "::1" || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower)
  }
  return false
}

/** Refuses a remote that is this machine or on its networks, unless the caller allows local repositories. */
const checkHost = async (url: URL, allowLocal: boolean) => {
  if (allowLocal) return
  const host = url.hostname.replace(/^\[|\]$/g, "")
  if (host === "localhost" || host.endsWith(".localhost")) refuse("repositories on this server's own network are not allowed")
  const addresses = Net.isIP(host) ? [host] : await Dns.lookup(host, { all: true }).then(
    (found) => found.map((a) => a.address),
    () => refuse(`cannot resolve ${host}`)
  )
  if (addresses.some(isInternalAddress)) refuse("repositories on this server's own network are not allowed")
}

/** isomorphic-git's Node client, with every response body counted against the transfer cap. */
const cappedHttp: git.HttpClient = {
  request: async (request) => {
    const response = await nodeHttp.request(request)
    const body = response.body
    if (body === undefined) return response
    let received = 0
    async function* counted() {
      for await (const chunk of body!) {
        received += chunk.byteLength
        if (received > maxTransferBytes) refuse(`the repository is larger than ${maxTransferBytes / 1024 / 1024} MiB`)
        yield chunk
      }
    }
    return { ...response, body: counted() }
  }
}

/**
 * The folder inside the repository, `/`-separated without leading or trailing slashes; "" for the root (nothing,
 * `/` or `.`). Leading and trailing slashes are dropped, then the rest is a loosely written `RelativePath`: no `..`,
 * backslash, control character or drive letter.
 */
const folderOf = (path: string | undefined) => {
  const trimmed = (path ?? "").replace(/^\/+|\/+$/g, "")
  if (trimmed === "") return ""
  const folder = RelativePath.validateLoose(trimmed)
  if (Result.isSuccess(folder)) return folder.success
  // Only `.` segments were left, which name the root.
  if (folder.failure.reason === "Empty") return ""
  return refuse("path must be a folder inside the repository")
}

/** The git directory of a local repository: `<dir>/.git` of a working copy, or the directory itself when bare. */
const gitdirOf = (dir: string) => {
  const dotGit = Path.join(dir, ".git")
  if (Fs.existsSync(dotGit) && Fs.statSync(dotGit).isDirectory()) return dotGit
  if (Fs.existsSync(Path.join(dir, "HEAD")) && Fs.existsSync(Path.join(dir, "objects"))) return dir
  return refuse("not a git repository")
}

const isCommitId = (ref: string) => /^[0-9a-f]{40}$/i.test(ref)

/** The short name a clone asks the remote for: `refs/heads/x` and `refs/tags/x` are both `x`. */
const shortName = (ref: string) => ref.replace(/^refs\/(?:heads|tags)\//, "")

/** The commit `ref` names in the repository at `gitdir` (in a fresh clone, a branch is a remote-tracking ref). */
const resolveCommit = async (gitdir: string, wanted: string | undefined, cloned: boolean) => {
  if (wanted === undefined) return git.resolveRef({ fs: Fs, gitdir, ref: "HEAD" }).catch(() => refuse("the repository has no commits"))
  if (isCommitId(wanted)) return wanted.toLowerCase()
  const name = shortName(wanted)
  const candidates = [
    wanted,
    ...(cloned ? [`refs/remotes/origin/${name}`] : []),
    `refs/heads/${name}`,
    `refs/tags/${name}`
  ]
  for (const ref of candidates) {
    const oid = await git.resolveRef({ fs: Fs, gitdir, ref }).catch(() => undefined)
    if (oid !== undefined) return oid
  }
  return refuse(`no branch, tag or commit named ${name}`)
}

/** The files of the commit's tree under `folder`, read from git's objects. */
const readFolder = async (gitdir: string, commitOid: string, folder: string): Promise<Array<TemplateFile>> => {
  const cache = {}
  const commit = await git.readCommit({ fs: Fs, gitdir, oid: commitOid, cache }).catch(() => refuse(`${commitOid} is not a commit in the repository`))
  const root = folder === ""
    ? await git.readTree({ fs: Fs, gitdir, oid: commit.commit.tree, cache })
    : await git.readTree({ fs: Fs, gitdir, oid: commit.oid, filepath: folder, cache }).catch(() => refuse(`no folder ${folder} in that commit`))
  const files: Array<TemplateFile> = []
  let total = 0
  const visit = async (entries: ReadonlyArray<git.TreeEntry>, prefix: string): Promise<void> => {
    for (const entry of entries) {
      const path = prefix === "" ? entry.path : `${prefix}/${entry.path}`
      if (entry.path === ".git") continue
      if (entry.type === "tree") {
        await visit((await git.readTree({ fs: Fs, gitdir, oid: entry.oid, cache })).tree, path)
        continue
      }
      if (files.length >= maxFiles) refuse(`the template has more than ${maxFiles} files`)
      if (entry.type === "commit") {
        files.push({ path, content: new Uint8Array(), kind: "submodule" })
      } else {
        const { blob } = await git.readBlob({ fs: Fs, gitdir, oid: entry.oid, cache })
        total += blob.byteLength
        if (total > maxTotalBytes) refuse(`the template is larger than ${maxTotalBytes / 1024 / 1024} MiB`)
        files.push({ path, content: blob, kind: entry.mode === "120000" ? "symlink" : "file" })
      }
    }
  }
  await visit(root.tree, "")
  return files
}

const fetchRemote = async (url: URL, wanted: string | undefined, folder: string) => {
  const dir = await Fs.promises.mkdtemp(Path.join(Os.tmpdir(), "cairn-template-"))
  try {
    const byCommit = wanted !== undefined && isCommitId(wanted)
    await git.clone({
      fs: Fs,
      http: cappedHttp,
      dir,
      url: url.toString(),
      noCheckout: true,
      noTags: !byCommit && wanted === undefined,
      ...(byCommit ? {} : { singleBranch: true, depth: 1 }),
      ...(wanted === undefined || byCommit ? {} : { ref: shortName(wanted) })
    })
    const gitdir = Path.join(dir, ".git")
    const commitSha = await resolveCommit(gitdir, wanted, true)
    return { files: await readFolder(gitdir, commitSha, folder), commitSha }
  } finally {
    await Fs.promises.rm(dir, { recursive: true, force: true })
  }
}

/** Where a git URL points, once it is allowed: a repository on this machine's disk, or a remote. */
type Location = { readonly _tag: "Local"; readonly gitdir: string } | { readonly _tag: "Remote"; readonly url: URL }

const locate = async (rawUrl: string, options: FetchOptions): Promise<Location> => {
  const gitUrl = rawUrl.trim()
  if (gitUrl.startsWith("file:") || gitUrl.startsWith("/") || gitUrl.startsWith(".")) {
    if (!options.allowLocal) refuse("repositories on this server's disk are not allowed; use an https:// URL")
    let dir: string
    try {
      dir = gitUrl.startsWith("file:") ? fileURLToPath(gitUrl) : gitUrl
    } catch {
      return refuse("not a valid file:// URL")
    }
    if (!Path.isAbsolute(dir)) refuse("a local repository must be an absolute path")
    return { _tag: "Local", gitdir: gitdirOf(dir) }
  }
  let url: URL
  try {
    url = new URL(gitUrl)
  } catch {
    return refuse("gitUrl must be an https:// URL of a git repository")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") refuse("only https:// and http:// repositories are supported")
  await checkHost(url, options.allowLocal)
  return { _tag: "Remote", url }
}

/** A git operation bounded in time, failing with the reason, never a stack. */
const gitOperation = <A>(gitUrl: string, run: () => Promise<A>): Effect.Effect<A, GitFetchFailed> =>
  Effect.tryPromise({
    try: run,
    catch: (error) =>
      new GitFetchFailed({
        gitUrl,
        reason: error instanceof Refused ? error.message : error instanceof Error ? error.message.replace(/\s+/g, " ").trim() : String(error)
      })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new GitFetchFailed({ gitUrl, reason: `no answer within ${timeout}` }))
    })
  )

/** Reads a template folder from a git repository. */
export const fetchGitTemplate = (source: GitSource, options: FetchOptions): Effect.Effect<FetchedTemplate, GitFetchFailed> =>
  gitOperation(source.gitUrl, async () => {
    const wanted = source.ref ?? (source.branch === undefined ? undefined : `refs/heads/${source.branch}`)
    const folder = folderOf(source.path)
    const location = await locate(source.gitUrl, options)
    if (location._tag === "Remote") return fetchRemote(location.url, wanted, folder)
    const commitSha = await resolveCommit(location.gitdir, wanted, false)
    return { files: await readFolder(location.gitdir, commitSha, folder), commitSha }
  })

const byName = (a: string, b: string) => a.localeCompare(b)

/** A repository's branches and tags: a remote's from its ref advertisement alone, a local one's from its refs. */
export const repositoryRefs = (gitUrl: string, options: FetchOptions): Effect.Effect<RepositoryRefs, GitFetchFailed> =>
  gitOperation(gitUrl, async () => {
    const location = await locate(gitUrl, options)
    if (location._tag === "Local") {
      const gitdir = location.gitdir
      const [branches, tags] = await Promise.all([git.listBranches({ fs: Fs, gitdir }), git.listTags({ fs: Fs, gitdir })])
      return { branches: branches.sort(byName), tags: tags.sort(byName) }
    }
    const advertised = await git.listServerRefs({ http: cappedHttp, url: location.url.toString(), protocolVersion: 1 })
    const named = (prefix: string) =>
      advertised.filter((r) => r.ref.startsWith(prefix) && !r.ref.endsWith("^{}")).map((r) => r.ref.slice(prefix.length)).sort(byName)
    return { branches: named("refs/heads/"), tags: named("refs/tags/") }
  })

export const layer = Layer.succeed(GitRepositories, GitRepositories.of({ fetch: fetchGitTemplate, refs: repositoryRefs }))
