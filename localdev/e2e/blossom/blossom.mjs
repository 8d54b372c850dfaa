// Drives the relay's media routes with blossom-client-sdk 5.1.0 (and
// nostr-tools 2.25.2 for keys and NIP-98), as a Blossom client would.
// Usage: node blossom.mjs '<json config>'; prints one JSON line
// {checks, failures, figures}. Run by TestBlossomClient (blossom_test.go).
import { createHash, randomBytes } from "node:crypto";
import { Actions, createUploadAuth, createDeleteAuth, createListAuth, createDownloadAuth, encodeAuthorizationHeader } from "blossom-client-sdk";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { getToken } from "nostr-tools/nip98";
import { hexToBytes } from "@noble/hashes/utils";

const { uploadBlob, listBlobs, deleteBlob, downloadBlob, hasBlob } = Actions;
const cfg = JSON.parse(process.argv[2]);
const server = cfg.server;
const checks = [], failures = [], figures = {};
const check = (name, ok, detail = "") => {
  checks.push(name);
  if (!ok) failures.push(`${name}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
};
const signerOf = (hex) => async (draft) => finalizeEvent(draft, hexToBytes(hex));
const sha = (b) => createHash("sha256").update(b).digest("hex");
const blob = (n, type = "application/octet-stream") => new Blob([randomBytes(n)], { type });
const bytesOf = async (b) => Buffer.from(await b.arrayBuffer());
const onAuthAs = (hex) => async (_server, hash, type) => createUploadAuth(signerOf(hex), hash, { type: type ?? "upload" });
let e;
const errOf = async (p) => { try { await p; return null; } catch (e) { return e; } };
// blossom-client-sdk throws its HTTPError (not exported by the index) for a 4xx.
const isHTTP = (e) => e !== null && typeof e?.status === "number";
const head = (hash) => fetch(new URL("/" + hash, server), { method: "HEAD" });

// --- upload (BUD-06 preflight HEAD /upload, 401, signed PUT /upload), download with Range, list
const pic = blob(1 << 20, "image/png");
const picHash = sha(await bytesOf(pic));
let t0 = performance.now();
const desc = await uploadBlob(server, pic, { onAuth: onAuthAs(cfg.member) });
figures.upload_1mb_ms = performance.now() - t0;
check("upload descriptor", desc.sha256 === picHash && desc.size === 1 << 20 && desc.type === "image/png" && desc.url.endsWith(picHash + ".png"), desc);
check("has blob", await hasBlob(server, picHash));
const h = await head(picHash);
check("HEAD from metadata", h.status === 200 && h.headers.get("content-length") === String(1 << 20) && h.headers.get("content-type") === "image/png", [h.status, [...h.headers]]);
t0 = performance.now();
const ranged = await fetch(new URL("/" + picHash + ".png", server), { headers: { Range: "bytes=100-199" } });
const part = Buffer.from(await ranged.arrayBuffer());
figures.range_ms = performance.now() - t0;
check("download with Range", ranged.status === 206 && part.equals((await bytesOf(pic)).subarray(100, 200)), [ranged.status, part.length]);
const whole = await downloadBlob(server, picHash);
check("downloadBlob", sha(await bytesOf(whole)) === picHash);
const listAs = (hex) => listBlobs(server, getPublicKey(hexToBytes(cfg.member)), { onAuth: async () => createListAuth(signerOf(hex)) });
const listed = await listAs(cfg.member);
check("list (401, then signed)", listed.length === 1 && listed[0].sha256 === picHash, listed);
e = await errOf(listAs(cfg.stranger));
check("list by a non-member refused", isHTTP(e) && e.status === 403, e?.message);
e = await errOf(listBlobs(server, getPublicKey(hexToBytes(cfg.member)), { onAuth: async () => createListAuth(signerOf(cfg.other)) }));
check("list of another key refused", isHTTP(e) && e.status === 403 && e.message.startsWith("restricted:"), e?.message);
const again = await uploadBlob(server, pic, { onAuth: onAuthAs(cfg.member) });
check("same blob again is stored once", again.sha256 === picHash && again.uploaded === desc.uploaded, again);

// --- a blob shared in the member's private channel: downloadBlob signs a get authorization on 401
const secret = blob(4000, "image/jpeg");
const secretHash = sha(await bytesOf(secret));
await uploadBlob(server, secret, { onAuth: onAuthAs(cfg.member) });
const secretURL = new URL("/" + secretHash + ".jpg", server).toString();
const msg = finalizeEvent({ kind: 9, created_at: Math.floor(Date.now() / 1000), content: "see " + secretURL,
  tags: [["h", cfg.channel], ["imeta", "url " + secretURL, "x " + secretHash, "m image/jpeg"]] }, hexToBytes(cfg.member));
const eventsURL = new URL("/events", server).toString();
const msgBody = JSON.stringify(msg);
const shared = await fetch(eventsURL, { method: "POST", body: msgBody, headers: { "Content-Type": "application/json",
  Authorization: await getToken(eventsURL, "post", signerOf(cfg.member), true, JSON.parse(msgBody)) } });
check("share in a private channel", shared.status === 200 && (await shared.json()).accepted, shared.status);
const getAuthAs = (hex) => async (_server, hash) => createDownloadAuth(signerOf(hex), hash);
const privateCopy = await errOf(downloadBlob(server, secretHash));
check("downloadBlob of a private channel's blob asks for auth", privateCopy !== null && !isHTTP(privateCopy), privateCopy?.message);
const secretGot = await downloadBlob(server, secretHash, { onAuth: getAuthAs(cfg.member) });
check("downloadBlob with onAuth (get) by a channel member", sha(await bytesOf(secretGot)) === secretHash);
e = await errOf(downloadBlob(server, secretHash, { onAuth: getAuthAs(cfg.other) }));
check("downloadBlob by a key outside the channel: 404", isHTTP(e) && e.status === 404, e?.message);
check("hasBlob without a key: no", !(await hasBlob(server, secretHash)));

// --- preflight refusals, before any byte is sent
const preflight = (hdrs, auth) => fetch(new URL("/upload", server), { method: "HEAD", headers: { ...hdrs, ...(auth ? { Authorization: auth } : {}) } });
const someHash = sha(randomBytes(8));
const auth = encodeAuthorizationHeader(await createUploadAuth(signerOf(cfg.member), someHash));
let r = await preflight({ "X-SHA-256": someHash, "X-Content-Length": String(cfg.maxBytes + 1), "X-Content-Type": "video/mp4" }, auth);
check("preflight 413", r.status === 413 && (r.headers.get("x-reason") ?? "").includes("largest"), [r.status, r.headers.get("x-reason")]);
r = await preflight({ "X-SHA-256": someHash, "X-Content-Length": "100", "X-Content-Type": "not a type" }, auth);
check("preflight 415", r.status === 415 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
r = await preflight({ "X-SHA-256": someHash, "X-Content-Type": "image/png" }, auth);
check("preflight 411", r.status === 411 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
r = await preflight({ "X-SHA-256": someHash, "X-Content-Length": "100" });
check("preflight 401 without auth", r.status === 401 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
r = await preflight({ "X-SHA-256": someHash, "X-Content-Length": String(50 << 20) }, auth);
check("preflight 200 for a large blob, pointing at the presign path", r.status === 200 && r.headers.get("x-upload-path") === "/media/upload", [r.status, [...r.headers]]);

// --- who may upload
e = await errOf(uploadBlob(server, blob(1000), { onAuth: onAuthAs(cfg.stranger) }));
check("non-member refused", isHTTP(e) && e.status === 403 && e.message.startsWith("restricted:"), e?.message);
e = await errOf(uploadBlob(server, blob(1000), { onAuth: onAuthAs(cfg.banned) }));
check("banned key refused", isHTTP(e) && e.status === 403 && e.message.startsWith("blocked:"), e?.message);

// --- Buzz's routes with NIP-98
const buzzBody = randomBytes(5000), buzzHash = sha(buzzBody);
const tokenFor = (url, method) => getToken(url, method, signerOf(cfg.member), true);
let url = new URL("/media/upload", server).toString();
r = await fetch(url, { method: "PUT", body: buzzBody, headers: { "Content-Type": "application/pdf", "X-SHA-256": buzzHash, Authorization: await tokenFor(url, "put") } });
const buzzDesc = r.status === 201 ? await r.json() : await r.text();
check("Buzz PUT /media/upload with NIP-98", r.status === 201 && buzzDesc.sha256 === buzzHash, [r.status, buzzDesc]);
r = await fetch(new URL("/media/" + buzzHash, server));
check("Buzz GET /media/<sha256>", r.status === 200 && sha(Buffer.from(await r.arrayBuffer())) === buzzHash, r.status);

// --- the large path: POST /media/upload for a presigned S3 PUT, then the relay completes it
const big = randomBytes(50 << 20), bigHash = sha(big);
const bigAuth = encodeAuthorizationHeader(await createUploadAuth(signerOf(cfg.member), bigHash));
e = await errOf(uploadBlob(server, new Blob([big], { type: "video/mp4" }), { onAuth: onAuthAs(cfg.member) }));
// API Gateway and Lambda take no such body: the emulator answers 413 (or
// drops the connection mid-body); the blob is not stored either way.
check("uploadBlob of 50 MB does not pass the gateway (the presign path below is the way)", e !== null && !(await hasBlob(server, bigHash)), [e?.status, e?.message]);
figures.upload_blob_50mb_error = isHTTP(e) ? `HTTP ${e.status}` : String(e?.cause?.code ?? e?.message);
t0 = performance.now();
r = await fetch(new URL("/media/upload", server), { method: "POST", headers: { "X-SHA-256": bigHash, "X-Content-Length": String(big.length), "X-Content-Type": "video/mp4", Authorization: bigAuth } });
const presign = await r.json();
check("presign", r.status === 200 && presign.method === "PUT" && presign.url, presign);
r = await fetch(presign.url, { method: "PUT", body: big, headers: presign.headers });
check("presigned PUT to S3", r.status === 200, r.status);
figures.upload_50mb_s3_ms = performance.now() - t0;
t0 = performance.now();
check("large blob completed on HEAD", await hasBlob(server, bigHash));
figures.complete_50mb_ms = performance.now() - t0;
r = await fetch(new URL("/" + bigHash, server), { headers: { Range: "bytes=52428000-52428799" } });
const tail = Buffer.from(await r.arrayBuffer());
check("large blob ranged download", r.status === 206 && tail.equals(big.subarray(52428000, 52428800)), [r.status, tail.length]);

// --- tampered: the bytes sent to the presigned URL do not match the claimed hash
const good = randomBytes(2 << 20), goodHash = sha(good);
const bad = Buffer.from(good); bad[12345] ^= 0xff;
r = await fetch(new URL("/media/upload", server), { method: "POST", headers: { "X-SHA-256": goodHash, "X-Content-Length": String(good.length), Authorization: encodeAuthorizationHeader(await createUploadAuth(signerOf(cfg.member), goodHash)) } });
const p2 = await r.json();
r = await fetch(p2.url, { method: "PUT", body: bad, headers: p2.headers });
r = await fetch(new URL("/upload", server), { method: "PUT", headers: { "X-SHA-256": goodHash, Authorization: encodeAuthorizationHeader(await createUploadAuth(signerOf(cfg.member), goodHash)) } });
check("tampered upload refused", r.status === 409 && (r.headers.get("x-reason") ?? "").includes("discarded"), [r.status, r.headers.get("x-reason")]);
check("tampered upload not stored", !(await hasBlob(server, goodHash)));

// --- bad input: each a 4xx with X-Reason, nothing stored
const fresh = randomBytes(3000), freshHash = sha(fresh);
const now = Math.floor(Date.now() / 1000);
const rawAuth = async (tags, edit) => {
  const ev = finalizeEvent({ kind: 24242, created_at: now - 5, content: "Upload Blob", tags }, hexToBytes(cfg.member));
  if (edit) edit(ev);
  return encodeAuthorizationHeader(ev);
};
const put = async (authHeader, body = fresh, hdrs = {}) =>
  fetch(new URL("/upload", server), { method: "PUT", body, headers: { "X-SHA-256": freshHash, Authorization: authHeader, ...hdrs } });
const exp = String(now + 600);
const bad4xx = [
  ["another server", await rawAuth([["t", "upload"], ["x", freshHash], ["expiration", exp], ["server", "cdn.elsewhere.example"]]), 401],
  ["another verb", await rawAuth([["t", "delete"], ["x", freshHash], ["expiration", exp]]), 401],
  ["another hash", await rawAuth([["t", "upload"], ["x", someHash], ["expiration", exp]]), 401],
  ["expired", await rawAuth([["t", "upload"], ["x", freshHash], ["expiration", String(now - 1)]]), 401],
  ["unsigned", await rawAuth([["t", "upload"], ["x", freshHash], ["expiration", exp]], (ev) => { ev.sig = ""; }), 401],
];
for (const [name, a, want] of bad4xx) {
  r = await put(a);
  check("bad input: " + name, r.status === want && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
}
const goodAuth = await rawAuth([["t", "upload"], ["x", freshHash], ["expiration", exp]]);
r = await put(goodAuth, fresh, { "X-Content-Length": String(fresh.length - 100) });
check("bad input: body larger than announced", r.status === 400 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
r = await fetch(new URL("/upload", server), { method: "PUT", body: fresh, headers: { "X-SHA-256": freshHash.toUpperCase(), Authorization: goodAuth } });
check("bad input: X-SHA-256 not lowercase hex", r.status === 400 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
r = await fetch(new URL("/" + "z".repeat(64), server));
check("bad input: GET of a non-hex hash", r.status === 400 && r.headers.get("x-reason"), [r.status, r.headers.get("x-reason")]);
check("bad input stored nothing", !(await hasBlob(server, freshHash)));

// --- delete by the uploader
e = await errOf(deleteBlob(server, picHash, { onAuth: async (_s, hash) => createDeleteAuth(signerOf(cfg.stranger), hash) }));
check("delete by another key refused", isHTTP(e) && e.status === 403, e?.message);
const deleted = await deleteBlob(server, picHash, { onAuth: async (_s, hash) => createDeleteAuth(signerOf(cfg.member), hash) });
check("delete", deleted === true && !(await hasBlob(server, picHash)), deleted);

// --- quotas (a relay with 1.5 MB per key per day)
if (cfg.quotaServer) {
  const q = cfg.quotaServer;
  await uploadBlob(q, blob(1 << 20), { onAuth: onAuthAs(cfg.member) });
  e = await errOf(uploadBlob(q, blob(1 << 20), { onAuth: onAuthAs(cfg.member) }));
  check("bytes per day quota", isHTTP(e) && e.status === 429 && e.message.startsWith("rate-limited:"), e?.message);
  // 2.5 MiB stored per community: a second member's 1 MiB fits, a third's does not.
  const [m2, m3] = cfg.quotaMembers;
  e = await errOf(uploadBlob(q, blob(1 << 20), { onAuth: onAuthAs(m2) }));
  check("second member within the community's storage", e === null, e?.message);
  const third = blob(1 << 20);
  e = await errOf(uploadBlob(q, third, { onAuth: onAuthAs(m3) }));
  check("bytes stored quota", isHTTP(e) && e.status === 413 && e.message.includes("storage is full"), e?.message);
  check("bytes stored quota stored nothing", !(await hasBlob(q, sha(await bytesOf(third)))));
}

console.log(JSON.stringify({ checks, failures, figures }));
