// Liveness check run by TestLivenessFrameIsIgnoredByNDKWelshmanAndNostrTools
// (localdev/e2e/nip29clients_test.go): nostr-tools, welshman and NDK each
// open a session the way an app does (sign in on the relay's challenge,
// pushed at connect; one subscription), idle while the relay sends its
// liveness frame, then receive a new event live. It records what each
// library made of the idle frames: liveness frames seen on its socket,
// EOSE callbacks of its subscription, sign-ins, and any visible effect
// (a NOTICE, a closed subscription or socket, an error). The last line
// printed is {"libs": {...}, "effects": [...]}.
// Usage: node liveness.mjs <ws-url> <idle-ms>
import WebSocket from 'ws'
import NDK, { NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'
import { AuthStateEvent, AuthStatus, Socket, SocketEvent, defaultSocketPolicies, makeSocketPolicyAuth } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure'
import { sleep, until } from './wait.mjs'

const [wsURL, idleArg] = process.argv.slice(2)
const idleMs = Number(idleArg)
const LIVENESS = '["EOSE","relay-liveness"]'
const now = () => Math.floor(Date.now() / 1000)
const effects = []
const effect = (lib, what) => effects.push(`${lib}: ${what}`)
const lib = (name) => ({ name, liveness: 0, eoses: 0, signIns: 0, events: [] })
const libs = { 'nostr-tools': lib('nostr-tools'), welshman: lib('welshman'), ndk: lib('ndk') }

// A WebSocket that counts the liveness frames its library is handed.
const counting = (name) => class extends WebSocket {
  constructor (...args) {
    super(...args)
    this.on('message', (data) => { if (String(data) === LIVENESS) libs[name].liveness++ })
  }
}

process.on('unhandledRejection', (e) => effect('process', 'unhandled rejection ' + (e?.message ?? e)))
let idle = false
let closing = false
try {
  // nostr-tools: onauth signs in whenever the relay sends a challenge.
  const sk = generateSecretKey()
  useWebSocketImplementation(counting('nostr-tools'))
  const nt = new Relay(wsURL)
  nt.onauth = async (tpl) => { libs['nostr-tools'].signIns++; return finalizeEvent(tpl, sk) }
  await nt.connect()
  nt.onnotice = (n) => effect('nostr-tools', 'NOTICE ' + n)
  nt.onclose = () => { if (!closing) effect('nostr-tools', 'socket closed') }
  await until(() => libs['nostr-tools'].signIns > 0, 10000, 'nostr-tools signs in on the pushed challenge')
  await sleep(300) // its OK
  const h = crypto.randomUUID()
  await nt.publish(finalizeEvent({ kind: 9007, created_at: now(), tags: [['h', h], ['name', 'liveness'], ['visibility', 'open']], content: '' }, sk))
  const filter = { kinds: [9], '#h': [h] }
  nt.subscribe([filter], {
    onevent: (ev) => libs['nostr-tools'].events.push(ev.id),
    oneose: () => libs['nostr-tools'].eoses++,
    onclose: (r) => { if (idle) effect('nostr-tools', 'subscription closed ' + r) },
  })

  // welshman: a socket with the default policies and sign-in on auth.
  const ws = new Socket(wsURL, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => Nip01Signer.fromSecret(Buffer.from(generateSecretKey()).toString('hex')).sign(e), shouldAuth: () => true })])
  ws.on(SocketEvent.Receiving, (m) => { if (JSON.stringify(m) === LIVENESS) libs.welshman.liveness++ })
  ws.on(SocketEvent.Receive, (m) => {
    if (m[0] === 'EOSE' && m[1] === 'w') libs.welshman.eoses++
    if (m[0] === 'EVENT' && m[1] === 'w') libs.welshman.events.push(m[2].id)
    if (m[0] === 'NOTICE') effect('welshman', 'NOTICE ' + m[1])
  })
  ws.on(SocketEvent.Status, (s) => { if (idle) effect('welshman', 'socket ' + s) })
  ws.on(SocketEvent.Error, (e) => effect('welshman', 'error ' + e))
  ws.auth.on(AuthStateEvent.Status, (s) => {
    if (s === AuthStatus.PendingSignature) libs.welshman.signIns++
    if (idle) effect('welshman', 'auth ' + s)
  })
  ws.open()
  await until(() => ws.auth.status === AuthStatus.Ok, 10000, 'welshman signs in on the pushed challenge')
  ws.send(['REQ', 'w', filter])

  // NDK: signIn on the relay's challenge, a subscription that stays open.
  globalThis.WebSocket = counting('ndk')
  const ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(Buffer.from(generateSecretKey()).toString('hex')), enableOutboxModel: false, autoConnectUserRelays: false })
  ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk })
  ndk.pool.on('relay:authed', () => { libs.ndk.signIns++ })
  ndk.pool.on('notice', (_, n) => effect('ndk', 'NOTICE ' + n))
  ndk.pool.on('relay:disconnect', () => effect('ndk', 'disconnect'))
  await ndk.connect(5000)
  await until(() => libs.ndk.signIns > 0, 10000, 'NDK signs in on the pushed challenge')
  ndk.subscribe(filter, {
    closeOnEose: false, groupable: false, relaySet: NDKRelaySet.fromRelayUrls([wsURL], ndk),
    onEvent: (ev) => libs.ndk.events.push(ev.id),
    onEose: () => libs.ndk.eoses++,
  })
  await until(() => Object.values(libs).every((l) => l.eoses === 1), 10000, 'each subscription\'s EOSE')

  // Idle: only the relay's liveness frames arrive.
  const before = Object.fromEntries(Object.values(libs).map((l) => [l.name, { ...l, events: [...l.events] }]))
  idle = true
  await sleep(idleMs)
  idle = false
  for (const l of Object.values(libs)) {
    l.liveness -= before[l.name].liveness
    if (l.eoses !== 1 || l.signIns !== before[l.name].signIns) effect(l.name, `while idle: ${l.eoses} EOSE callbacks, ${l.signIns - before[l.name].signIns} more sign-ins`)
  }

  // The same sessions still deliver live.
  const msg = finalizeEvent({ kind: 9, created_at: now(), tags: [['h', h]], content: 'after idling' }, sk)
  await nt.publish(msg)
  await until(() => Object.values(libs).every((l) => l.events.includes(msg.id)), 10000, 'the live event on every library')
  for (const l of Object.values(libs)) l.events = [msg.id]
  closing = true
  nt.close()
  ws.close()
} catch (e) {
  effect('script', e?.message ?? String(e))
}
console.log(JSON.stringify({ libs, effects }))
process.exit(0)
