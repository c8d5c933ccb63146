/**
 * A filesystem of its own for every agent's home (decision 0044), so that what an agent stores is capped
 * (AGENT_DISK_MAX) and enforced by the kernel: an ext4 filesystem of that size, in a sparse image in Cairn's own
 * folder (`DATA_DIR/agents-disks/<agent>.ext4`, which no sandbox sees), loop-mounted at the agent's home with
 * `nosuid,nodev,discard`. An agent that fills it gets ENOSPC in its own home, and Cairn's disk and the other agents'
 * homes keep their room.
 *
 * Not project quotas (XFS, ext4): they need a kernel built with quota support and a volume mounted with them, and
 * these machines' kernel has neither. Not btrfs qgroups: a subvolume the agent creates in its home has a qgroup of its
 * own, outside the limit. A loop device per agent needs only root (the kernel makes loop devices on demand).
 *
 * The image is sparse: on the host's disk it takes what the agent stores now (`discard` gives deleted files' blocks
 * back). Made at the agent's first provision (what an older home held is copied in, then removed from beneath the
 * mount), mounted again at each provision of a later Cairn run, unmounted when the engine ends (its processes are
 * gone then), deleted with the agent. A mount Cairn finds already there (a Cairn killed before it could unmount) is
 * used as it is, and an image still attached to a loop device is mounted from that device: mounting one image through
 * two devices would corrupt it.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { runCommand } from "./Command.ts"
import { onPath } from "./HostEnvironment.ts"

export interface AgentDisks {
  /** The size of each agent's filesystem, in bytes. */
  readonly sizeBytes: number
  /** Makes sure the agent's home is its own filesystem, mounted: made at the first call. Rejects when it cannot be. */
  readonly attach: (home: string) => Promise<void>
  /** Bytes the agent stores now; undefined where its home is not one of these filesystems. */
  readonly usedBytes: (home: string) => number | undefined
  /** Unmounts the agent's filesystem (its processes must be gone); the image stays for the next attach. */
  readonly detach: (home: string) => Promise<void>
  /** Unmounts it and deletes its image: the agent is destroyed. */
  readonly remove: (home: string) => Promise<void>
}

const GiB = 1024 ** 3
export const defaultDiskBytes = 10 * GiB
/** Below this an ext4 filesystem has no room for its own journal and metadata. */
export const minimumDiskBytes = 64 * 1024 ** 2

const commandMs = 60_000
const mountOptions = "loop,nosuid,nodev,noatime,discard"

/** The mount points in /proc/self/mountinfo with their sources, decoded (`\040` for a space and so on). */
export const mountedAt = (): Map<string, string> => {
  const decode = (field: string) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
  const mounts = new Map<string, string>()
  for (const line of Fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [before, after] = line.split(" - ")
    const point = before?.split(" ")[4]
    const source = after?.split(" ")[1]
    if (point !== undefined && source !== undefined) mounts.set(decode(point), decode(source))
  }
  return mounts
}

interface Tools {
  readonly mkfs: string
  readonly mount: string
  readonly umount: string
  readonly losetup: string
}

const run = async (file: string, args: ReadonlyArray<string>) => {
  const result = await runCommand(file, args, { env: { PATH: process.env["PATH"] ?? "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C" }, timeoutMs: commandMs })
  if (result.code !== 0) {
    throw new Error(`${Path.basename(file)} ${args.join(" ")}: ${(result.stderr || result.stdout).trim() || `exit ${result.code}`}`)
  }
  return result.stdout
}

/**
 * The agents' disks under `dataDir`, or why there can be none here (not root, a program missing, loop devices or
 * ext4 unavailable: probed by making, mounting and removing a small one).
 */
export const make = async (dataDir: string, sizeBytes: number): Promise<AgentDisks | string> => {
  if (process.getuid?.() !== 0) return "Cairn does not run as root, and mounting a filesystem for each agent takes it"
  const found = { mkfs: onPath("mkfs.ext4"), mount: onPath("mount"), umount: onPath("umount"), losetup: onPath("losetup") }
  const missing = Object.entries(found).filter(([, path]) => path === undefined).map(([name]) => name === "mkfs" ? "mkfs.ext4" : name)
  if (missing.length > 0) return `${missing.join(", ")} not found on PATH (Debian: e2fsprogs, mount)`
  const tools = found as Tools
  const imagesDir = Path.join(dataDir, "agents-disks")
  Fs.mkdirSync(imagesDir, { recursive: true, mode: 0o700 })
  const disks = agentDisks(tools, imagesDir, sizeBytes)
  const probeHome = Path.join(imagesDir, `.probe-${process.pid}`)
  try {
    await disks.attach(probeHome)
    return disks
  } catch (error) {
    return `an agent's filesystem could not be made and mounted here: ${(error as Error).message}`
  } finally {
    await disks.remove(probeHome).catch(() => {})
    Fs.rmSync(probeHome, { recursive: true, force: true })
  }
}

const agentDisks = (tools: Tools, imagesDir: string, sizeBytes: number): AgentDisks => {
  const imageOf = (home: string) => Path.join(imagesDir, `${Path.basename(home)}.ext4`)
  const isMounted = (home: string) => mountedAt().has(Path.resolve(home))

  /** The loop device the image is attached to already, if any (`losetup -j`: `/dev/loop3: []: (/path)`). */
  const attachedDevice = async (image: string) => {
    const line = (await run(tools.losetup, ["-j", image])).split("\n").find((entry) => entry.startsWith("/dev/"))
    return line?.slice(0, line.indexOf(":"))
  }

  const mount = async (image: string, at: string) => {
    const device = await attachedDevice(image)
    await run(tools.mount, device === undefined
      ? ["-t", "ext4", "-o", mountOptions, image, at]
      : ["-t", "ext4", "-o", "nosuid,nodev,noatime,discard", device, at])
  }

  const makeImage = async (image: string) => {
    const partial = `${image}.new`
    Fs.rmSync(partial, { force: true })
    const file = Fs.openSync(partial, "wx", 0o600)
    Fs.ftruncateSync(file, sizeBytes)
    Fs.closeSync(file)
    // Lazy inode tables and journal: made in 10 ms, taking about 4 MB of the host's disk whatever the size.
    await run(tools.mkfs, ["-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", partial])
    Fs.renameSync(partial, image)
  }

  /** Copies what the home held before it had a filesystem of its own into it (links kept as links), then clears it. */
  const moveInto = async (home: string, image: string) => {
    const staging = `${image}.mnt`
    Fs.mkdirSync(staging, { recursive: true })
    await mount(image, staging)
    try {
      await run("cp", ["-a", "--no-dereference", `${home}/.`, `${staging}/`])
    } finally {
      await run(tools.umount, [staging])
      Fs.rmdirSync(staging)
    }
    for (const entry of Fs.readdirSync(home)) Fs.rmSync(Path.join(home, entry), { recursive: true, force: true })
  }

  const unmount = async (home: string) => {
    if (isMounted(home)) await run(tools.umount, [Path.resolve(home)])
  }

  return {
    sizeBytes,
    attach: async (home) => {
      if (isMounted(home)) return
      const image = imageOf(home)
      const fresh = !Fs.existsSync(image)
      if (fresh) await makeImage(image)
      Fs.mkdirSync(home, { recursive: true })
      // The home is Cairn's path (DATA_DIR/agents/<id>), never a link: lstat says what it is before anything is moved.
      if (!Fs.lstatSync(home).isDirectory()) throw new Error(`${home} is not a folder`)
      if (fresh && Fs.readdirSync(home).length > 0) await moveInto(home, image)
      await mount(image, home)
      if (fresh) Fs.rmSync(Path.join(home, "lost+found"), { recursive: true, force: true })
    },
    usedBytes: (home) => {
      if (!isMounted(home)) return undefined
      const stats = Fs.statfsSync(home)
      return (stats.blocks - stats.bfree) * stats.bsize
    },
    detach: unmount,
    remove: async (home) => {
      await unmount(home)
      Fs.rmSync(imageOf(home), { force: true })
    }
  }
}
