// Idle sessions of NDK 3.0.3 and welshman 0.8.15, run by
// TestIdleNDKWelshmanBuzzMakeNoDatabaseStatements (localdev/e2e/idle_clients_test.go)
// and by the cost profile recorder (localdev/cost/record): each library
// opens a session as an app does (signs in on the relay's pushed
// challenge), makes its first reads of a channel (its history, which the
// library closes at EOSE, and its metadata) and holds a live subscription,
// then idles with its own timers as its source sets them (NDK: a
// keepalive probe REQ kinds:[99999] limit:0 and its CLOSE after 120 s
// without an inbound frame; welshman: ["PING"] after 30 s of silence, and
// a socket closed after 30 s without activity unless a request is
// pending). Protocol: it prints {"ready": ...} once both are idle, idles
// until a line arrives on stdin, then waits (at most 15 s) for a new event
// on each live subscription and prints its report, the last line:
// {"libs": {name: {opens, closes, signIns, sent: [{t, frame}], received,
// liveness, events, effects}}, "effects": [...]}; t is milliseconds since
// the idle start, sent and received count the idle minutes only.
// A line "quit" on stdin instead prints the report at once (the
// recorder's end of a session), with startSent and startReceived: the
// frames before the idle minutes. nostr-tools 2.25.2 (its Relay, as an app
// opens it: no ping, no reconnect, its defaults) runs only when named.
// Usage: node idle.mjs <ws-url> <channel-id> [ndk|welshman|nostr-tools]
import WebSocket from 'ws'
import readline from 'node:readline'
import NDK, { NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'
import { AuthStateEvent, AuthStatus, Socket, SocketEvent, SocketStatus, defaultSocketPolicies, makeSocketPolicyAuth } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { finalizeEvent, generateSecretKey } from 'nostr-tools/pure'
import { Relay, useWebSocketImplementation } from 'nostr-tools/relay'
import { sleep, until } from './wait.mjs'

const [wsURL, h, only] = process.argv.slice(2)
const LIVENESS = '["EOSE","relay-liveness"]'
const now = () => Math.floor(Date.now() / 1000)
const effects = []
const lib = (name) => ({ name, opens: 0, closes: 0, signIns: 0, sent: [], received: 0, liveness: 0, startSent: 0, startReceived: 0, events: [], effects: [] })
const libs = {}
if (!only || only === 'ndk') libs.ndk = lib('ndk')
if (!only || only === 'welshman') libs.welshman = lib('welshman')
if (only === 'nostr-tools') libs['nostr-tools'] = lib('nostr-tools')
let idleStart = 0
const idling = () => idleStart > 0
let started = false
const sent = (name, data) => {
  if (!started) libs[name].startSent++
  if (idling()) libs[name].sent.push({ t: Date.now() - idleStart, frame: String(data).slice(0, 300) })
}
const received = (name, data) => {
  if (!started) libs[name].startReceived++
  if (!idling()) return
  libs[name].received++
  if (String(data) === LIVENESS) libs[name].liveness++
}
const hex = () => Buffer.from(generateSecretKey()).toString('hex')
const filterLive = () => ({ kinds: [9, 7, 5], '#h': [h], since: now() })

process.on('unhandledRejection', (e) => effects.push('unhandled rejection ' + (e?.message ?? e)))
try {
  if (libs.ndk) {
    // NDK's sockets: globalThis.WebSocket, each one counted.
    globalThis.WebSocket = class extends WebSocket {
      constructor (...args) {
        super(...args)
        libs.ndk.opens++
        this.on('message', (d) => received('ndk', d))
        this.on('close', () => { libs.ndk.closes++ })
      }

      send (data, ...rest) { sent('ndk', data); return super.send(data, ...rest) }
    }
    const ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(hex()), enableOutboxModel: false, autoConnectUserRelays: false })
    ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk })
    ndk.pool.on('relay:authed', () => { libs.ndk.signIns++ })
    ndk.pool.on('notice', (_, n) => libs.ndk.effects.push('NOTICE ' + n))
    ndk.pool.on('relay:disconnect', () => libs.ndk.effects.push('disconnect'))
    await ndk.connect(5000)
    await until(() => libs.ndk.signIns > 0, 10000, 'NDK signs in on the pushed challenge')
    const relaySet = NDKRelaySet.fromRelayUrls([wsURL], ndk)
    // First reads: the channel's history and metadata (closed at EOSE).
    await ndk.fetchEvents({ kinds: [9], '#h': [h], limit: 50 }, { relaySet, groupable: false })
    await ndk.fetchEvents({ kinds: [39000, 39001, 39002], '#d': [h] }, { relaySet, groupable: false })
    let eose = false
    ndk.subscribe(filterLive(), {
      closeOnEose: false, groupable: false, relaySet,
      onEvent: (ev) => libs.ndk.events.push(ev.id),
      onEose: () => { eose = true },
    })
    await until(() => eose, 10000, 'NDK live subscription EOSE')
  }

  if (libs.welshman) {
    const w = libs.welshman
    const ws = new Socket(wsURL, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => Nip01Signer.fromSecret(hex()).sign(e), shouldAuth: () => true })])
    // Its raw socket: what it sends (the PING policy writes to it
    // directly) and receives, counted per socket it opens.
    ws.on(SocketEvent.Status, (s) => {
      if (s === SocketStatus.Open) {
        w.opens++
        const raw = ws._ws
        const send = raw.send.bind(raw)
        raw.send = (data, ...rest) => { sent('welshman', data); return send(data, ...rest) }
        raw.on('message', (d) => received('welshman', d))
      }
      if (s === SocketStatus.Closed || s === SocketStatus.Error) w.closes++
      if (idling()) w.effects.push('socket ' + s)
    })
    ws.on(SocketEvent.Receive, (m) => {
      if (m[0] === 'EVENT' && m[1] === 'wl') w.events.push(m[2].id)
      if (m[0] === 'NOTICE') w.effects.push('NOTICE ' + m[1])
      if (m[0] === 'CLOSED') w.effects.push('CLOSED ' + m[1] + ' ' + m[2])
    })
    ws.auth.on(AuthStateEvent.Status, (s) => { if (s === AuthStatus.PendingSignature) w.signIns++ })
    ws.open()
    await until(() => ws.auth.status === AuthStatus.Ok, 10000, 'welshman signs in on the pushed challenge')
    // First reads, as welshman's request() does: REQ, CLOSE at EOSE.
    const read = async (id, filter) => {
      let done = false
      const onEose = (m) => { if (m[0] === 'EOSE' && m[1] === id) done = true }
      ws.on(SocketEvent.Receive, onEose)
      ws.send(['REQ', id, filter])
      await until(() => done, 10000, 'welshman ' + id + ' EOSE')
      ws.send(['CLOSE', id])
      ws.off(SocketEvent.Receive, onEose)
    }
    await read('wh', { kinds: [9], '#h': [h], limit: 50 })
    await read('wm', { kinds: [39000, 39001, 39002], '#d': [h] })
    let eose = false
    ws.on(SocketEvent.Receive, (m) => { if (m[0] === 'EOSE' && m[1] === 'wl') eose = true })
    ws.send(['REQ', 'wl', filterLive()])
    await until(() => eose, 10000, 'welshman live subscription EOSE')
  }

  if (libs['nostr-tools']) {
    const l = libs['nostr-tools']
    const sk = generateSecretKey()
    useWebSocketImplementation(class extends WebSocket {
      constructor (...args) {
        super(...args)
        l.opens++
        this.on('message', (d) => received('nostr-tools', d))
        this.on('close', () => { l.closes++ })
      }

      send (data, ...rest) { sent('nostr-tools', data); return super.send(data, ...rest) }
    })
    const nt = new Relay(wsURL)
    nt.onauth = async (tpl) => { l.signIns++; return finalizeEvent(tpl, sk) }
    await nt.connect()
    nt.onnotice = (n) => l.effects.push('NOTICE ' + n)
    nt.onclose = () => { if (idling()) l.effects.push('socket closed') }
    await until(() => l.signIns > 0, 10000, 'nostr-tools signs in on the pushed challenge')
    await sleep(300) // its OK
    const read = (filter) => new Promise((resolve) => {
      const sub = nt.subscribe([filter], { oneose: () => { sub.close(); resolve() } })
    })
    await read({ kinds: [9], '#h': [h], limit: 50 })
    await read({ kinds: [39000, 39001, 39002], '#d': [h] })
    let eose = false
    nt.subscribe([filterLive()], { onevent: (ev) => l.events.push(ev.id), oneose: () => { eose = true } })
    await until(() => eose, 10000, 'nostr-tools live subscription EOSE')
  }

  const lines = readline.createInterface({ input: process.stdin })
  const ended = new Promise((resolve) => lines.once('line', resolve))
  started = true
  idleStart = Date.now()
  console.log(JSON.stringify({ ready: Object.keys(libs) }))
  const line = await ended
  const idleMs = Date.now() - idleStart
  idleStart = 0
  if (line.trim() === 'quit') {
    console.log(JSON.stringify({ idleMs, libs, effects }))
    process.exit(0)
  }
  for (const l of Object.values(libs)) l.events = []
  await until(() => Object.values(libs).every((l) => l.events.length > 0), 15000, 'a live event on every library after the idle minutes').catch((e) => effects.push(e.message))
  console.log(JSON.stringify({ idleMs, libs, effects }))
} catch (e) {
  effects.push(e?.message ?? String(e))
  console.log(JSON.stringify({ libs, effects }))
}
process.exit(0)
