import { type ApiKeyClaims, type Grant, PlatformToken, TokenSigner } from "@cairn/auth"
import { JoseTokenSigner } from "@cairn/auth/node"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Redacted, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as jose from "jose"
import { spawn } from "node:child_process"
import { join } from "node:path"
import * as TempDir from "../TempDir.ts"

const claims: ApiKeyClaims = { userId: "user-1", workspaceId: "ws-1", keyId: "key-1", scopes: ["agents:read", "agents:write"] }

const signerFrom = <E>(layer: Layer.Layer<TokenSigner, E>) =>
  Layer.build(layer).pipe(Effect.map(Context.get(TokenSigner)))

const withConfig = (env: Record<string, string>) => Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))

/** A token signed with the active key of `keys` (and its kid), with any payload: for claims we never issue. */
const craft = (
  keys: Redacted.Redacted<JoseTokenSigner.KeySet>,
  payload: jose.JWTPayload,
  header: Partial<jose.JWTHeaderParameters> = {}
) =>
  Effect.promise(async () => {
    const { active } = Redacted.value(keys)
    const kid = await jose.calculateJwkThumbprint(active)
    const key = await jose.importJWK(active, "ES256")
    return new jose.SignJWT(payload).setProtectedHeader({ alg: "ES256", kid, ...header }).sign(key)
  })

const reasonOf = (signer: TokenSigner["Service"], token: string) =>
  Effect.flip(signer.verifyApiKey(token)).pipe(Effect.map((error) => error.reason))

const fixture = Effect.gen(function*() {
  const keys = yield* JoseTokenSigner.generate
  const signer = yield* JoseTokenSigner.make(keys)
  return { keys, signer }
})

describe("JoseTokenSigner", () => {
  describe("issuing and verifying", () => {
    it.effect("an issued key verifies to the claims it was issued with", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims)
        assert.deepStrictEqual(yield* signer.verifyApiKey(token), claims)
      }))

    it.effect("a token carries iss, sub, jti, wid, scp, iat and the ES256 header with the key's thumbprint", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        yield* TestClock.setTime(1_700_000_000_500)
        const token = yield* signer.issueApiKey(claims, { expiresInSeconds: 3600 })
        const kid = yield* Effect.promise(() => jose.calculateJwkThumbprint(Redacted.value(keys).active))
        assert.deepStrictEqual(jose.decodeProtectedHeader(token), { alg: "ES256", kid })
        assert.deepStrictEqual(jose.decodeJwt(token), {
          wid: "ws-1",
          scp: ["agents:read", "agents:write"],
          iss: "cairn",
          jti: "key-1",
          iat: 1_700_000_000,
          sub: "user-1",
          exp: 1_700_003_600
        })
      }))

    it.effect("a key issued without expiry has no exp claim", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims)
        assert.notProperty(jose.decodeJwt(token), "exp")
      }))

    it.effect("a key for no user omits sub and verifies with an empty userId", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey({ ...claims, userId: "" })
        assert.notProperty(jose.decodeJwt(token), "sub")
        assert.deepStrictEqual(yield* signer.verifyApiKey(token), { ...claims, userId: "" })
      }))

    it.effect("a token with no scopes verifies with an empty list", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey({ ...claims, scopes: [] })
        assert.deepStrictEqual((yield* signer.verifyApiKey(token)).scopes, [])
      }))
  })

  describe("platform tokens", () => {
    it.effect("verify to their agent, workspace, user and expiry for an hour, and are no API keys", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const platform = { agentId: "a1", workspaceId: "w1", userId: "u1" }
        const { token, expiresAt } = yield* signer.issuePlatformToken(platform)
        assert.isTrue(PlatformToken.claimsPlatform(token))
        assert.deepStrictEqual(yield* signer.verifyPlatformToken(token), { ...platform, expiresAt })
        assert.strictEqual(yield* reasonOf(signer, token), "missing-claims")
        const apiKey = yield* signer.issueApiKey(claims)
        assert.isFalse(PlatformToken.claimsPlatform(apiKey))
        assert.strictEqual((yield* Effect.flip(signer.verifyPlatformToken(apiKey))).reason, "missing-claims")
        yield* TestClock.adjust("3600 seconds")
        assert.strictEqual((yield* Effect.flip(signer.verifyPlatformToken(token))).reason, "expired")
      }))
  })

  describe("signed URLs' grants", () => {
    const grant: Grant = {
      purpose: "download",
      grantId: "grant-1",
      workspaceId: "ws-1",
      userId: "user-1",
      keyId: "key-1",
      issuedAt: 1_700_000_000,
      expiresAt: 1_700_000_060,
      terms: { cid: "bafy", method: "GET" }
    }
    const reasonOfGrant = (signer: TokenSigner["Service"], token: string, purpose: Grant["purpose"] = "download") =>
      Effect.flip(signer.verifyGrant(token, purpose)).pipe(Effect.map((error) => error.reason))

    it.effect("a grant verifies to itself until it expires, by the effect clock", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        yield* TestClock.setTime(1_700_000_030_000)
        const token = yield* signer.issueGrant(grant)
        assert.deepStrictEqual(yield* signer.verifyGrant(token, "download"), grant)
        assert.deepInclude(jose.decodeJwt(token) as Record<string, unknown>, { iss: "cairn", aud: "cairn:download", jti: "grant-1", sub: "user-1", wid: "ws-1", kid: "key-1", iat: 1_700_000_000, exp: 1_700_000_060 })
        yield* TestClock.setTime(1_700_000_060_000)
        assert.strictEqual(yield* reasonOfGrant(signer, token), "expired")
      }))

    it.effect("a grant of one purpose is not one of the other, nor an API key; an API key is not a grant", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        yield* TestClock.setTime(1_700_000_030_000)
        const download = yield* signer.issueGrant(grant)
        const upload = yield* signer.issueGrant({ ...grant, purpose: "upload" })
        assert.strictEqual(yield* reasonOfGrant(signer, download, "upload"), "missing-claims")
        assert.strictEqual(yield* reasonOfGrant(signer, upload, "download"), "missing-claims")
        assert.strictEqual(yield* reasonOf(signer, download), "missing-claims")
        assert.strictEqual(yield* reasonOfGrant(signer, yield* signer.issueApiKey(claims)), "missing-claims")
      }))

    it.effect("a grant altered, or signed by another key, does not verify", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const other = yield* JoseTokenSigner.make(yield* JoseTokenSigner.generate)
        yield* TestClock.setTime(1_700_000_030_000)
        const token = yield* signer.issueGrant(grant)
        const [header, payload, signature] = token.split(".")
        const longer = Buffer.from(JSON.stringify({ ...jose.decodeJwt(token), exp: 1_900_000_000 })).toString("base64url")
        assert.strictEqual(yield* reasonOfGrant(signer, `${header}.${longer}.${signature}`), "bad-signature")
        assert.notStrictEqual(payload, longer)
        assert.strictEqual(yield* reasonOfGrant(other, token), "bad-signature")
        assert.strictEqual(yield* reasonOfGrant(signer, "not-a-token"), "malformed")
      }))
  })

  describe("rejecting", () => {
    it.effect("a key is accepted until its expiry and expired from then on", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims, { expiresInSeconds: 60 })
        yield* TestClock.adjust("59 seconds")
        assert.deepStrictEqual(yield* signer.verifyApiKey(token), claims)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* reasonOf(signer, token), "expired")
      }))

    it.effect("a key issued with a negative expiry is already expired", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims, { expiresInSeconds: -1 })
        assert.strictEqual(yield* reasonOf(signer, token), "expired")
      }))

    it.effect("a token signed by a key we do not hold is a bad signature", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const stranger = yield* fixture
        const token = yield* stranger.signer.issueApiKey(claims)
        assert.strictEqual(yield* reasonOf(signer, token), "bad-signature")
      }))

    it.effect("a token signed by another key under our kid is a bad signature", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        const stranger = yield* JoseTokenSigner.generate
        const kid = yield* Effect.promise(() => jose.calculateJwkThumbprint(Redacted.value(keys).active))
        const forged = yield* craft(stranger, { iss: "cairn", jti: "key-1", wid: "ws-1", scp: [] }, { kid })
        assert.strictEqual(yield* reasonOf(signer, forged), "bad-signature")
      }))

    it.effect("a token whose payload was altered after signing is a bad signature", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const [header, , signature] = (yield* signer.issueApiKey(claims)).split(".")
        const payload = jose.base64url.encode(JSON.stringify({ iss: "cairn", jti: "key-1", wid: "ws-2", scp: ["*"] }))
        assert.strictEqual(yield* reasonOf(signer, `${header}.${payload}.${signature}`), "bad-signature")
      }))

    it.effect("an HS256 or unsigned (alg none) token is a bad signature, even under our kid", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        const kid = yield* Effect.promise(() => jose.calculateJwkThumbprint(Redacted.value(keys).active))
        const body = { iss: "cairn", jti: "key-1", wid: "ws-1", scp: [] }
        const hs256 = yield* Effect.promise(() =>
          new jose.SignJWT(body).setProtectedHeader({ alg: "HS256", kid }).sign(new Uint8Array(32))
        )
        const unsigned = new jose.UnsecuredJWT(body).encode()
        assert.strictEqual(yield* reasonOf(signer, hs256), "bad-signature")
        assert.strictEqual(yield* reasonOf(signer, unsigned), "bad-signature")
      }))

    it.effect("garbage is malformed", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims)
        const [header, payload] = token.split(".")
        const garbage = [
          "",
          "not-a-token",
          "a.b.c",
          `${token}.extra`,
          `${header}.${payload}`,
          `${header}.${payload}.***`,
          `${jose.base64url.encode("[1,2]")}.${payload}.sig`,
          `${jose.base64url.encode("{")}.${payload}.sig`
        ]
        for (const candidate of garbage) {
          assert.strictEqual(yield* reasonOf(signer, candidate), "malformed", candidate)
        }
      }))

    it.effect("a correctly signed token whose payload is not a JSON object is malformed", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        const { active } = Redacted.value(keys)
        const token = yield* Effect.promise(async () =>
          new jose.CompactSign(new TextEncoder().encode("not json"))
            .setProtectedHeader({ alg: "ES256", kid: await jose.calculateJwkThumbprint(active) })
            .sign(await jose.importJWK(active, "ES256"))
        )
        assert.strictEqual(yield* reasonOf(signer, token), "malformed")
      }))

    it.effect.prop("any random string is refused as malformed, never a defect", [Schema.String], ([candidate]) =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        assert.strictEqual(yield* reasonOf(signer, candidate), "malformed")
      }), { arbitrary: { runs: 50 } })

    it.effect("a token from another issuer, or from none, is the wrong issuer", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        const body = { jti: "key-1", wid: "ws-1", scp: [] }
        assert.strictEqual(yield* reasonOf(signer, yield* craft(keys, { ...body, iss: "someone-else" })), "wrong-issuer")
        assert.strictEqual(yield* reasonOf(signer, yield* craft(keys, body)), "wrong-issuer")
      }))

    it.effect("a token without a workspace, a key id or scopes is missing claims", () =>
      Effect.gen(function*() {
        const { keys, signer } = yield* fixture
        const full = { iss: "cairn", sub: "user-1", jti: "key-1", wid: "ws-1", scp: ["agents:read"] }
        const { wid: _wid, ...noWorkspace } = full
        const { jti: _jti, ...noKeyId } = full
        const { scp: _scp, ...noScopes } = full
        const incomplete = [noWorkspace, noKeyId, noScopes, { ...full, wid: "" }, { ...full, scp: "agents:read" }]
        for (const payload of incomplete) {
          assert.strictEqual(yield* reasonOf(signer, yield* craft(keys, payload)), "missing-claims", JSON.stringify(payload))
        }
        assert.deepStrictEqual(yield* signer.verifyApiKey(yield* craft(keys, full)), {
          userId: "user-1",
          workspaceId: "ws-1",
          keyId: "key-1",
          scopes: ["agents:read"]
        })
      }))
  })

  describe("key rotation and the JWKS", () => {
    it.effect("a token signed by a key rotated into previous still verifies; new tokens use the new key", () =>
      Effect.gen(function*() {
        const before = yield* fixture
        const old = yield* before.signer.issueApiKey(claims)
        const rotated = yield* JoseTokenSigner.rotate(before.keys)
        const after = yield* JoseTokenSigner.make(rotated)
        assert.deepStrictEqual(yield* after.verifyApiKey(old), claims)
        const fresh = yield* after.issueApiKey(claims)
        const [activeKey, previousKey] = (yield* after.jwks).keys
        assert.strictEqual(jose.decodeProtectedHeader(fresh).kid, activeKey!.kid)
        assert.strictEqual(jose.decodeProtectedHeader(old).kid, previousKey!.kid)
        // The old signer never learnt the new key.
        assert.strictEqual(yield* reasonOf(before.signer, fresh), "bad-signature")
      }))

    it.effect("once a previous key is dropped its tokens no longer verify", () =>
      Effect.gen(function*() {
        const before = yield* fixture
        const old = yield* before.signer.issueApiKey(claims)
        const rotated = Redacted.value(yield* JoseTokenSigner.rotate(before.keys))
        const dropped = yield* JoseTokenSigner.make(Redacted.make({ active: rotated.active, previous: [] }))
        assert.strictEqual(yield* reasonOf(dropped, old), "bad-signature")
      }))

    it.effect("the JWKS lists every verifying key's public part with kid, alg and use, and no private part", () =>
      Effect.gen(function*() {
        const { keys } = yield* fixture
        const rotated = Redacted.value(yield* JoseTokenSigner.rotate(keys))
        // A careless operator pastes a private JWK into previous: it still must not be published.
        const signer = yield* JoseTokenSigner.make(Redacted.make({
          active: rotated.active,
          previous: [...rotated.previous!, Redacted.value(keys).active]
        }))
        const jwks = yield* signer.jwks
        assert.strictEqual(jwks.keys.length, 2)
        for (const jwk of jwks.keys) {
          assert.deepStrictEqual(Object.keys(jwk).sort(), ["alg", "crv", "kid", "kty", "use", "x", "y"])
          assert.strictEqual(jwk["alg"], "ES256")
          assert.strictEqual(jwk["use"], "sig")
          assert.strictEqual(jwk["kid"], yield* Effect.promise(() => jose.calculateJwkThumbprint(jwk as jose.JWK)))
        }
        const published = JSON.stringify(jwks)
        assert.notInclude(published, rotated.active.d)
        assert.notInclude(published, Redacted.value(keys).active.d)
      }))

    it.effect("a verifier that only has the JWKS accepts our tokens", () =>
      Effect.gen(function*() {
        const { signer } = yield* fixture
        const token = yield* signer.issueApiKey(claims)
        const jwks = yield* signer.jwks
        const { payload } = yield* Effect.promise(() =>
          jose.jwtVerify(token, jose.createLocalJWKSet({ keys: jwks.keys as Array<jose.JWK> }), {
            algorithms: ["ES256"],
            issuer: "cairn",
            currentDate: new Date(0)
          })
        )
        assert.strictEqual(payload.jti, "key-1")
      }))
  })

  describe("where the key comes from", () => {
    it.effect("a key file is created with mode 0600 at first start and reused on restart", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "fresh", "data", "signing-key.json")
        const first = yield* JoseTokenSigner.makeFromKeyFile(path)
        assert.strictEqual(yield* TempDir.modeOf(path), 0o600)
        const token = yield* first.issueApiKey(claims)
        const restarted = yield* JoseTokenSigner.makeFromKeyFile(path)
        assert.deepStrictEqual(yield* restarted.jwks, yield* first.jwks)
        assert.deepStrictEqual(yield* restarted.verifyApiKey(token), claims)
        const file = JSON.parse(yield* TempDir.readText(path))
        assert.deepStrictEqual(Object.keys(file).sort(), ["active", "previous"])
        assert.isString(file.active.d)
      }))

    it.effect("concurrent first starts on one data directory agree on one key", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "signing-key.json")
        const signers = yield* Effect.all(
          Array.from({ length: 8 }, () => JoseTokenSigner.makeFromKeyFile(path)),
          { concurrency: "unbounded" }
        )
        const kids = yield* Effect.forEach(signers, (signer) => Effect.map(signer.jwks, (jwks) => jwks.keys[0]!.kid))
        assert.strictEqual(new Set(kids).size, 1)
        const token = yield* signers[3]!.issueApiKey(claims)
        assert.deepStrictEqual(yield* signers[5]!.verifyApiKey(token), claims)
        assert.deepStrictEqual(yield* TempDir.list(dir), ["signing-key.json"])
      }))

    it.live("separate processes started at once on a fresh data directory agree on one key", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "data", "signing-key.json")
        const module = new URL("../../src/node/JoseTokenSigner.ts", import.meta.url).href
        const startAt = Date.now() + 1500
        // Each child waits for the same instant, so their reads, generations and links overlap.
        const script = `
          const { Effect } = await import("effect")
          const Signer = await import(process.env.SIGNER_MODULE)
          await new Promise((resolve) => setTimeout(resolve, Number(process.env.START_AT) - Date.now()))
          const signer = await Effect.runPromise(Signer.makeFromKeyFile(process.env.KEY_FILE))
          const jwks = await Effect.runPromise(signer.jwks)
          process.stdout.write("kid=" + jwks.keys[0].kid + "\\n")
        `
        const run = Effect.callback<string, Error>((resume) => {
          const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
            cwd: new URL("../..", import.meta.url),
            env: { ...process.env, SIGNER_MODULE: module, START_AT: String(startAt), KEY_FILE: path },
            stdio: ["ignore", "pipe", "pipe"]
          })
          let stdout = ""
          let stderr = ""
          child.stdout.on("data", (chunk) => (stdout += chunk))
          child.stderr.on("data", (chunk) => (stderr += chunk))
          child.on("close", (code) =>
            resume(code === 0 ? Effect.succeed(/^kid=(.*)$/m.exec(stdout)?.[1] ?? stdout) : Effect.fail(new Error(`child exited ${code}: ${stderr}`))))
        })
        const kids = yield* Effect.all(Array.from({ length: 4 }, () => run), { concurrency: "unbounded" })
        const expected = yield* JoseTokenSigner.makeFromKeyFile(path).pipe(Effect.flatMap((signer) => signer.jwks))
        assert.deepStrictEqual(kids, kids.map(() => expected.keys[0]!.kid))
        assert.deepStrictEqual(yield* TempDir.list(join(dir, "data")), ["signing-key.json"])
      }), 30_000)

    it.effect("layerConfig uses CAIRN_SIGNING_KEY when set and writes no key file", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const keys = yield* JoseTokenSigner.generate
        const { active } = Redacted.value(keys)
        const signer = yield* signerFrom(JoseTokenSigner.layerConfig({ dataDir: dir })).pipe(
          withConfig({ CAIRN_SIGNING_KEY: JSON.stringify(active) })
        )
        const kid = yield* Effect.promise(() => jose.calculateJwkThumbprint(active))
        assert.strictEqual((yield* signer.jwks).keys[0]!.kid, kid)
        assert.isFalse(yield* TempDir.exists(JoseTokenSigner.keyFilePath(dir)))
      }))

    it.effect("CAIRN_SIGNING_KEY may hold a whole key file, keeping rotated-out keys", () =>
      Effect.gen(function*() {
        const { keys, signer: old } = yield* fixture
        const token = yield* old.issueApiKey(claims)
        const rotated = yield* JoseTokenSigner.rotate(keys)
        const signer = yield* signerFrom(JoseTokenSigner.layerConfig({ dataDir: "/nonexistent" })).pipe(
          withConfig({ CAIRN_SIGNING_KEY: Redacted.value(JoseTokenSigner.encode(rotated)) })
        )
        assert.deepStrictEqual(yield* signer.verifyApiKey(token), claims)
      }))

    it.effect("layerConfig falls back to <dataDir>/signing-key.json", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const signer = yield* signerFrom(JoseTokenSigner.layerConfig({ dataDir: dir })).pipe(withConfig({}))
        const fromFile = yield* JoseTokenSigner.makeFromKeyFile(JoseTokenSigner.keyFilePath(dir))
        assert.deepStrictEqual(yield* signer.jwks, yield* fromFile.jwks)
        assert.strictEqual(yield* TempDir.modeOf(JoseTokenSigner.keyFilePath(dir)), 0o600)
      }))

    it.effect("an unusable configured key fails the layer without echoing the key", () =>
      Effect.gen(function*() {
        const { keys } = yield* fixture
        const { x: _x, ...noPublicPart } = Redacted.value(keys).active
        const secret = Redacted.value(keys).active.d
        const candidates = [
          JSON.stringify(noPublicPart),
          `{"kty":"EC","d":"${secret}"`,
          JSON.stringify({ ...Redacted.value(keys).active, x: "AAAA" })
        ]
        for (const value of candidates) {
          const error = yield* Effect.flip(
            signerFrom(JoseTokenSigner.layerConfig({ dataDir: "/nonexistent" })).pipe(withConfig({ CAIRN_SIGNING_KEY: value }))
          )
          assert.strictEqual(error._tag, "InvalidSigningKey")
          assert.notInclude(String(error), secret)
          assert.notInclude(JSON.stringify(error), secret)
        }
      }))

    it.effect("a private key that does not match its public part is refused at startup", () =>
      Effect.gen(function*() {
        const one = Redacted.value(yield* JoseTokenSigner.generate).active
        const other = Redacted.value(yield* JoseTokenSigner.generate).active
        const error = yield* Effect.flip(JoseTokenSigner.make(Redacted.make({ active: { ...one, d: other.d } }), "test"))
        assert.strictEqual(error._tag, "InvalidSigningKey")
        assert.include(error.message, "test")
      }))

    it.effect("a corrupt key file fails the layer naming the file, not its content", () =>
      Effect.gen(function*() {
        const dir = yield* TempDir.make
        const path = join(dir, "signing-key.json")
        yield* TempDir.writeText(path, `{"active":{"d":"top-secret-material"`)
        const error = yield* Effect.flip(JoseTokenSigner.makeFromKeyFile(path))
        assert.strictEqual(error._tag, "InvalidSigningKey")
        assert.include(error.message, path)
        assert.notInclude(error.message, "top-secret-material")
      }))
  })
})
