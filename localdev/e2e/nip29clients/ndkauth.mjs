// NDK sign-in then REQ, run by TestNDKSignInThenREQAnswered20Of20
// (localdev/e2e/nip29clients_test.go): NDK 3.0.3 connects the way an app
// does (NDKRelayAuthPolicies.signIn answers the challenge the relay pushes
// at connect) and sends a REQ at once, on a fresh socket, <runs> times.
// A run is answered when its fetchEvents resolves (the REQ's EOSE) within
// 8 s. Each run's frames, in and out, are kept for the runs not answered.
// The last line printed is {"runs": n, "answered": n, "ms": [...], "failures": [...]}
// (ms: each answered run's time from connect to its answer).
// Usage: node ndkauth.mjs <ws-url> <runs>
import WebSocket from 'ws'
import NDK, { NDKPrivateKeySigner, NDKRelayAuthPolicies, NDKRelaySet } from '@nostr-dev-kit/ndk'
import { generateSecretKey } from 'nostr-tools/pure'
import { sleep } from './wait.mjs'

const [wsURL, runsArg] = process.argv.slice(2)
const runs = Number(runsArg)
let frames = []
globalThis.WebSocket = class extends WebSocket {
  constructor (...args) {
    super(...args)
    const t0 = Date.now()
    this.on('message', (d) => frames.push(`${Date.now() - t0}ms < ${String(d).slice(0, 120)}`))
    const send = this.send.bind(this)
    this.send = (d, ...rest) => { frames.push(`${Date.now() - t0}ms > ${String(d).slice(0, 120)}`); return send(d, ...rest) }
  }
}
process.on('unhandledRejection', () => {})

const failures = []
const ms = []
let answered = 0
for (let i = 0; i < runs; i++) {
  frames = []
  const ndk = new NDK({ explicitRelayUrls: [wsURL], signer: new NDKPrivateKeySigner(Buffer.from(generateSecretKey()).toString('hex')), enableOutboxModel: false, autoConnectUserRelays: false })
  ndk.relayAuthDefaultPolicy = NDKRelayAuthPolicies.signIn({ ndk })
  let done
  const t0 = Date.now()
  const answer = new Promise((res) => { done = res })
  try {
    await ndk.connect(5000)
    ndk.fetchEvents({ kinds: [9], limit: 5 }, { closeOnEose: true, groupable: false }, NDKRelaySet.fromRelayUrls([wsURL], ndk))
      .then(() => done('eose'), (e) => done(null))
    const got = await Promise.race([answer, sleep(8000).then(() => null)])
    if (got) {
      answered++
      ms.push(Date.now() - t0)
    } else failures.push({ run: i + 1, frames })
  } catch (e) {
    failures.push({ run: i + 1, error: e?.message ?? String(e), frames })
  }
  for (const r of ndk.pool.relays.values()) r.disconnect()
}
console.log(JSON.stringify({ runs, answered, ms, failures }))
process.exit(0)
