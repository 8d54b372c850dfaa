// The operator console (/admin) in a real browser: Debian's chromium,
// headless, driven by puppeteer-core, with a NIP-07 shim (window.nostr)
// injected before the page loads whose signing happens here, in node, with
// a test key (nostr-tools), so no secret reaches the page. Driven by
// localdev/e2e/console_test.go, which prepares the relay and checks the
// database afterwards; this script prints one JSON line of what it saw.
//
// usage: node console.mjs CHROMIUM PORT OPERATOR_SK STRANGER_SK VICTIM_SK NEW_COMMUNITY_ID
import http from "node:http";
import { randomUUID } from "node:crypto";
import puppeteer from "puppeteer-core";
import { finalizeEvent, getPublicKey } from "nostr-tools/pure";
import { hexToBytes } from "nostr-tools/utils";

const [chromium, port, opSK, strangerSK, victimSK, newID] = process.argv.slice(2);
const host = `a.test:${port}`;
const origin = `http://${host}`;
const sk = (hex) => hexToBytes(hex);
const victim = getPublicKey(sk(victimSK));
const out = { steps: [] };
const step = (name, v) => out.steps.push(v === undefined ? name : `${name}: ${typeof v === "string" ? v : JSON.stringify(v)}`);

// post sends body to path on the relay's port with Host a.test, as the
// victim's own client would (a NIP-98 token binding the body).
function post(path, body, key) {
  const token = finalizeEvent({ kind: 27235, created_at: Math.floor(Date.now() / 1000), content: "",
    tags: [["u", origin + path], ["method", "POST"], ["payload", sha256hex(body)]] }, sk(key));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path, method: "POST",
      headers: { host, "content-type": "application/json", authorization: "Nostr " + Buffer.from(JSON.stringify(token)).toString("base64") } },
      (res) => { let b = ""; res.on("data", (c) => (b += c)); res.on("end", () => resolve({ status: res.statusCode, body: JSON.parse(b || "{}") })); });
    req.on("error", reject);
    req.end(body);
  });
}
import { createHash } from "node:crypto";
function sha256hex(s) { return createHash("sha256").update(s).digest("hex"); }

// victimWrites: the victim creates a channel; answers the relay's verdict.
async function victimWrites() {
  const ev = finalizeEvent({ kind: 9007, created_at: Math.floor(Date.now() / 1000), content: "",
    tags: [["h", randomUUID()], ["name", "victim"], ["visibility", "open"]] }, sk(victimSK));
  const r = await post("/events", JSON.stringify(ev), victimSK);
  return r.body.accepted ? "accepted" : (r.body.message || r.body.error || `HTTP ${r.status}`);
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP a.test 127.0.0.1, MAP b.test 127.0.0.1",
    `--unsafely-treat-insecure-origin-as-secure=${origin}`],
});

// openAs opens the console with a NIP-07 shim signing as key (in node).
async function openAs(key) {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // A refusal's status is not an error of the page (it is shown on it).
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  await page.exposeFunction("__nip07sign", (ev) => finalizeEvent(ev, sk(key)));
  await page.exposeFunction("__nip07pubkey", () => getPublicKey(sk(key)));
  await page.evaluateOnNewDocument(() => {
    window.nostr = {
      getPublicKey: () => window.__nip07pubkey(),
      signEvent: (ev) => window.__nip07sign(ev),
    };
  });
  const res = await page.goto(origin + "/admin", { waitUntil: "domcontentloaded" });
  out.csp = res.headers()["content-security-policy"] || "";
  return { page, errors };
}

async function loaded(page, after) {
  await page.waitForFunction((t) => Number(document.body.dataset.loaded || 0) > t, { timeout: 20000 }, after);
  return page.$eval("body", (b) => Number(b.dataset.loaded));
}
const message = (page) => page.$eval("#message", (m) => ({ text: m.textContent, cls: m.className }));
// settle clicks selector and waits for the page to finish the action it
// starts (body's data-settled counts them).
async function settle(page, selector) {
  const n = await page.$eval("body", (b) => Number(b.dataset.settled || 0));
  await page.$eval(selector, (b) => b.click());
  await page.waitForFunction((n) => Number(document.body.dataset.settled || 0) > n, { timeout: 20000 }, n);
}
async function submit(page, form, fields) {
  for (const [name, v] of Object.entries(fields)) {
    await page.$eval(`#${form} [name=${name}]`, (el, v) => { el.value = v; }, v);
  }
  return settle(page, `#${form} button[type=submit]`);
}
const click = settle;

try {
  // The operator.
  const { page, errors } = await openAs(opSK);
  await page.$eval("#signin", (b) => b.click());
  await loaded(page, 0);
  step("signed in", await message(page));
  out.status = await page.$$eval("#status dt", (dts) => dts.map((d) => d.textContent));
  out.reportsBefore = await page.$$eval("#reports tr", (trs) => trs.map((tr) => tr.dataset.report));
  step("victim before ban", await victimWrites());

  await submit(page, "ban-form", { pubkey: victim, reason: "spam" });
  out.bannedOnPage = await page.$$eval("#bans tr", (trs) => trs.map((tr) => tr.dataset.pubkey));
  out.victimWhileBanned = await victimWrites();
  step("ban", await message(page));

  await click(page, `#bans tr[data-pubkey="${victim}"] button`);
  out.bannedAfterLift = await page.$$eval("#bans tr", (trs) => trs.map((tr) => tr.dataset.pubkey));
  out.victimAfterUnban = await victimWrites();
  step("unban", await message(page));

  await click(page, "#reports tr button");
  out.reportsAfter = await page.$$eval("#reports tr", (trs) => trs.map((tr) => tr.dataset.report));
  step("resolve", await message(page));

  await submit(page, "community-form", { id: newID, host: "b.test", name: "Second" });
  out.communities = await page.$$eval("#communities tr", (trs) => trs.map((tr) => tr.firstChild.textContent));
  step("add community", await message(page));
  out.operatorErrors = errors;

  // The new community answers on its own host, through the relay.
  const b = await browser.newPage();
  await b.goto(`http://b.test:${port}/admin`, { waitUntil: "domcontentloaded" });
  const nip11 = () => b.evaluate(async () => { const r = await fetch("/", { headers: { accept: "application/nostr+json" } }); return r.ok ? (await r.json()).name : `HTTP ${r.status}`; });
  out.newCommunityName = await nip11();

  // Disable it from the console (its host stops answering), then enable
  // it again (it answers as before). The console's tab comes to the front
  // again (a background tab's animation frames, which the wait polls on,
  // do not run).
  await page.bringToFront();
  await click(page, `#communities tr[data-community="${newID}"] button`);
  step("disable community", await message(page));
  out.disabledState = await page.$eval(`#communities tr[data-community="${newID}"]`, (tr) => tr.children[3].textContent);
  out.disabledName = await nip11();
  await click(page, `#communities tr[data-community="${newID}"] button`);
  step("enable community", await message(page));
  out.enabledState = await page.$eval(`#communities tr[data-community="${newID}"]`, (tr) => tr.children[3].textContent);
  out.enabledName = await nip11();

  // A key that is not an operator: the relay's refusal, on the page.
  const s = await openAs(strangerSK);
  await s.page.$eval("#signin", (b) => b.click());
  await loaded(s.page, 0);
  out.stranger = await message(s.page);
  out.strangerBans = await s.page.$$eval("#bans tr", (trs) => trs.length);
  await submit(s.page, "ban-form", { pubkey: victim, reason: "not yours" });
  out.strangerBan = await message(s.page);
} catch (e) {
  out.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
