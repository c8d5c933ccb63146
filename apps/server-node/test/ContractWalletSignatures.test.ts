/**
 * Contract-wallet signatures against a real chain: Foundry's `anvil` (from npm, `@foundry-rs/anvil`) runs a local
 * chain with id 1 (the chain the EIP-712 domain names); a minimal ERC-1271 wallet and its CREATE2 factory
 * (fixtures/OwnedWallet.sol, compiled here with solc from npm) are deployed on it; Cairn runs with
 * `SIGNATURE_RPC_URL` pointing at it. Through the pinata SDK, Cairn accepts a CID signed by the deployed wallet's
 * owner, refuses one signed by another key, and accepts an ERC-6492 signature of a wallet not yet deployed (the
 * factory call wrapped around the owner's signature), without deploying it.
 */
import { domain, primaryType, types } from "@cairn/signatures"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PinataSDK } from "pinata"
import {
  type Abi,
  createPublicClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  http,
  keccak256,
  serializeErc6492Signature
} from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { mainnet } from "viem/chains"
import { cli, freePort, type ServerProcess, startServer, waitUntilServing } from "../src/testing/index.ts"

const require = createRequire(import.meta.url)

interface Compiled {
  readonly abi: Abi
  readonly bytecode: Hex
}

/** The fixture's two contracts, compiled with the solc package's own compiler (no download). */
const compile = (): { readonly wallet: Compiled; readonly factory: Compiled } => {
  const solc = require("solc") as { compile: (input: string) => string }
  const source = readFileSync(join(import.meta.dirname, "fixtures", "OwnedWallet.sol"), "utf8")
  const output = JSON.parse(solc.compile(JSON.stringify({
    language: "Solidity",
    sources: { "OwnedWallet.sol": { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: "paris", outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } }
  }))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === "error")
  assert.deepStrictEqual(errors.map((error) => error.formattedMessage), [])
  const contract = (name: string): Compiled => {
    const compiled = output.contracts["OwnedWallet.sol"]![name]!
    return { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }
  }
  return { wallet: contract("OwnedWallet"), factory: contract("OwnedWalletFactory") }
}

/** anvil's first dev account (its well-known test key, funded at start): it deploys the contracts. */
const deployer = privateKeyToAccount("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")

const dataDir = mkdtempSync(join(tmpdir(), "cairn-contract-wallets-"))
let anvil: ChildProcess
let anvilOutput = ""
let rpcUrl: string
let server: ServerProcess
let pinata: PinataSDK
let contracts: ReturnType<typeof compile>
let factory: Hex
const owner = privateKeyToAccount(generatePrivateKey())
const stranger = privateKeyToAccount(generatePrivateKey())

const publicClient = () => createPublicClient({ chain: mainnet, transport: http(rpcUrl) })

/** The wallet the factory deploys, or would deploy, for the owner at this salt. */
const walletAddress = (walletOwner: Hex, salt: Hex) =>
  getContractAddress({
    opcode: "CREATE2",
    from: factory,
    salt,
    bytecode: `${contracts.wallet.bytecode}${encodeAbiParameters([{ type: "address" }], [walletOwner]).slice(2)}` as Hex
  })

/** A fresh file's CID and first upload time: what a signature covers. */
const upload = async (label: string) => {
  const file = await pinata.upload.public.file(new File([`${label} ${Date.now()} ${Math.random()}`], `${label}.txt`))
  return { cid: file.cid, date: file.created_at }
}

const signFor = (signer: typeof owner, wallet: Hex, file: { cid: string; date: string }) =>
  signer.signTypedData({ domain, types, primaryType, message: { address: wallet, cid: file.cid, date: file.date } })

/** The SDK's rejection message of a call, or undefined when it succeeded. */
const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise
    return undefined
  } catch (error) {
    return String(error)
  }
}

beforeAll(async () => {
  contracts = compile()
  const port = await freePort()
  rpcUrl = `http://127.0.0.1:${port}`
  const binary = join(import.meta.dirname, "..", "..", "..", "node_modules", ".bin", "anvil")
  anvil = spawn(binary, ["--host", "127.0.0.1", "--port", String(port), "--chain-id", "1"], { stdio: ["ignore", "pipe", "pipe"] })
  anvil.stdout!.on("data", (chunk: Buffer) => (anvilOutput += chunk.toString()))
  anvil.stderr!.on("data", (chunk: Buffer) => (anvilOutput += chunk.toString()))
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      assert.strictEqual(await publicClient().getChainId(), 1)
      break
    } catch (error) {
      if (Date.now() > deadline || anvil.exitCode !== null) throw new Error(`anvil did not start: ${anvilOutput}`, { cause: error })
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
  const walletClient = createWalletClient({ account: deployer, chain: mainnet, transport: http(rpcUrl) })
  const deployment = await walletClient.deployContract({ abi: contracts.factory.abi, bytecode: contracts.factory.bytecode })
  const receipt = await publicClient().waitForTransactionReceipt({ hash: deployment, pollingInterval: 50 })
  factory = receipt.contractAddress!

  server = await startServer({ DATA_DIR: dataDir, SIGNATURE_RPC_URL: rpcUrl })
  await waitUntilServing(server)
  const env = { url: server.url, dataDir }
  const workspaceId = cli(env, "workspace", "create", "--name", "Wallets")
  const jwt = cli(env, "key", "create", "--workspace", workspaceId, "--user", "ada", "--scopes", "org:files:read,org:files:write")
  pinata = new PinataSDK({ pinataJwt: jwt, pinataGateway: "127.0.0.1", endpointUrl: `${server.url}/v3`, uploadUrl: `${server.url}/v3` })
}, 120_000)

afterAll(async () => {
  if (server !== undefined && server.child.exitCode === null) {
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0, server.output())
  }
  if (anvil !== undefined && anvil.exitCode === null) {
    const exited = new Promise((resolve) => anvil.once("exit", resolve))
    anvil.kill("SIGTERM")
    await exited
  }
  rmSync(dataDir, { recursive: true, force: true })
})

describe("contract-wallet signatures on a real chain (anvil)", () => {
  it("accepts a deployed ERC-1271 wallet's signature by its owner, and refuses another key's", async () => {
    const salt = keccak256(new TextEncoder().encode("deployed"))
    const walletClient = createWalletClient({ account: deployer, chain: mainnet, transport: http(rpcUrl) })
    const hash = await walletClient.writeContract({ address: factory, abi: contracts.factory.abi, functionName: "deploy", args: [owner.address, salt] })
    assert.strictEqual((await publicClient().waitForTransactionReceipt({ hash, pollingInterval: 50 })).status, "success")
    const wallet = walletAddress(owner.address, salt)
    assert.notStrictEqual(await publicClient().getCode({ address: wallet }), undefined)
    assert.strictEqual(await publicClient().readContract({ address: wallet, abi: contracts.wallet.abi, functionName: "owner" }), owner.address)

    // Another key signing for the wallet: the wallet says no, so Cairn refuses it and stores nothing.
    const refusedFile = await upload("refused")
    const byStranger = await signFor(stranger, wallet, refusedFile)
    const refused = await refusal(pinata.signatures.public.add({ cid: refusedFile.cid, signature: byStranger, address: wallet }))
    assert.match(refused ?? "accepted", /Validation failed: /)
    assert.match((await refusal(pinata.signatures.public.get(refusedFile.cid))) ?? "found", /404|not found/i)

    // The owner's signature: the wallet's isValidSignature accepts it on chain.
    const file = await upload("signed")
    const signature = await signFor(owner, wallet, file)
    assert.deepStrictEqual(await pinata.signatures.public.add({ cid: file.cid, signature, address: wallet }), { cid: file.cid, signature })
    assert.deepStrictEqual(await pinata.signatures.public.get(file.cid), { cid: file.cid, signature })
  })

  it("accepts an ERC-6492 signature of a wallet not deployed yet, without deploying it; refuses a stranger's", async () => {
    const salt = keccak256(new TextEncoder().encode("counterfactual"))
    const wallet = walletAddress(owner.address, salt)
    assert.strictEqual(await publicClient().getCode({ address: wallet }), undefined)
    const factoryData = encodeFunctionData({ abi: contracts.factory.abi, functionName: "deploy", args: [owner.address, salt] })
    const wrap = (signature: Hex) => serializeErc6492Signature({ address: factory, data: factoryData, signature })

    const refusedFile = await upload("counterfactual-refused")
    const byStranger = wrap(await signFor(stranger, wallet, refusedFile))
    assert.match((await refusal(pinata.signatures.public.add({ cid: refusedFile.cid, signature: byStranger, address: wallet }))) ?? "accepted", /Validation failed: /)
    // The bare owner's signature, without the wrapper: nothing at the address to ask, so it does not verify.
    const bareFile = await upload("counterfactual-bare")
    const bare = await signFor(owner, wallet, bareFile)
    assert.match((await refusal(pinata.signatures.public.add({ cid: bareFile.cid, signature: bare, address: wallet }))) ?? "accepted", /Validation failed: /)

    const file = await upload("counterfactual")
    const signature = wrap(await signFor(owner, wallet, file))
    assert.deepStrictEqual(await pinata.signatures.public.add({ cid: file.cid, signature, address: wallet }), { cid: file.cid, signature })
    // Verified by simulation (eth_call): the wallet is still not on chain.
    assert.strictEqual(await publicClient().getCode({ address: wallet }), undefined)
  })
})
