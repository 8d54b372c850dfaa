// The operator console: every action is the relay's own API, signed by the
// operator's NIP-07 extension (window.nostr); this page decides nothing and
// holds no secret. NIP-86 calls go to POST / with a NIP-98 token binding
// the body, the status to GET /healthz?deep=1 with a NIP-98 token; relay membership commands (NIP-43 9030/9031) are events
// published on POST /events. Text from the relay is only ever set as
// textContent.
"use strict";

const RPC = "application/nostr+json+rpc";
const $ = (id) => document.getElementById(id);

function say(text, ok) {
  const m = $("message");
  m.textContent = text;
  m.className = ok ? "ok" : "error";
}

async function sha256hex(bytes) {
  const d = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(d), (b) => b.toString(16).padStart(2, "0")).join("");
}

function signer() {
  if (!window.nostr) throw new Error("no NIP-07 extension found (window.nostr)");
  return window.nostr;
}

// token is a NIP-98 Authorization header for method url body. The relay
// takes each token once, so a random nonce tag keeps two identical calls
// within one second apart.
async function token(method, url, body) {
  const nonce = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
  const tags = [["u", url], ["method", method], ["nonce", nonce]];
  if (body) tags.push(["payload", await sha256hex(new TextEncoder().encode(body))]);
  const ev = await signer().signEvent({ kind: 27235, created_at: Math.floor(Date.now() / 1000), tags, content: "" });
  return "Nostr " + btoa(JSON.stringify(ev));
}

// rpc calls one NIP-86 method; a refusal throws the relay's own text.
async function rpc(method, params) {
  const body = JSON.stringify({ method, params: params || [] });
  const url = location.origin + "/";
  const res = await fetch(url, { method: "POST", body,
    headers: { "content-type": RPC, authorization: await token("POST", url, body) } });
  let out = {};
  try { out = await res.json(); } catch (e) { /* an empty or non-JSON answer */ }
  if (!res.ok || out.error) throw new Error(out.error || ("HTTP " + res.status));
  return out.result;
}

// publish signs a NIP-43 command and posts it on POST /events.
async function publish(kind, tags) {
  const ev = await signer().signEvent({ kind, created_at: Math.floor(Date.now() / 1000), tags, content: "" });
  const body = JSON.stringify(ev);
  const url = location.origin + "/events";
  const res = await fetch(url, { method: "POST", body,
    headers: { "content-type": "application/json", authorization: await token("POST", url, body) } });
  let out = {};
  try { out = await res.json(); } catch (e) { /* */ }
  if (!res.ok || out.error || out.accepted === false) throw new Error(out.error || out.message || ("HTTP " + res.status));
  return out;
}

function cell(tr, text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "" : String(text);
  tr.appendChild(td);
  return td;
}

function button(parent, label, action) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", () => run(action));
  parent.appendChild(b);
  return b;
}

function fill(id, rows, render) {
  const el = $(id);
  el.replaceChildren();
  for (const r of rows || []) render(el, r);
}

function dl(id, pairs) {
  const el = $(id);
  el.replaceChildren();
  for (const [k, v] of pairs) {
    const dt = document.createElement("dt"); dt.textContent = k;
    const dd = document.createElement("dd"); dd.textContent = v == null ? "" : String(v);
    el.append(dt, dd);
  }
}

const when = (s) => (s ? new Date(s * 1000).toISOString() : "never");

// run does one action, then reloads what it may have changed; its outcome
// (the relay's refusal included) is shown on the page. body's
// data-settled counts the actions run to the end.
let settled = 0;
async function run(action, done) {
  try {
    await action();
    say(done || "Done.", true);
    await loadAll(true);
  } catch (e) {
    say(e.message, false);
  } finally {
    document.body.dataset.settled = String(++settled);
  }
}

const loaders = {
  async status() {
    // The figures are this community's, for its operators only: the
    // deep check is signed as the NIP-86 calls are.
    const url = location.origin + "/healthz?deep=1";
    const res = await fetch(url, { headers: { authorization: await token("GET", url) } });
    const s = await res.json();
    if (!res.ok || s.error) throw new Error(s.error || ("HTTP " + res.status));
    dl("status", Object.entries(s).map(([k, v]) => [k, k === "last_write" ? when(v) : v]));
  },
  async info() {
    const res = await fetch("/", { headers: { accept: "application/nostr+json" } });
    const d = await res.json();
    this.nip11 = d;
    const pairs = [["name", d.name], ["description", d.description], ["icon", d.icon], ["relay pubkey", d.pubkey],
      ["supported NIPs", (d.supported_nips || []).join(" ")]];
    dl("info", pairs);
    const m = d.media;
    dl("media", m ? [["max blob bytes", m.max_blob_bytes], ["direct upload max bytes", m.direct_upload_max_bytes],
      ["quota: bytes per key per day", m.key_bytes_per_day], ["quota: bytes stored", m.community_bytes_stored]] : [["media", "off"]]);
  },
  async communities() {
    fill("communities", await rpc("listcommunities"), (el, c) => {
      const tr = document.createElement("tr");
      cell(tr, c.id); cell(tr, (c.hosts || []).join(", ")); cell(tr, c.name); cell(tr, c.enabled ? "enabled" : "disabled");
      tr.dataset.community = c.id;
      const td = cell(tr, "");
      if (c.enabled) button(td, "Disable", () => rpc("disablecommunity", [c.id]));
      else button(td, "Enable", () => rpc("enablecommunity", [c.id]));
      el.appendChild(tr);
    });
  },
  async operators() {
    fill("operators", await rpc("listoperators"), (el, pk) => {
      const li = document.createElement("li");
      li.textContent = pk + " ";
      button(li, "Remove", () => rpc("removeoperator", [pk]));
      el.appendChild(li);
    });
  },
  async bans() {
    const bans = (await rpc("listbannedpubkeys")).map((b) => ({ ...b, rule: "ban" }));
    const timeouts = (await rpc("listtimedoutpubkeys")).map((b) => ({ ...b, rule: "timeout" }));
    fill("bans", bans.concat(timeouts), (el, b) => {
      const tr = document.createElement("tr");
      tr.dataset.pubkey = b.pubkey;
      cell(tr, b.pubkey); cell(tr, b.rule); cell(tr, b.reason); cell(tr, when(b.expires_at));
      button(cell(tr, ""), "Lift", () => rpc("unbanpubkey", [b.pubkey]));
      el.appendChild(tr);
    });
  },
  async allowed() {
    fill("allowed", await rpc("listallowedpubkeys"), (el, a) => {
      const li = document.createElement("li");
      li.textContent = a.pubkey + (a.reason ? " (" + a.reason + ") " : " ");
      button(li, "Remove", () => rpc("unallowpubkey", [a.pubkey]));
      el.appendChild(li);
    });
  },
  async reports() {
    fill("reports", await rpc("listeventsneedingmoderation"), (el, r) => {
      const tr = document.createElement("tr");
      tr.dataset.report = r.report;
      cell(tr, r.id); cell(tr, r.pubkey); cell(tr, r.reason); cell(tr, r.reporter);
      const td = cell(tr, "");
      button(td, "Resolve", () => rpc("resolvereport", [r.report, "resolved"]));
      button(td, "Dismiss", () => rpc("resolvereport", [r.report, "dismissed", "dismiss"]));
      el.appendChild(tr);
    });
  },
  async members() {
    const m = await rpc("listrelaymembers");
    $("enforced").textContent = m.enforced ? "yes" : "no";
    $("enforced").dataset.on = m.enforced ? "1" : "";
    fill("members", m.members, (el, e) => {
      const tr = document.createElement("tr");
      cell(tr, e.pubkey); cell(tr, e.role);
      const td = cell(tr, "");
      if (e.role !== "owner") button(td, "Remove", () => publish(9031, [["p", e.pubkey]]));
      el.appendChild(tr);
    });
  },
  async media() {
    if (!this.nip11 || !this.nip11.media) return; // media off: NIP-11 says so
    const u = await rpc("mediausage");
    const el = $("media");
    for (const [k, v] of [["stored bytes", u.stored_bytes], ["blobs", u.blobs]]) {
      const dt = document.createElement("dt"); dt.textContent = k;
      const dd = document.createElement("dd"); dd.textContent = String(v);
      el.append(dt, dd);
    }
    fill("media-keys", u.today_by_key, (tb, k) => {
      const tr = document.createElement("tr");
      cell(tr, k.pubkey); cell(tr, k.bytes);
      tb.appendChild(tr);
    });
  },
};

// loadAll refreshes every section; the first refusal is shown (the same
// for every section when the key is not an operator).
async function loadAll(keepMessage) {
  let refused = null;
  for (const name of ["status", "info", "communities", "operators", "bans", "allowed", "reports", "members", "media"]) {
    try {
      await loaders[name]();
    } catch (e) {
      if (!refused && !(name === "communities" && /default community/.test(e.message))) refused = e;
    }
  }
  if (refused) say(refused.message, false);
  else if (!keepMessage) say("Loaded.", true);
  document.body.dataset.loaded = String(Date.now());
}

function onSubmit(id, action) {
  $(id).addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = Object.fromEntries(new FormData(ev.target).entries());
    run(() => action(f));
  });
}

function start() {
  $("signin").addEventListener("click", async () => {
    try {
      $("who").textContent = "Signed in as " + (await signer().getPublicKey());
    } catch (e) {
      say(e.message, false);
      return;
    }
    await loadAll(false);
  });
  for (const b of document.querySelectorAll("[data-load]")) {
    b.addEventListener("click", () => run(() => loaders[b.dataset.load]()));
  }
  $("toggle-enforced").addEventListener("click", () =>
    run(() => rpc("setrelaymembership", [!$("enforced").dataset.on])));
  onSubmit("info-form", async (f) => {
    if (f.name) await rpc("changerelayname", [f.name]);
    if (f.description) await rpc("changerelaydescription", [f.description]);
    if (f.icon) await rpc("changerelayicon", [f.icon]);
  });
  onSubmit("community-form", (f) => rpc("addcommunity", [f.id, f.host, f.name || ""]));
  onSubmit("operator-form", (f) => rpc("addoperator", [f.pubkey]));
  onSubmit("ban-form", (f) => rpc("banpubkey", [f.pubkey, f.reason || ""]));
  onSubmit("allow-form", (f) => rpc("allowpubkey", [f.pubkey, f.reason || ""]));
  onSubmit("member-form", (f) => publish(9030, [["p", f.pubkey], ["role", f.role]]));
  loaders.status().catch(() => {});
  loaders.info().catch(() => {});
}

document.addEventListener("DOMContentLoaded", start);
