// Flotilla's space sync and the bursts of one-shot reads it and NDK send,
// run by TestSpaceSyncBurstsAreServed (localdev/e2e/reqburst_test.go):
//   - welshman 0.8.15's own pull (@welshman/net diff.js): a NIP-77
//     reconciliation per filter of the space (NEG-OPEN for each at once),
//     then the missing ids fetched 100 to a REQ, every REQ at once
//     (requestOne with autoClose: CLOSE on EOSE), over a pool whose socket
//     signs in on the relay's challenge (makeSocketPolicyAuth), as Flotilla
//     loads a space it holds nothing of; twice at once, as a second tab or
//     a reload does.
//   - NDK 3.0.3's fetchEvents, 40 at once on one connection, each a
//     distinct time window of the space (not grouped), each closed on EOSE.
// Every relay message is recorded; the last line printed is
// {"welshman": {fetched, reqs, negOpens}, "ndk": {fetched, reqs},
//  "refusals": ["<verb> <id> <reason>", ...], "notices": [...]}.
// Usage: node reqburst.mjs <ws-url> <input.json>
// input: {channel, secret (hex), kinds: [[9], [7], ...], until}
import { readFileSync } from 'node:fs'
import WebSocket from 'ws'
import { netContext, Pool, Socket, SocketEvent, AuthStatus, defaultSocketPolicies, makeSocketPolicyAuth, pull } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import NDK, { NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'
import { sleep, until } from './wait.mjs'

const [wsURL, inputPath] = process.argv.slice(2)
const input = JSON.parse(readFileSync(inputPath, 'utf8'))
import { createHash } from 'node:crypto'
globalThis.WebSocket = WebSocket
// welshman's negentropy fingerprints with crypto.subtle in a browser (as
// Flotilla runs it) and, where there is no window, with a global
// crypto.createHash that Node 20's global (Web Crypto) object lacks:
// given Node's own, its reconciliation runs past one frame here too.
if (typeof globalThis.crypto.createHash !== 'function') globalThis.crypto.createHash = createHash
process.on('unhandledRejection', () => {})
// Checking 4,000 signatures (two pulls of the space) on this
// shared 2-core machine outlasts welshman's 30 s request timeout: the
// relay's answers are what this measures, not the client's checks.
netContext.isEventValid = () => true

const out = { welshman: { fetched: 0, reqs: 0, negOpens: 0 }, ndk: { fetched: 0, reqs: 0 }, refusals: [], notices: [] }
const watch = (m) => {
  if (!Array.isArray(m)) return
  if (m[0] === 'CLOSED' || m[0] === 'NEG-ERR' || m[0] === 'NEG-ERROR') out.refusals.push(`${m[0]} ${m[1]} ${m[2]}`)
  if (m[0] === 'NOTICE') out.notices.push(String(m[1]))
}

// welshman: its pull, over a pool whose sockets sign in.
const signer = Nip01Signer.fromSecret(input.secret)
const pool = new Pool({
  makeSocket: (url) => {
    const s = new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => signer.sign(e), shouldAuth: () => true })])
    s.on(SocketEvent.Receive, watch)
    s.on(SocketEvent.Send, (m) => {
      if (m[0] === 'REQ') out.welshman.reqs++
      if (m[0] === 'NEG-OPEN') out.welshman.negOpens++
    })
    return s
  }
})
const socket = pool.get(wsURL)
socket.open()
await until(() => socket.auth.status === AuthStatus.Ok, 10000, 'welshman signs in on the pushed challenge')
const filters = input.kinds.map((kinds) => ({ kinds, '#h': [input.channel] }))
const pulls = await Promise.all([0, 1].map(() => pull({ relays: [wsURL], filters, events: [], context: { pool } })))
out.welshman.fetched = Math.min(...pulls.map((evs) => new Set(evs.map((e) => e.id)).size))
pool.clear()

// NDK: 40 one-shot fetches at once, each its own REQ.
const ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(input.secret), enableOutboxModel: false, autoConnectUserRelays: false })
let signedIn = false
const signIn = NDKRelayAuthPolicies.signIn({ ndk })
ndk.relayAuthDefaultPolicy = async (relay, challenge) => {
  const r = await signIn(relay, challenge)
  signedIn = true
  return r
}
await ndk.connect(5000)
await until(() => signedIn, 10000, 'NDK signs in on the pushed challenge')
await sleep(300)
for (const r of ndk.pool.relays.values()) {
  const ws = r.connectivity?.ws
  if (ws) {
    ws.addEventListener('message', (e) => { try { watch(JSON.parse(e.data)) } catch {} })
    const send = ws.send.bind(ws)
    ws.send = (d) => { if (String(d).startsWith('["REQ"')) out.ndk.reqs++; return send(d) }
  }
}
const relaySet = NDKRelaySet.fromRelayUrls([wsURL], ndk)
const fetched = await Promise.all(Array.from({ length: 40 }, (_, i) =>
  ndk.fetchEvents({ kinds: [9], '#h': [input.channel], until: input.until - i * 60, limit: 5 }, { closeOnEose: true, groupable: false }, relaySet)))
out.ndk.fetched = fetched.reduce((n, s) => n + s.size, 0)
for (const r of ndk.pool.relays.values()) r.disconnect()
console.log(JSON.stringify(out))
process.exit(0)
