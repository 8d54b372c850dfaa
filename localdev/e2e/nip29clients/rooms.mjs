// NIP-29 LiveKit rooms read by welshman 0.8.15 as Flotilla reads them, run
// by TestWelshmanReadsLiveKitRoomAsFlotilla
// (localdev/e2e/livekit_welshman_test.go). welshman has no 39004 helper; it has
// readRoomMeta, whose `livekit` is the 39000's livekit tag. A member signed
// in by welshman's socket auth policy (NIP-42) reads the group's 39000 and
// its 39004 with welshman's request, as a Flotilla room view would.
// The last line printed is {"meta": {...readRoomMeta}, "participants":
// {"pubkey", "d", "participants": [...]} | null, "err"}.
// Usage: node rooms.mjs <ws-url> <group> <member-secret-hex>
import WebSocket from 'ws'
import { Pool, Socket, defaultSocketPolicies, makeSocketPolicyAuth, request } from '@welshman/net'
import { Nip01Signer } from '@welshman/signer'
import { readRoomMeta } from '@welshman/util'

globalThis.WebSocket = WebSocket
const [wsURL, group, secret] = process.argv.slice(2)
const signer = Nip01Signer.fromSecret(secret)
const pool = new Pool({
  makeSocket: (url) => new Socket(url, [...defaultSocketPolicies, makeSocketPolicyAuth({ sign: (e) => signer.sign(e), shouldAuth: () => true })]),
})
const read = (filters) => request({ relays: [wsURL], filters, autoClose: true, signal: AbortSignal.timeout(6000), context: { pool } })
const out = { meta: null, participants: null, err: '' }
try {
  // The first read brings the pushed challenge and the sign-in; read again
  // once signed in, as a client refreshing its room view does.
  await read([{ kinds: [39000], '#d': [group] }])
  await new Promise((r) => setTimeout(r, 500))
  const [meta] = await read([{ kinds: [39000], '#d': [group] }])
  if (meta) {
    const m = readRoomMeta(meta)
    out.meta = { h: m.h, name: m.name, livekit: m.livekit, isPrivate: m.isPrivate, pubkey: meta.pubkey }
  }
  const [p] = await read([{ kinds: [39004], '#d': [group] }])
  if (p) {
    out.participants = {
      pubkey: p.pubkey,
      d: p.tags.find((t) => t[0] === 'd')?.[1],
      participants: p.tags.filter((t) => t[0] === 'participant').map((t) => t[1]),
    }
  }
} catch (e) {
  out.err = e?.message ?? String(e)
}
console.log(JSON.stringify(out))
process.exit(0)
