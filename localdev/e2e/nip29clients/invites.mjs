// NIP-43 invites as Flotilla runs them, with welshman 0.8.15 (Flotilla's
// library and kinds), run by TestFlotillaInviteFlowWithWelshman
// (localdev/e2e/invites_test.go): an admin asks the relay for an invite
// (Flotilla's requestRelayClaim: REQ {kinds:[RELAY_INVITE], limit:1}) and
// shares its claim; a new key joins with it (RELAY_JOIN with the claim
// as Flotilla sends it), then reads and writes in the members-only
// community; a second key's use of the single-use claim is refused. Every
// step is a check; the last line printed is {"checks":[...], "claim"}.
// Usage: node invites.mjs <ws-url> <admin-secret-hex> <channel-id> <relay-pubkey>
import WebSocket from 'ws'
import { AuthStatus, Pool, Socket, defaultSocketPolicies, makeSocketPolicyAuth, publishOne, request } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { RELAY_INVITE, RELAY_JOIN, getTagValue, makeEvent } from '@welshman/util'
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { sleep } from './wait.mjs'

globalThis.WebSocket = WebSocket

const [wsURL, adminSecret, channel, relayPubkey] = process.argv.slice(2)
const checks = []
const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: String(detail) })

// A welshman user: its signer and a pool signing in on every socket.
const user = (secret = Buffer.from(generateSecretKey()).toString('hex')) => {
  const signer = Nip01Signer.fromSecret(secret)
  const pool = new Pool({
    makeSocket: (url) => new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => signer.sign(e), shouldAuth: () => true })]),
  })
  return { signer, pool, pubkey: getPublicKey(Buffer.from(secret, 'hex')) }
}

// signIn opens u's socket and waits for its NIP-42 sign-in (the relay
// pushes the challenge at connect, or answers the first message with it).
const signIn = async (u) => {
  const socket = u.pool.get(wsURL)
  socket.attemptToOpen()
  for (let i = 0; i < 100 && socket.auth.status !== AuthStatus.Ok; i++) {
    if (i === 10) await request({ relays: [wsURL], filters: [{ kinds: [0], limit: 0 }], autoClose: true, signal: AbortSignal.timeout(2000), context: { pool: u.pool } })
    await sleep(100)
  }
  return socket.auth.status === AuthStatus.Ok
}
const send = async (u, template) => {
  const event = await u.signer.sign(template)
  const r = await publishOne({ event, relay: wsURL, timeout: 8000, context: { pool: u.pool } })
  return { ok: r.status === 'success', detail: r.detail ?? '', event }
}
const read = (u, filters) => request({ relays: [wsURL], filters, autoClose: true, signal: AbortSignal.timeout(6000), context: { pool: u.pool } })

let claim = ''
try {
  const admin = user(adminSecret)
  check('the admin signs in', await signIn(admin))
  // Flotilla's requestRelayClaim.
  const [invite] = await read(admin, [{ kinds: [RELAY_INVITE], limit: 1 }])
  claim = getTagValue('claim', invite?.tags || []) || ''
  check('the admin obtains a 28935 with a claim', invite && claim, JSON.stringify(invite))
  check('the 28935 is relay-signed and NIP-70 protected', invite?.pubkey === relayPubkey && invite?.tags.some((t) => t[0] === '-'), JSON.stringify(invite))

  const newcomer = user()
  check('the newcomer signs in', await signIn(newcomer))
  const before = await read(newcomer, [{ kinds: [9], '#h': [channel] }])
  check('before joining, the newcomer reads nothing', before.length === 0, before.length)
  let r = await send(newcomer, makeEvent(9, { content: 'not yet', tags: [['h', channel]] }))
  check('before joining, a write is refused restricted:', !r.ok && r.detail.startsWith('restricted:'), r.detail)

  // Flotilla's join with a link as its makeJoinRequest builds it: RELAY_JOIN
  // with the claim alone (no ["-"]; NIP-70's tag is accepted but not required).
  r = await send(newcomer, makeEvent(RELAY_JOIN, { tags: [['claim', claim]] }))
  check('the newcomer joins with the claim', r.ok, r.detail)
  const after = await read(newcomer, [{ kinds: [9], '#h': [channel] }])
  check("the member reads the admin's message", after.some((e) => e.content === 'welcome, whoever you are'), after.length)
  const mine = 'newcomer-' + Date.now()
  r = await send(newcomer, makeEvent(9007, { tags: [['h', mine], ['name', mine]] }))
  check('the member creates a channel', r.ok, r.detail)
  r = await send(newcomer, makeEvent(9, { content: 'hello from a new member', tags: [['h', mine]] }))
  check('the member writes', r.ok, r.detail)
  const back = await read(newcomer, [{ kinds: [9], '#h': [mine] }])
  check('the member reads its own message back', back.some((e) => e.content === 'hello from a new member'), back.length)
  r = await send(newcomer, makeEvent(RELAY_JOIN, { tags: [['-'], ['claim', claim]] }))
  check('joining again is OK true, duplicate:', r.ok && r.detail.startsWith('duplicate:'), r.detail)

  const second = user()
  check('a second key signs in', await signIn(second))
  r = await send(second, makeEvent(RELAY_JOIN, { tags: [['-'], ['claim', claim]] }))
  // Buzz's relay's answers: a used-up code is told as such, an unknown one
  // gets the one answer every code it does not honour gets.
  check('a second use of the single-use claim is refused restricted: invite_exhausted', !r.ok && r.detail.startsWith('restricted: invite_exhausted'), r.detail)
  const unknown = await send(second, makeEvent(RELAY_JOIN, { tags: [['-'], ['claim', 'a'.repeat(32)]] }))
  check('an unknown claim is refused restricted: invite_invalid', !unknown.ok && unknown.detail.startsWith('restricted: invite_invalid'), unknown.detail)
  const bare = await send(second, makeEvent(RELAY_JOIN, { tags: [['claim', claim]] }))
  check('the spent claim without ["-"] gets the same words', !bare.ok && bare.detail === r.detail, bare.detail)
  r = await send(second, makeEvent(9, { content: 'still out', tags: [['h', channel]] }))
  check('the refused key still cannot write', !r.ok && r.detail.startsWith('restricted:'), r.detail)
} catch (e) {
  check('the script ran to its end', false, e?.stack ?? e)
}
await sleep(100)
console.log(JSON.stringify({ checks, claim }))
process.exit(0)
