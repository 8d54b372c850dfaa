// Flotilla's steps against the relay, driven with the welshman 0.8.15
// packages Flotilla runs on, each as Flotilla does it (coracle-social/flotilla
// src/app/core/commands.ts and state.ts, src/app/util/push.ts), run by
// localdev/e2e/flotilla_test.go. One mode a run; the last line printed is
// the mode's JSON answer.
//
//   join <ws-url> <secret> [claim]     Join Space: attemptRelayAccess
//   blossom <ws-url> <secret>          fetchHasBlossomSupport, then uploadFile
//   push <ws-url> <secret>             getPushStuff's detection, then its 30390
//   goal <ws-url> <secret> <room>      a zap goal in a room, read back as a room reads
//   kinds <ws-url> <secret> <room>     every kind Flotilla publishes in a space
import WebSocket from 'ws'
import NDK from '@nostr-dev-kit/ndk'
import { fetchRelayInformation } from 'nostr-tools/nip11'
import { generateSecretKey, getPublicKey, finalizeEvent } from 'nostr-tools/pure'
import { AuthStatus, Pool, Socket, SocketStatus, defaultSocketPolicies, makeSocketPolicyAuth, publishOne, request } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { sha256 } from '@welshman/lib'
import {
  RELAY_JOIN, MESSAGE, THREAD, COMMENT, REACTION, DELETE, REPORT, ROOM_JOIN, ROOM_LEAVE, ROOM_CREATE, ROOM_EDIT_META,
  ROOM_DELETE_EVENT, ZAP_GOAL, ZAP_RESPONSE, EVENT_TIME, CLASSIFIED, POLL, POLL_RESPONSE, ROOMS, PROFILE,
  FOLLOWS, RELAYS, MESSAGING_RELAYS, BLOSSOM_SERVERS, APP_DATA, RELAY_LEAVE, WRAP,
  makeEvent, makeBlossomAuthEvent, canUploadBlob, uploadBlob,
} from '@welshman/util'
import { sleep, until } from './wait.mjs'

globalThis.WebSocket = WebSocket

const [mode, wsURL, secret, arg, arg2] = process.argv.slice(2)
const httpURL = wsURL.replace(/^ws/, 'http')
const signer = Nip01Signer.fromSecret(secret)
const sign = (e) => signer.sign(e)
const pubkey = getPublicKey(Buffer.from(secret, 'hex'))
// Flotilla's pool: every socket signs in when the relay asks (NIP-42).
const pool = new Pool({
  makeSocket: (url) => new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign, shouldAuth: () => true })]),
})
const PROTECTED = ['-']

const publish = async (template) => {
  const event = await sign(template)
  const r = await publishOne({ event, relay: wsURL, timeout: 8000, context: { pool } })
  return { ok: r.status === 'success', detail: r.detail ?? '', event }
}
const read = (filters) => request({ relays: [wsURL], filters, autoClose: true, signal: AbortSignal.timeout(6000), context: { pool } })

// Flotilla's state.ts.
const shouldIgnoreError = (error) =>
  error.startsWith('mute: ') || error.includes('Signing was aborted') || error.includes('missing group (`h`) tag')
const stripPrefix = (m) => m.replace(/^\w+: /, '')

// Flotilla's attemptRelayAccess (commands.ts): open, sign in, send the
// RELAY_JOIN with its claim tag, read the answer as Flotilla does.
const attemptRelayAccess = async (claim = '') => {
  const socket = pool.get(wsURL)
  socket.attemptToOpen()
  try { await until(() => socket.status === SocketStatus.Open, 3000, 'open') } catch { return { error: 'Failed to connect' } }
  await socket.auth.attemptAuth(sign)
  if (![AuthStatus.None, AuthStatus.Ok].includes(socket.auth.status)) {
    return { error: `Failed to authenticate (${socket.auth.details || socket.auth.status})`, auth: socket.auth.status }
  }
  const r = await publish(makeEvent(RELAY_JOIN, { tags: [['claim', claim]] }))
  const raw = r.ok ? '' : r.detail
  let error = ''
  if (raw && !shouldIgnoreError(raw)) error = raw.includes('invite code') ? 'join request rejected' : stripPrefix(raw)
  return { error, ok: r.ok, detail: r.detail, auth: socket.auth.status }
}

// Flotilla's fetchHasBlossomSupport and uploadFile (commands.ts), with
// welshman's makeBlossomAuthEvent, canUploadBlob and uploadBlob.
const blossom = async () => {
  const out = { checks: [] }
  const check = (name, ok, detail = '') => out.checks.push({ name, ok: !!ok, detail: String(detail) })
  const server = httpURL.replace(/\/$/, '')
  const headers = () => ({
    'X-Content-Type': 'text/plain',
    'X-Content-Length': '1',
    'X-SHA-256': '73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac',
  })
  const probeAuth = await sign(makeBlossomAuthEvent({ action: 'upload', server }))
  check("the probe's authorization has no x tag", !probeAuth.tags.some((t) => t[0] === 'x'), JSON.stringify(probeAuth.tags))
  let res = await canUploadBlob(server, { authEvent: probeAuth, headers: headers() })
  check('HEAD /upload answers 200: Flotilla uses the space as its media server', res.status === 200, `${res.status} ${res.headers.get('x-reason')}`)

  const bytes = new TextEncoder().encode('a picture of the space, ' + Date.now())
  const file = new Blob([bytes], { type: 'image/png' })
  const hash = await sha256(await file.arrayBuffer())
  const putAuth = await sign(makeBlossomAuthEvent({ action: 'upload', server, hashes: [hash] }))
  res = await uploadBlob(server, file, { authEvent: putAuth })
  const text = await res.text()
  let desc = {}
  try { desc = JSON.parse(text) } catch {}
  check('PUT /upload with the hash bound: a descriptor with uploaded and url', desc.uploaded && desc.url && desc.sha256 === hash, `${res.status} ${text}`)
  if (desc.url) {
    const got = await fetch(desc.url)
    const back = new Uint8Array(await got.arrayBuffer())
    check("the descriptor's url serves the bytes", got.status === 200 && Buffer.from(back).equals(Buffer.from(bytes)), got.status)
  }

  // The attacks on the same doors.
  const other = new Blob([new TextEncoder().encode('not the bound one ' + Date.now())], { type: 'image/png' })
  res = await uploadBlob(server, other, { authEvent: probeAuth })
  check("PUT with the probe's authorization (no x) is refused 401", res.status === 401, `${res.status} ${res.headers.get('x-reason')}`)
  res = await uploadBlob(server, other, { authEvent: putAuth })
  check("PUT of other bytes with an authorization bound to another hash is refused 401", res.status === 401, `${res.status} ${res.headers.get('x-reason')}`)
  res = await canUploadBlob(server, { authEvent: putAuth, headers: headers() })
  check('HEAD with an x tag naming another hash is refused 401', res.status === 401, `${res.status} ${res.headers.get('x-reason')}`)
  res = await canUploadBlob(server, { headers: headers() })
  check('HEAD without an authorization is refused 401', res.status === 401, res.status)
  const deleteAuth = await sign(makeBlossomAuthEvent({ action: 'delete', server }))
  res = await canUploadBlob(server, { authEvent: deleteAuth, headers: headers() })
  check('HEAD with a delete authorization is refused 401', res.status === 401, res.status)
  const expired = await sign(makeBlossomAuthEvent({ action: 'upload', server, expiration: Math.floor(Date.now() / 1000) - 5 }))
  res = await canUploadBlob(server, { authEvent: expired, headers: headers() })
  check('HEAD with an expired authorization is refused 401', res.status === 401, res.status)
  return out
}

// Flotilla's getPushStuff (push.ts): loadRelay reads NIP-11 (welshman
// fetches it with Accept: application/nostr+json), canPush asks for self
// and "9a" among supported_nips.map(String); then syncRelay publishes its
// 30390 to the relay, encrypted to relay.self.
const push = async () => {
  const out = { checks: [] }
  const check = (name, ok, detail = '') => out.checks.push({ name, ok: !!ok, detail: String(detail) })
  const res = await fetch(httpURL, { headers: { Accept: 'application/nostr+json' } })
  const relay = { ...(await res.json()), url: wsURL }
  const canPush = (relay) => Boolean(relay?.self && relay?.supported_nips?.map(String)?.includes('9a'))
  check("Flotilla's canPush finds push on the space itself", canPush(relay), JSON.stringify(relay.supported_nips) + ' self ' + relay.self)
  check('older Flotilla (supported_nips.includes("9a") without String) finds it too', relay.supported_nips.includes('9a'), JSON.stringify(relay.supported_nips))
  check("Flotilla's hasNip29 still finds 29", relay.supported_nips.map(String).includes('29'))
  check('the integers stay JSON numbers', relay.supported_nips.filter((n) => typeof n === 'number').length === relay.supported_nips.length - 1, JSON.stringify(relay.supported_nips))
  const nt = await fetchRelayInformation(wsURL)
  check("nostr-tools' fetchRelayInformation reads it (29, 42 and 9a)", nt.supported_nips.includes(29) && nt.supported_nips.includes(42) && nt.supported_nips.includes('9a'))
  const ndk = new NDK({ explicitRelayUrls: [wsURL] })
  const info = await ndk.pool.getRelay(wsURL, false).fetchInfo()
  check("NDK's relay.fetchInfo reads it (29 and 77)", info.supported_nips.includes(29) && info.supported_nips.includes(77), JSON.stringify(info.supported_nips))

  // syncSpaceRelay's subscription, as Flotilla signs it: the space's
  // message kinds, comments on its content kinds, its muted rooms ignored
  // (none: Flotilla then sends {"#h": [[]]}).
  const callback = 'https://push.example/flotilla/' + Date.now()
  const sealed = (relayURL, ignore) => signer.nip44.encrypt(relay.self, JSON.stringify([
    ['relay', relayURL],
    ['callback', callback],
    ...ignore.map((f) => ['ignore', JSON.stringify(f)]),
    ['filter', JSON.stringify({ kinds: [9041, 31923, 11, 30402, 9] })],
    ['filter', JSON.stringify({ kinds: [1111], '#K': ['9041', '31923', '11', '30402'] })],
  ]))
  const d = String(Date.now())
  let r = await publish(makeEvent(30390, { content: await sealed(wsURL, [{ '#h': [[]] }]), tags: [['d', d], ['p', relay.self]] }))
  check("Flotilla's 30390 (sealed to self, no muted room) is accepted", r.ok, r.detail)
  out.sealed = r.event?.id
  r = await publish(makeEvent(30390, { content: await sealed(wsURL, [{ '#h': [['muted-room']] }]), tags: [['d', d + 'm'], ['p', relay.self]] }))
  check("Flotilla's 30390 with a muted room is accepted", r.ok, r.detail)
  // Newer Flotilla (_syncRelay after _getPushUrl's hasNip("9a")): the
  // public form, asking for the event.
  r = await publish(makeEvent(30390, {
    tags: [['d', d + 'p'], ['relay', wsURL], ['callback', callback], ['include_event'], ['ignore', JSON.stringify({ '#h': [['muted-room']] })],
      ['filter', JSON.stringify({ kinds: [9041, 31923, 11, 30402, 9] })]],
  }))
  check("newer Flotilla's public 30390 with include_event is accepted", r.ok, r.detail)
  // The attacks: sealed to another key, garbage.
  const stranger = Nip01Signer.fromSecret(Buffer.from(generateSecretKey()).toString('hex'))
  const otherPub = await stranger.getPubkey()
  r = await publish(makeEvent(30390, { content: await signer.nip44.encrypt(otherPub, '[]'), tags: [['d', d + 'x'], ['p', otherPub]] }))
  check('a 30390 sealed to another key is refused invalid:', !r.ok && r.detail.startsWith('invalid:'), r.detail)
  r = await publish(makeEvent(30390, { content: 'not encrypted', tags: [['d', d + 'z'], ['p', relay.self]] }))
  check('a 30390 whose content does not open is refused invalid:', !r.ok && r.detail.startsWith('invalid:'), r.detail)
  // Only its author reads it back, still sealed.
  const mine = await read([{ kinds: [30390], authors: [pubkey] }])
  check('the author reads the stored 30390, its content still sealed', mine.some((e) => e.id === out.sealed && !e.content.includes(callback)), mine.length)
  out.self = relay.self
  return out
}

// A zap goal as Flotilla's GoalCreate posts it in a room, then the room
// read as Flotilla reads it (MESSAGE_KINDS with the room's h).
const goal = async (room) => {
  const out = { checks: [] }
  const check = (name, ok, detail = '') => out.checks.push({ name, ok: !!ok, detail: String(detail) })
  const tags = [['summary', 'a new roof for the space'], ['amount', '21000000'], ['relays', wsURL], PROTECTED, ['h', room]]
  const r = await publish(makeEvent(ZAP_GOAL, { content: 'Roof fund', tags }))
  check('the zap goal is accepted', r.ok, r.detail)
  out.goal = r.event.id
  const MESSAGE_KINDS = [ZAP_GOAL, EVENT_TIME, THREAD, CLASSIFIED, MESSAGE]
  const got = await read([{ kinds: MESSAGE_KINDS, '#h': [room] }])
  check('the room read finds it', got.some((e) => e.id === r.event.id), got.map((e) => e.kind))
  const only = await read([{ kinds: [ZAP_GOAL], '#h': [room] }])
  check('a read of kind 9041 finds it', only.some((e) => e.id === r.event.id), only.length)
  const bad = await publish(makeEvent(ZAP_GOAL, { content: 'no target', tags: [['amount', '0'], ['relays', wsURL], ['h', room]] }))
  check('a goal with amount 0 is refused invalid:', !bad.ok && bad.detail.startsWith('invalid:'), bad.detail)
  return out
}

// Every kind Flotilla (and welshman for it) publishes in a space, built as
// Flotilla builds it, by the room's creator (secret) and a second user
// (joiner: joins and leaves the room); the answer of each, for the test
// to hold to the table of docs/compatibility.md.
const kinds = async (room, joinerSecret) => {
  const joiner = Nip01Signer.fromSecret(joinerSecret)
  const joinerPool = new Pool({
    makeSocket: (url) => new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => joiner.sign(e), shouldAuth: () => true })]),
  })
  const publishAsJoiner = async (template) => {
    const r = await publishOne({ event: await joiner.sign(template), relay: wsURL, timeout: 8000, context: { pool: joinerPool } })
    return { ok: r.status === 'success', detail: r.detail ?? '' }
  }
  const out = { answers: {} }
  const note = (name, r) => { out.answers[name] = { ok: r.ok, detail: r.detail } }
  const now = () => Math.floor(Date.now() / 1000)
  const msg = await publish(makeEvent(MESSAGE, { content: 'hello room', tags: [['h', room], PROTECTED] }))
  note('9 message', msg)
  const thread = await publish(makeEvent(THREAD, { content: 'a thread', tags: [['title', 'Ideas'], ['h', room], PROTECTED] }))
  note('11 thread', thread)
  const t = thread.event
  note('1111 comment', await publish(makeEvent(COMMENT, {
    content: 'a comment',
    tags: [['K', '11'], ['E', t.id, wsURL, t.pubkey], ['P', t.pubkey], ['k', '11'], ['e', t.id, wsURL, t.pubkey], ['p', t.pubkey], ['h', room], PROTECTED],
  })))
  note('7 reaction', await publish(makeEvent(REACTION, { content: '+', tags: [['k', '9'], ['e', msg.event.id, wsURL, msg.event.pubkey], ['p', msg.event.pubkey], ['h', room], PROTECTED] })))
  note('9041 zap goal', await publish(makeEvent(ZAP_GOAL, { content: 'Goal', tags: [['summary', 's'], ['amount', '1000'], ['relays', wsURL], PROTECTED, ['h', room]] })))
  note('31923 calendar event', await publish(makeEvent(EVENT_TIME, {
    content: 'meetup', tags: [['d', 'ev' + Date.now()], ['title', 'Meetup'], ['start', String(now() + 3600)], ['end', String(now() + 7200)], ['h', room], PROTECTED],
  })))
  note('30402 classified', await publish(makeEvent(CLASSIFIED, {
    content: 'a bike', tags: [['d', 'cl' + Date.now()], ['title', 'Bike'], ['price', '100', 'USD'], ['h', room], PROTECTED],
  })))
  const poll = await publish(makeEvent(POLL, { content: 'Lunch?', tags: [['option', 'a', 'Pizza'], ['option', 'b', 'Soup'], ['polltype', 'singlechoice'], ['h', room], PROTECTED] }))
  note('1068 poll', poll)
  note('1018 poll response', await publish(makeEvent(POLL_RESPONSE, { content: '', tags: [['e', poll.event.id], ['response', 'a'], ['h', room], PROTECTED] })))
  note('1984 report', await publish(makeEvent(REPORT, { content: 'spam', tags: [['p', msg.event.pubkey], ['e', msg.event.id, 'spam']] })))
  note('9021 room join', await publishAsJoiner(makeEvent(ROOM_JOIN, { tags: [['h', room]] })))
  note('9002 room edit meta', await publish(makeEvent(ROOM_EDIT_META, { tags: [['h', room], ['name', 'renamed'], ['about', 'about the room']] })))
  const newRoom = 'fl' + Date.now().toString(36)
  note('9007 room create', await publish(makeEvent(ROOM_CREATE, { tags: [['h', newRoom], ['name', newRoom]] })))
  note('9005 room delete event', await publish(makeEvent(ROOM_DELETE_EVENT, { tags: [['h', room], ['e', thread.event.id]] })))
  note('5 deletion', await publish(makeEvent(DELETE, { tags: [['k', '9'], ['e', msg.event.id], ['h', room], PROTECTED] })))
  note('9022 room leave', await publishAsJoiner(makeEvent(ROOM_LEAVE, { tags: [['h', room]] })))
  note('10009 group list', await publish(makeEvent(ROOMS, { tags: [['r', wsURL], ['group', room, wsURL]] })))
  note('0 profile', await publish(makeEvent(PROFILE, { content: JSON.stringify({ name: 'flotilla user' }), tags: [PROTECTED] })))
  note('3 follows', await publish(makeEvent(FOLLOWS, { tags: [['p', msg.event.pubkey]] })))
  note('10002 relays', await publish(makeEvent(RELAYS, { tags: [['r', wsURL]] })))
  note('10050 messaging relays', await publish(makeEvent(MESSAGING_RELAYS, { tags: [['relay', wsURL]] })))
  note('10063 blossom servers', await publish(makeEvent(BLOSSOM_SERVERS, { tags: [['server', httpURL]] })))
  note('30078 settings', await publish(makeEvent(APP_DATA, { content: await signer.nip44.encrypt(pubkey, '{}'), tags: [['d', 'flotilla/settings']] })))
  // A gift wrap (NIP-17 DM), sealed to someone: Flotilla sends these to
  // messaging relays, which a space may be.
  const wrapKey = generateSecretKey()
  const wrap = finalizeEvent({ kind: WRAP, created_at: now() - 60, content: 'sealed', tags: [['p', msg.event.pubkey]] }, wrapKey)
  const wr = await publishOne({ event: wrap, relay: wsURL, timeout: 8000, context: { pool } })
  note('1059 gift wrap', { ok: wr.status === 'success', detail: wr.detail ?? '' })
  // A zap receipt, as a lightning service publishes it to the relays of
  // the zap request: it never signs in.
  const zapper = generateSecretKey()
  const receipt = finalizeEvent({ kind: ZAP_RESPONSE, created_at: now(), content: '', tags: [['p', msg.event.pubkey], ['e', msg.event.id], ['bolt11', 'lnbc1'], ['description', '{}'], ['h', room]] }, zapper)
  out.answers['9735 zap receipt (unsigned-in service)'] = await new Promise((resolve) => {
    const ws = new WebSocket(wsURL)
    const done = (v) => { resolve(v); ws.close() }
    ws.on('open', () => ws.send(JSON.stringify(['EVENT', receipt])))
    ws.on('message', (m) => {
      const a = JSON.parse(m.toString())
      if (a[0] === 'OK' && a[1] === receipt.id) done({ ok: a[2], detail: a[3] })
    })
    ws.on('error', (e) => done({ ok: false, detail: 'socket: ' + e.message }))
    setTimeout(() => done({ ok: false, detail: 'no answer' }), 8000)
  })
  note('28936 relay leave', await publish(makeEvent(RELAY_LEAVE, { tags: [PROTECTED] })))
  return out
}

let out
try {
  switch (mode) {
    case 'join': out = await attemptRelayAccess(arg || ''); break
    case 'blossom': out = await blossom(); break
    case 'push': out = await push(); break
    case 'goal': out = await goal(arg); break
    case 'kinds': out = await kinds(arg, arg2); break
    default: throw new Error('unknown mode ' + mode)
  }
} catch (e) {
  out = { crash: e?.stack ?? String(e) }
}
await sleep(50)
console.log(JSON.stringify(out))
process.exit(0)
