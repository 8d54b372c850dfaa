// NIP-29 client flows run by TestNIP29Clients (localdev/e2e/nip29clients_test.go):
// NDK 3.0.3 and welshman 0.8.15, with their own helpers and default group
// ids, against the relay. Every step is a check; the last line printed is
// {"checks":[{"name","ok","detail"}]}, one entry per check.
// Usage: node nip29clients.mjs <ws-url> <http-url>
import WebSocket from 'ws'
import NDK, { NDKEvent, NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet, NDKSimpleGroup } from '@nostr-dev-kit/ndk'
import { Pool, Socket, defaultSocketPolicies, makeSocketPolicyAuth, publishOne, request } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { makeEvent, makeRoomAddMemberEvent, makeRoomCreateEvent, makeRoomEditEvent, makeRoomJoinEvent, makeRoomMeta, readRoomMeta } from '@welshman/util'
import { generateSecretKey, getPublicKey } from 'nostr-tools/pure'
import { sleep } from './wait.mjs'

globalThis.WebSocket = WebSocket // NDK opens sockets through the global

const [wsURL, httpURL] = process.argv.slice(2)
const checks = []
const check = (name, ok, detail = '') => checks.push({ name, ok: !!ok, detail: String(detail) })
// why is an NDK publish error with each relay's answer.
const why = (e) => [e?.message ?? String(e), ...[...(e?.errors?.values?.() ?? [])].map((x) => x?.message ?? String(x))].join(' | ')

// A user: a hex key, a welshman signer and pool (NIP-42 on every socket),
// and an NDK instance signing in on auth-required.
const user = async () => {
  const secret = Buffer.from(generateSecretKey()).toString('hex')
  const signer = Nip01Signer.fromSecret(secret)
  const pool = new Pool({
    makeSocket: (url) => new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => signer.sign(e), shouldAuth: () => true })]),
  })
  const ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(secret), enableOutboxModel: false, autoConnectUserRelays: false })
  ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk })
  // An app lists the relay's groups first (a REQ), which brings the relay's
  // NIP-42 challenge (API Gateway sends it with the first answer), and NDK
  // signs in. (NDK 3.0.3's signIn policy does not retry a publish that
  // raced the challenge, so publishing first on a fresh socket times out.)
  const authed = new Promise((res) => ndk.pool.on('relay:authed', res))
  await ndk.connect(5000)
  await ndk.fetchEvents({ kinds: [39000], limit: 1 }, { closeOnEose: true, groupable: false })
  await Promise.race([authed, sleep(5000)])
  return { secret, pubkey: getPublicKey(Buffer.from(secret, 'hex')), signer, pool, ndk, relaySet: NDKRelaySet.fromRelayUrls([wsURL], ndk) }
}

// welshman: publish a template (or a signed event) and read with filters.
const send = async (u, template) => {
  const event = template.sig ? template : await u.signer.sign(template)
  const r = await publishOne({ event, relay: wsURL, timeout: 8000, context: { pool: u.pool } })
  return { ok: r.status === 'success', detail: r.detail ?? '', event }
}
const read = (u, filters) => request({ relays: [wsURL], filters, autoClose: true, signal: AbortSignal.timeout(6000), context: { pool: u.pool } })
// NDK: publish an NDKEvent, true when the relay took it.
const ndkPublish = async (u, ev) => {
  try {
    await ev.publish(u.relaySet, 8000)
    return { ok: true, detail: '' }
  } catch (e) {
    return { ok: false, detail: why(e) }
  }
}
const ndkFetch = async (u, filter) => [...(await u.ndk.fetchEvents(filter, { closeOnEose: true, groupable: false }, u.relaySet))]
const tag = (ev, name) => ev?.tags.find((t) => t[0] === name)
const has = (ev, ...t) => !!ev?.tags.some((x) => t.every((v, i) => x[i] === v))
const meta = async (u, h) => (await read(u, [{ kinds: [39000], '#d': [h] }]))[0]

process.on('unhandledRejection', (e) => { check('no unhandled rejection', false, e?.message ?? e) })
try {
const info = await (await fetch(httpURL + '/', { headers: { Accept: 'application/nostr+json' } })).json()
check('NIP-11 lists 29 and has self', info.supported_nips?.includes(29) && /^[0-9a-f]{64}$/.test(info.self ?? ''), JSON.stringify(info.supported_nips))

const owner = await user()
const member = await user()
const outsider = await user()
const joiner = await user()
const invited = await user()

// 1. NDK: createGroup with NDK's default id, then setMetadata.
const group = new NDKSimpleGroup(owner.ndk, owner.relaySet)
const h = group.groupId
let r = await (async () => { try { await group.createGroup(); return { ok: true } } catch (e) { return { ok: false, detail: why(e) } } })()
check('NDK createGroup (9007 with only h, default id)', r.ok && !/^[0-9a-f-]{36}$/.test(h), `${h} ${r.detail ?? ''}`)
r = await (async () => { try { await group.setMetadata({ name: 'Pizza Lovers', about: 'a group for pizza', picture: 'https://example.com/p.png' }); return { ok: true } } catch (e) { return { ok: false, detail: why(e) } } })()
check('NDK setMetadata (9002)', r.ok, r.detail)
let m = await meta(owner, h)
check('NDK setMetadata shows in 39000', has(m, 'name', 'Pizza Lovers') && has(m, 'about', 'a group for pizza') && m.pubkey === info.self, JSON.stringify(m?.tags))
check('39001 lists the creator as owner', has((await read(owner, [{ kinds: [39001], '#d': [h] }]))[0], 'p', owner.pubkey, 'owner'))
check('39003 lists the privileged roles', has((await read(owner, [{ kinds: [39003], '#d': [h] }]))[0], 'role', 'admin'))
const dup = await send(owner, makeRoomCreateEvent({ h }))
check('a second 9007 is duplicate:', dup.detail.startsWith('duplicate:'), dup.detail)

// NDK addUser: a 9000 for the member.
const add = await group.addUser(member.ndk.activeUser ?? (await member.ndk.signer.user()))
await add.sign(owner.ndk.signer)
check('NDK addUser (9000)', (await ndkPublish(owner, add)).ok)
check('chat from a member', (await send(member, makeEvent(9, { content: 'hello', tags: [['h', h]] }))).ok)

// 2. welshman: makeRoomCreateEvent with generateH's id, edit with flags.
const room = makeRoomMeta()
r = await send(member, makeRoomCreateEvent(room))
check('welshman makeRoomCreateEvent (default id)', r.ok, `${room.h} ${r.detail}`)
r = await send(member, makeRoomEditEvent({ ...room, name: 'Flotilla room', isClosed: true, isPrivate: true }))
const wroom = readRoomMeta(await meta(member, room.h))
check('welshman edit with flags, read back by readRoomMeta', r.ok && wroom.name === 'Flotilla room' && wroom.isClosed && wroom.isPrivate && !wroom.isHidden, r.detail)

// 3. Flags on the NDK group, edited the way welshman edits: the whole 39000 sent back.
const edit = async (flags, extra = []) => {
  const current = readRoomMeta(await meta(owner, h))
  const t = makeRoomEditEvent({ ...current, isPrivate: false, isHidden: false, isClosed: false, isRestricted: false, ...flags })
  t.tags.push(...extra)
  return send(owner, t)
}
r = await edit({ isPrivate: true })
check('private set by a welshman edit echoing the 39000', r.ok, r.detail)
check('private: the outsider reads no message', (await read(outsider, [{ kinds: [9], '#h': [h] }])).length === 0)
check('private: the outsider reads the 39000 (not hidden)', !!(await meta(outsider, h)))
check('private: the member reads messages', (await read(member, [{ kinds: [9], '#h': [h] }])).length === 1)
r = await send(outsider, makeEvent(9, { content: 'x', tags: [['h', h]] }))
check('private: the outsider cannot write', !r.ok && r.detail.startsWith('restricted:'), r.detail)
r = await edit({ isPrivate: true, isHidden: true })
check('hidden set', r.ok, r.detail)
check('hidden: the outsider does not see the 39000', !(await meta(outsider, h)))
check('hidden: the member sees the 39000', !!(await meta(member, h)))
r = await edit({ isRestricted: true })
check('restricted set (public)', r.ok, r.detail)
check('restricted: the outsider reads messages', (await read(outsider, [{ kinds: [9], '#h': [h] }])).length === 1)
r = await send(outsider, makeEvent(9, { content: 'x', tags: [['h', h]] }))
check('restricted: the outsider cannot write', !r.ok && r.detail.startsWith('restricted:'), r.detail)
check('restricted: the member writes', (await send(member, makeEvent(9, { content: 'still here', tags: [['h', h]] }))).ok)

// 4. Joining: open admits; closed keeps the request pending for admins; invite codes.
r = await edit({})
r = await ndkPublish(outsider, new NDKEvent(outsider.ndk, { kind: 9021, content: '', tags: [['h', h]] }))
check('NDK join request to an open group admits', r.ok && has((await read(owner, [{ kinds: [39002], '#d': [h] }]))[0], 'p', outsider.pubkey), r.detail)
r = await send(outsider, makeRoomJoinEvent({ h }))
check('a member\'s 9021 is duplicate:', r.detail.startsWith('duplicate:'), r.detail)
await edit({ isClosed: true })
r = await send(joiner, makeRoomJoinEvent({ h }))
check('closed: the join request is pending review', !r.ok && r.detail.includes('pending review'), r.detail)
const pending = await read(owner, [{ kinds: [9021], '#h': [h], authors: [joiner.pubkey] }])
check('closed: the admin reads the pending request', pending.length === 1)
r = await send(owner, makeRoomAddMemberEvent({ h }, joiner.pubkey))
check('closed: the admin admits with 9000', r.ok && has((await read(owner, [{ kinds: [39002], '#d': [h] }]))[0], 'p', joiner.pubkey), r.detail)
const code = 'pizza-' + Math.random().toString(36).slice(2)
r = await ndkPublish(owner, new NDKEvent(owner.ndk, { kind: 9009, content: '', tags: [['h', h], ['code', code]] }))
check('9009 create-invite by the owner', r.ok, r.detail)
await edit({ isClosed: true, isPrivate: true })
const j = makeRoomJoinEvent({ h })
j.tags.push(['code', code])
r = await send(invited, j)
check('a valid code admits to a private closed group', r.ok && has((await read(owner, [{ kinds: [39002], '#d': [h] }]))[0], 'p', invited.pubkey), r.detail)
const j2 = makeRoomJoinEvent({ h })
j2.tags.push(['code', 'nope'])
r = await send(await user(), j2)
check('a wrong code is refused', !r.ok && r.detail.startsWith('restricted:'), r.detail)
r = await send(owner, makeEvent(9009, { tags: [['h', h]] }))
check('9009 without a code is invalid:', r.detail.startsWith('invalid:'), r.detail)

// 5. Roles.
r = await send(owner, makeEvent(9000, { tags: [['h', h], ['p', member.pubkey, 'moderator']] }))
const members = (await read(owner, [{ kinds: [39002], '#d': [h] }]))[0]
check('9000 with an unknown role name is stored without privilege', r.ok && has(members, 'p', member.pubkey, '', 'moderator') &&
  !has((await read(owner, [{ kinds: [39001], '#d': [h] }]))[0], 'p', member.pubkey), r.detail)
r = await send(owner, makeEvent(9000, { tags: [['h', h], ['p', member.pubkey, 'admin']] }))
check('9000 with the admin role puts the member in 39001', r.ok && has((await read(owner, [{ kinds: [39001], '#d': [h] }]))[0], 'p', member.pubkey, 'admin'), r.detail)

// 6. Subgroups.
const child = makeRoomMeta()
await send(owner, makeRoomCreateEvent(child))
const ce = makeRoomEditEvent({ ...child, name: 'child' })
ce.tags.push(['parent', h])
r = await send(owner, ce)
check('subgroup: parent set by 9002', r.ok && has(await meta(owner, child.h), 'parent', h), r.detail)
r = await edit({ isClosed: true, isPrivate: true }, [['parent', child.h]])
check('subgroup: a cycle is invalid:', r.detail.startsWith('invalid:'), r.detail)

// 7. Threads: a kind 11 root and NIP-22 comments through NDK's reply(), read back by tag filters.
await edit({})
const root = new NDKEvent(owner.ndk, { kind: 11, content: 'Best pizza?', tags: [['h', h], ['title', 'Best pizza?']] })
r = await ndkPublish(owner, root)
check('kind 11 thread root', r.ok, r.detail)
const comment = root.reply()
comment.content = 'Margherita'
comment.tags.push(['h', h])
r = await ndkPublish(owner, comment)
check('NDK reply() on a kind 11 is a 1111 comment, accepted', r.ok && comment.kind === 1111, r.detail)
for (const [name, f] of Object.entries({
  '#E': { '#E': [root.id] }, '#e': { '#e': [root.id] }, '#K': { '#K': ['11'] }, '#k': { '#k': ['11'] }, '#P': { '#P': [owner.pubkey] },
})) {
  const got = await read(outsider, [{ kinds: [1111], '#h': [h], ...f }])
  check(`1111 read back by ${name}`, got.some((e) => e.id === comment.id), got.length)
}
const article = new NDKEvent(owner.ndk, { kind: 30023, content: 'a long read', tags: [['h', h], ['d', 'guide'], ['title', 'guide']] })
await ndkPublish(owner, article)
const onArticle = article.reply()
onArticle.content = 'nice'
onArticle.tags.push(['h', h])
r = await ndkPublish(owner, onArticle)
const byA = await read(outsider, [{ kinds: [1111], '#A': [`30023:${owner.pubkey}:guide`] }])
check('1111 on an addressable root read back by #A', r.ok && byA.some((e) => e.id === onArticle.id), r.detail)
const chat = new NDKEvent(owner.ndk, { kind: 9, content: 'chat', tags: [['h', h]] })
await ndkPublish(owner, chat)
const chatReply = chat.reply()
chatReply.content = 'reply to chat'
chatReply.tags.push(['h', h])
r = await ndkPublish(owner, chatReply)
check('NDK reply() on a kind 9 (1111) accepted', r.ok && chatReply.kind === 1111, r.detail)
r = await send(owner, makeEvent(1111, { content: 'x', tags: [['h', h], ['e', root.id], ['k', '11']] }))
check('1111 without its root tags is invalid:', r.detail.startsWith('invalid:'), r.detail)

// 7b. NIP-29 pins through NDK: an admin's 9010, the relay's 39005 (d = the
// group id, the pins in order) read back by #d; a key without the role refused.
const stranger = await user()
r = await ndkPublish(stranger, new NDKEvent(stranger.ndk, { kind: 9010, content: '', tags: [['h', h], ['e', root.id]] }))
check('NDK 9010 from a key that is no admin is restricted:', !r.ok && r.detail.includes('restricted:'), r.detail)
const pinTags = [['e', chat.id], ['e', root.id], ['a', `30023:${owner.pubkey}:guide`]]
r = await ndkPublish(member, new NDKEvent(member.ndk, { kind: 9010, content: '', tags: [['h', h], ...pinTags] }))
const pins = await ndkFetch(outsider, { kinds: [39005], '#d': [h] })
check('NDK 9010 by an admin, read back by NDK as one relay-signed 39005 by #d, in order', r.ok && pins.length === 1 &&
  pins[0].pubkey === info.self && JSON.stringify(pins[0].tags) === JSON.stringify([['d', h], ...pinTags]), `${r.detail} ${JSON.stringify(pins.map((e) => e.tags))}`)
const byH = await ndkFetch(outsider, { kinds: [39005], '#h': [h] })
check('the pins are not among the group\'s #h events', byH.length === 0, JSON.stringify(byH.map((e) => e.tags)))

// 8. supported_kinds, any kind, bad ids.
r = await send(owner, makeEvent(31922, { content: '', tags: [['h', h], ['d', 'meetup'], ['title', 'meetup'], ['start', '2030-01-01']] }))
check('any kind in a group (31922 calendar event)', r.ok, r.detail)
r = await edit({}, [['supported_kinds', '9', '11', '1111']])
check('supported_kinds set', r.ok && has(await meta(owner, h), 'supported_kinds', '9', '11', '1111'), r.detail)
r = await send(owner, makeEvent(1, { content: 'note', tags: [['h', h]] }))
check('supported_kinds: another kind is restricted:', !r.ok && r.detail.startsWith('restricted:'), r.detail)
check('supported_kinds: kind 9 accepted', (await send(owner, makeEvent(9, { content: 'ok', tags: [['h', h]] }))).ok)
r = await send(owner, makeRoomCreateEvent({ h: 'pizza lovers!' }))
check('an id with forbidden characters is invalid:', r.detail.startsWith('invalid:'), r.detail)
r = await send(owner, makeRoomCreateEvent({ h: 'p'.repeat(65) }))
check('an over-long id is invalid:', r.detail.startsWith('invalid:'), r.detail)
r = await edit({}, [['closed', 'yes']])
check('a flag with a value is invalid:', r.detail.startsWith('invalid:'), r.detail)

// 9. Outside groups: the user-owned kinds.
for (const kind of [0, 3, 10002, 10009, 10050, 10000, 30003]) {
  const tags = kind >= 30000 ? [['d', 'x']] : []
  r = await send(member, makeEvent(kind, { content: kind === 0 ? '{"name":"m"}' : '', tags }))
  const back = await read(outsider, [{ kinds: [kind], authors: [member.pubkey] }])
  check(`kind ${kind} accepted and served`, r.ok && back.length === 1, r.detail)
}

} catch (e) {
  check('the script ran to its end', false, e?.stack ?? e)
}
await sleep(100)
console.log(JSON.stringify({ checks }))
process.exit(0)
