// Interop check run by TestInteropNostrTools (localdev/e2e/interop_test.go):
// nostr-tools publishes over WebSocket (NIP-42 AUTH after auth-required:),
// subscribes for stored and live events, then reads POST /query with its own
// NIP-98 token. Prints one JSON line with what it saw.
// Usage: node interop.mjs <ws-url> <http-url>
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { getToken } from 'nostr-tools/nip98'

useWebSocketImplementation(WebSocket)

const [wsURL, httpURL] = process.argv.slice(2)
const sk = generateSecretKey()
const pubkey = getPublicKey(sk)
const sign = (t) => finalizeEvent(t, sk)
const now = () => Math.floor(Date.now() / 1000)
const timeout = (ms, what) => new Promise((_, rej) => setTimeout(() => rej(new Error('timeout: ' + what)), ms))

const relay = await Relay.connect(wsURL)
const channel = crypto.randomUUID()
const create = sign({ kind: 9007, created_at: now(), tags: [['h', channel], ['name', 'interop'], ['visibility', 'open']], content: '' })

let beforeAuth = 'accepted'
try {
  await relay.publish(create)
} catch (e) {
  beforeAuth = String(e?.message ?? e)
}
await relay.auth(async (tpl) => sign(tpl))
await relay.publish(create)
const stored = sign({ kind: 9, created_at: now(), tags: [['h', channel]], content: 'stored, from nostr-tools' })
await relay.publish(stored)

// REQ: the stored event, EOSE, then a live one.
const seen = []
let eose
const eosed = new Promise((res) => { eose = res })
let gotLive
const live = sign({ kind: 9, created_at: now(), tags: [['h', channel]], content: 'live, from nostr-tools' })
const liveSeen = new Promise((res) => { gotLive = res })
const sub = relay.subscribe([{ kinds: [9], '#h': [channel] }], {
  onevent: (ev) => { seen.push(ev.id); if (ev.id === live.id) gotLive() },
  oneose: () => eose(),
})
await Promise.race([eosed, timeout(5000, 'EOSE')])
const storedBeforeEose = [...seen]
await relay.publish(live)
await Promise.race([liveSeen, timeout(5000, 'live event')])
sub.close()

// POST /query with a NIP-98 token from nostr-tools.
const filters = [{ kinds: [9], '#h': [channel] }]
const body = JSON.stringify(filters)
const url = httpURL + '/query'
const token = await getToken(url, 'post', (e) => finalizeEvent(e, sk), true, filters)
const res = await fetch(url, { method: 'POST', headers: { Authorization: token, 'Content-Type': 'application/json' }, body })
const events = await res.json()

console.log(JSON.stringify({
  pubkey,
  beforeAuth,
  storedId: stored.id,
  liveId: live.id,
  storedBeforeEose,
  queryStatus: res.status,
  queryIds: Array.isArray(events) ? events.map((e) => e.id) : events,
}))
relay.close()
process.exit(0)
