// NIP-77 reconciliation by two client libraries nobody here wrote, run by
// TestNegentropyWithNostrToolsAndNDKSync (localdev/e2e/negentropy_test.go):
//   - nostr-tools 2.25.2's nip77 NegentropySync (with its
//     Negentropy and NegentropyStorageVector) over a nostr-tools Relay
//     that signs in itself (relay.onauth) on the challenge the relay
//     pushes at connect: NegentropySync sends on that authenticated socket.
//   - @nostr-dev-kit/sync 1.0.0's NDKSync.sync, as an NDK 3.0.3 app syncs:
//     its storage is what NDK's cache adapter holds (a small in-memory one
//     here, NDKSync requires one), NDK signs in itself
//     (NDKRelayAuthPolicies.signIn), and NDKSync fetches what it needs.
// Each runs as the channel's member and as a key outside the private
// group. The input file (argv[3]) is {channel, member, outsider (secret
// keys, hex), client: [events the client holds]}; the last line printed is
// {"results": {"<lib>/<who>": {need, have, fetched, err}}}.
// Usage: node negsync.mjs <ws-url> <input.json>
import { readFileSync } from 'node:fs'
import WebSocket from 'ws'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent } from 'nostr-tools/pure'
import { matchFilters } from 'nostr-tools/filter'
// nostr-tools 2.25.2 ships nip77 (lib/esm/nip77.js) without naming it in
// its package exports, so it is imported by its file.
import { NegentropySync, NegentropyStorageVector } from './node_modules/nostr-tools/lib/esm/nip77.js'
import NDK, { NDKEvent, NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'
import { NDKSync } from '@nostr-dev-kit/sync'
import { sleep, until } from './wait.mjs'

const [wsURL, inputPath] = process.argv.slice(2)
const input = JSON.parse(readFileSync(inputPath, 'utf8'))
const filter = { kinds: [9], '#h': [input.channel] }
const hexToBytes = (h) => Uint8Array.from(h.match(/../g).map((b) => parseInt(b, 16)))
globalThis.WebSocket = WebSocket
useWebSocketImplementation(WebSocket)
process.on('unhandledRejection', () => {})

// nostr-tools: the library's NegentropySync over a signed-in Relay.
async function nostrTools (secret) {
  const out = { need: [], have: [], fetched: [], err: '' }
  const relay = new Relay(wsURL)
  let signedIn = false
  relay.onauth = async (tpl) => { signedIn = true; return finalizeEvent(tpl, hexToBytes(secret)) }
  await relay.connect()
  await until(() => signedIn, 10000, 'nostr-tools signs in on the pushed challenge')
  await relay.authPromise
  const storage = new NegentropyStorageVector()
  for (const ev of input.client) storage.insert(ev.created_at, ev.id)
  storage.seal()
  await new Promise((resolve) => {
    const sync = new NegentropySync(relay, storage, filter, {
      onhave: (id) => out.have.push(id),
      onneed: (id) => out.need.push(id),
      onclose: (reason) => { if (reason) out.err = reason; resolve() }
    })
    // NegentropySync hands NEG-ERR to onclose without its reason: keep it.
    const custom = sync.subscription.oncustom
    sync.subscription.oncustom = (data) => { if (data[0] === 'NEG-ERR') out.err = String(data[2]); custom(data) }
    sync.start()
    setTimeout(() => { out.err ||= 'no end of reconciliation in 20 s'; resolve() }, 20000)
  })
  relay.close()
  return out
}

// NDK: NDKSync.sync with the client's events in NDK's cache.
async function ndkSync (secret) {
  const out = { need: [], have: [], fetched: [], err: '' }
  const held = input.client.map((e) => ({ ...e }))
  let ndk
  const cacheAdapter = {
    locking: false,
    query: async (sub) => held.filter((e) => matchFilters(sub.filters, e)).map((e) => new NDKEvent(ndk, e)),
    setEvent: async (ev) => { if (!held.some((e) => e.id === ev.id)) held.push(ev.rawEvent()) }
  }
  ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(secret), cacheAdapter, enableOutboxModel: false, autoConnectUserRelays: false })
  let signedIn = false
  const signIn = NDKRelayAuthPolicies.signIn({ ndk })
  ndk.relayAuthDefaultPolicy = async (relay, challenge) => {
    const r = await signIn(relay, challenge)
    signedIn = true
    return r
  }
  await ndk.connect(5000)
  await until(() => signedIn, 10000, 'NDK signs in on the pushed challenge')
  await sleep(300) // the relay's OK to the AUTH
  const relaySet = NDKRelaySet.fromRelayUrls([wsURL], ndk)
  const errors = []
  const res = await new NDKSync(ndk).sync(filter, { relaySet, onRelayError: (_r, e) => errors.push(e.message) })
  out.need = [...res.need]
  out.have = [...res.have]
  out.fetched = res.events.map((e) => e.id)
  out.err = errors.join('; ')
  for (const r of ndk.pool.relays.values()) r.disconnect()
  return out
}

const results = {}
for (const [who, secret] of [['member', input.member], ['outsider', input.outsider]]) {
  for (const [lib, run] of [['nostr-tools', nostrTools], ['ndk-sync', ndkSync]]) {
    try {
      results[`${lib}/${who}`] = await run(secret)
    } catch (e) {
      results[`${lib}/${who}`] = { need: [], have: [], fetched: [], err: 'script: ' + (e?.message ?? String(e)) }
    }
  }
}
console.log(JSON.stringify({ results }))
process.exit(0)
