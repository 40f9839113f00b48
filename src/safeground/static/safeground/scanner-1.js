// The scanner page: a phone or tablet at a turnstile, paired with a device key.
//
// The steward scans people in, or out where the match allows re-entry (the bundle says which).
// Online, every scan goes to POST /api/entry/scan and the server decides. With no network, the
// page decides from the signed bundle (GET /api/entry/bundle) it keeps in IndexedDB, in the
// order of ADR 0005, queues the scan (nonce, time scanned, its decision) and uploads the queue
// in order, once each, through POST /api/entry/offline-scans when the network returns. The reasons,
// their order and the steward's words come from the server's table (entry/rules.py). The
// bundle is trusted only if its Ed25519 signature verifies (WebCrypto) with the server's key.
// docs/adr/0006-offline-scanners.md.

import { inTime, reasonOf } from "./api-1.js";

{
  const config = JSON.parse(document.getElementById("scanner-config").textContent);
  const root = document.querySelector("[data-scanner]");
  const pairForm = document.querySelector("[data-pair]");
  const work = document.querySelector("[data-work]");
  const revokedBox = document.querySelector("[data-revoked]");
  const scanForm = document.querySelector("[data-scan-form]");
  const barcodeInput = scanForm.elements.barcode;
  const bundleStatus = document.querySelector("[data-bundle-status]");
  // The page's own words in the steward's language (entry/scanner_words.py); `{name}` a slot.
  const WORDS = config.words;
  // A number in a slot with its thousands separated (55,540 tickets), as the pages write them.
  const slot = (value) => (typeof value === "number" ? value.toLocaleString("en-GB") : value ?? "");
  const say = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slot(slots[name]));
  const PAIRING = "safeground-scanner";
  const BARCODE = /^[\x21-\x7e]{1,64}$/; // as the server checks it
  const ONLINE_WAIT_MS = 4000; // longer than this at a turnstile, decide offline
  const RETRY_MS = 5000;
  const REFRESH_MS = 10 * 60 * 1000;
  const UPLOAD_MAX = 500;
  // Holding off: after a 503 or 429 the page waits the server's Retry-After (else a doubling
  // delay from HOLD_FIRST_MS), at most HOLD_MAX_MS, stretched by a random 0-50% so that a
  // ground's scanners do not come back in step. Meanwhile scans are decided offline without a
  // request and the queue is not uploaded: an overloaded server is not hammered.
  const HOLD_FIRST_MS = 2000;
  const HOLD_MAX_MS = 30000;
  let holdUntil = 0;
  let holds = 0;
  function holdOff(answer) {
    holds += 1;
    const said = Number(answer?.headers.get("Retry-After"));
    const wait = said > 0 ? said * 1000 : HOLD_FIRST_MS * 2 ** (holds - 1);
    holdUntil = Date.now() + Math.min(HOLD_MAX_MS, wait) * (1 + Math.random() / 2);
  }
  const holding = () => Date.now() < holdUntil;
  function answered() {
    holds = 0;
    holdUntil = 0;
  }

  const time = (iso) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: config.timeZone });
  // A day on the ground's clock, 26/10/2016, as the pages write it; "today" for today's.
  const day = (when) => new Date(when).toLocaleDateString("en-GB", { timeZone: config.timeZone });
  const matchDay = (iso) => (day(iso) === day(Date.now()) ? WORDS.today : day(iso));

  // ---- base64url, IndexedDB ----------------------------------------------------------------
  function unb64(text) {
    const plain = text.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(plain + "=".repeat((4 - (plain.length % 4)) % 4));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }
  function b64(bytes) {
    let binary = "";
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

  const db = new Promise((resolve, reject) => {
    const req = indexedDB.open("safeground-scanner", 1);
    req.onupgradeneeded = () => {
      req.result.createObjectStore("bundle", { keyPath: "id" });
      req.result.createObjectStore("queue", { keyPath: "id", autoIncrement: true }); // scan order
      req.result.createObjectStore("mine", { keyPath: "hash" }); // this scanner's admissions
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
  async function idb(store, mode, act) {
    const tx = (await db).transaction(store, mode);
    const req = act(tx.objectStore(store));
    return new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve(req ? req.result : undefined);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }
  const getAll = (store) => idb(store, "readonly", (s) => s.getAll());

  // ---- pairing -----------------------------------------------------------------------------
  let pairing = JSON.parse(localStorage.getItem(PAIRING) || "null");
  let revoked = false;
  const headers = (extra = {}) => ({ "X-Device-Key": pairing.key, ...extra });

  function showOnly(element) {
    for (const part of [pairForm, work, revokedBox]) part.hidden = part !== element;
  }

  pairForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const error = pairForm.querySelector("[data-pair-error]");
    error.textContent = "";
    pairing = { key: pairForm.elements.key.value.trim(), turnstile: pairForm.elements.turnstile.value.trim() };
    try {
      await fetchBundle();
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    localStorage.setItem(PAIRING, JSON.stringify(pairing));
    start({ justPaired: true });
  });

  for (const button of document.querySelectorAll("[data-unpair]")) {
    button.addEventListener("click", async () => {
      localStorage.removeItem(PAIRING);
      await idb("bundle", "readwrite", (s) => s.clear());
      await idb("mine", "readwrite", (s) => s.clear());
      window.location.reload();
    });
  }

  // Revoked: stop scanning, forget the ticket list (a revoked device must not keep deciding).
  async function stopRevoked() {
    revoked = true;
    bundle = null;
    await idb("bundle", "readwrite", (s) => s.clear());
    showOnly(revokedBox);
    root.dataset.state = "revoked";
  }

  // ---- the bundle --------------------------------------------------------------------------
  let bundle = null; // {id, payload, tickets: Map(hash -> row), hashKey, expires}
  let mine = new Set(); // hashes of the tickets this scanner let in since the bundle was made
  let left = new Set(); // ...and of those it let out since (re-entry: they may come back in)

  async function verify(record) {
    const publicKey = unb64(record.public_key);
    const keyId = hex(new Uint8Array(await crypto.subtle.digest("SHA-256", publicKey))).slice(0, 16);
    if (keyId !== record.key_id) throw new Error(WORDS.otherKey);
    const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    const data = unb64(record.payload);
    const good = await crypto.subtle.verify({ name: "Ed25519" }, key, unb64(record.signature), data);
    if (!good) throw new Error(WORDS.badSignature);
    const payload = JSON.parse(new TextDecoder().decode(data));
    if (payload.version !== 1) throw new Error(say(WORDS.badVersion, { version: payload.version }));
    return payload;
  }

  async function activate(record) {
    const payload = await verify(record);
    const hashKey = await crypto.subtle.importKey(
      "raw", unb64(payload.hash.key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"],
    );
    bundle = {
      id: record.signature,
      payload,
      hashKey,
      expires: new Date(payload.expires_at),
      tickets: new Map(payload.tickets.map((row) => [row[0], row])),
    };
    // Admissions and exits online since this bundle was made, then offline ones not uploaded
    // yet, in the order scanned (hashed again: each bundle has its own hash key).
    mine = new Set();
    left = new Set();
    for (const m of await getAll("mine")) {
      if (m.bundle === bundle.id) (m.inside === false ? left : mine).add(m.hash);
    }
    for (const item of await getAll("queue")) {
      if (item.decision === "admit") moved(await hashOf(item.barcode), item.direction !== "out");
    }
    drawBundle();
    drawDirection();
  }

  async function fetchBundle() {
    let keyAnswer;
    let answer;
    try {
      keyAnswer = await fetch(config.bundleKeyUrl, { headers: headers(), signal: inTime() });
      const query = new URLSearchParams({ turnstile: pairing.turnstile });
      // The list itself has no time limit: at a crowded cell's rate its size is its time.
      answer = keyAnswer.ok ? await fetch(`${config.bundleUrl}?${query}`, { headers: headers() }) : keyAnswer;
    } catch {
      throw new Error(WORDS.noNetworkList);
    }
    if (answer.status === 401) {
      if (localStorage.getItem(PAIRING)) await stopRevoked();
      throw new Error(WORDS.keyNotValid);
    }
    const data = await answer.json().catch(() => ({}));
    if (!answer.ok) {
      throw new Error(reasonOf(data, answer.status, { refused: WORDS.refusedHttp }));
    }
    const keyInfo = await keyAnswer.json();
    const record = { id: "current", ...data, public_key: keyInfo.public_key };
    if (record.key_id !== keyInfo.key_id) throw new Error(WORDS.otherKey);
    await verify(record); // checked before it is kept
    await idb("mine", "readwrite", (s) => s.clear()); // what it knew is in the new list's "inside"
    await idb("bundle", "readwrite", (s) => s.put(record));
    await activate(record);
  }

  async function refreshBundle() {
    if (revoked || !navigator.onLine) return;
    try {
      await fetchBundle();
    } catch (err) {
      if (!revoked && !bundle) bundleStatus.textContent = err.message;
    }
  }

  function drawBundle() {
    if (!bundle) return;
    const p = bundle.payload;
    const expired = new Date() > bundle.expires;
    const slots = { title: p.fixture.title, time: time(p.expires_at), count: p.tickets.length };
    bundleStatus.textContent = say(expired ? WORDS.listExpired : WORDS.bundle, slots);
    const heading = say(WORDS.heading, { title: p.fixture.title, day: matchDay(p.fixture.kickoff) });
    document.querySelector("[data-work] h1").textContent = heading;
    document.title = `${heading} · Safeground`;
    bundleStatus.classList.toggle("is-stale", expired);
  }

  async function hashOf(barcode) {
    const mac = await crypto.subtle.sign("HMAC", bundle.hashKey, new TextEncoder().encode(barcode));
    return b64(new Uint8Array(mac).slice(0, bundle.payload.hash.bytes));
  }

  // A ticket came in, or went out: with no re-entry an exit changes nothing (the ticket stays
  // used, as on the server). True if it changed what this scanner knows.
  function moved(hash, inside) {
    if (inside) {
      mine.add(hash);
      left.delete(hash);
      return true;
    }
    if (!bundle.payload.reentry) return false;
    mine.delete(hash);
    left.add(hash);
    return true;
  }

  async function remember(hash, inside) {
    if (moved(hash, inside)) await idb("mine", "readwrite", (s) => s.put({ hash, bundle: bundle.id, inside }));
  }

  // ---- in or out (exits only where the match allows re-entry) ------------------------------
  const directionChoice = scanForm.elements.direction;
  const outChoice = scanForm.querySelector('input[name="direction"][value="out"]');
  function drawDirection() {
    const noExits = Boolean(bundle) && !bundle.payload.reentry;
    outChoice.disabled = noExits;
    if (noExits) directionChoice.value = "in";
    document.querySelector("[data-no-exits]").hidden = !noExits;
  }
  // Back to the barcode field: a handheld scanner types into whatever has the focus.
  scanForm.querySelector("[data-direction]").addEventListener("change", () => barcodeInput.focus());

  // ---- deciding ----------------------------------------------------------------------------
  const decisionBox = document.querySelector("[data-decision]");
  // The reasons in the order the server checks them, with the steward's words and those that
  // fill their slots: entry/rules.py, through the page's config. Only what each reason checks offline is written here, in the same
  // order; tests/entry/test_reasons.py fails when these and the table disagree.
  const RULES = config.rules;
  const SAY = Object.fromEntries(RULES.reasons.map(({ code, message }) => [code, message]));
  const fill = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slots[name] ?? "");
  const OFFLINE_CHECKS = {
    unknown_ticket: (row) => !row,
    banned: (row) => row?.[2] === "banned",
    cancelled: (row) => row?.[2] === "cancelled",
    flagged: (row) => row?.[2] === "flagged",
    wrong_end: (row) =>
      Boolean(row) && ((row[1] === "h" && !bundle.payload.ends.home) || (row[1] === "a" && !bundle.payload.ends.away)),
    already_inside: (row, hash) => Boolean(row) && ((row[2] === "inside" && !left.has(hash)) || mine.has(hash)),
  };

  // An exit is an "admit" to the server (the turnstile turns): the steward reads EXIT. Above the
  // message, the reason's name in words; its code stays in data-reason.
  function show({ decision, reason, message, offline, direction = "in" }) {
    decisionBox.hidden = false;
    decisionBox.className = `decision decision-${decision === "admit" ? "admit" : decision === "deny" ? "deny" : "stop"}`;
    decisionBox.dataset.decision = decision;
    decisionBox.dataset.reason = reason || "";
    decisionBox.querySelector("[data-decision-word]").textContent =
      decision === "admit" ? (direction === "out" ? WORDS.exit : WORDS.admit) : decision === "deny" ? WORDS.deny : WORDS.cannotCheck;
    decisionBox.querySelector("[data-decision-reason]").textContent = reason ? RULES.labels[reason] || reason : "";
    decisionBox.querySelector("[data-decision-message]").textContent = message;
    decisionBox.querySelector("[data-decision-mode]").textContent = offline ? say(WORDS.offlineQueued, { count: queued }) : "";
  }

  // A seated ticket's place in RULES.seat's words; else the area it admits to.
  function place(ticket) {
    const [, , , blockOrArea, seatRow, seatNumber] = ticket;
    return seatRow || seatNumber ? fill(RULES.seat, { block: blockOrArea, row: seatRow, seat: seatNumber }) : blockOrArea;
  }

  function exitMessage() {
    return bundle.payload.reentry ? RULES.exitReentry : RULES.exitNoReentry;
  }

  async function decideOffline(barcode, direction) {
    if (!bundle) return { reason: "", message: WORDS.noList };
    if (new Date() > bundle.expires) {
      return { reason: "", message: say(WORDS.expiredScan, { time: time(bundle.payload.expires_at) }) };
    }
    const hash = await hashOf(barcode);
    const row = bundle.tickets.get(hash);
    if (direction === "out") {
      // As online: any ticket of this match may go out.
      if (!row) return { decision: "deny", reason: "unknown_ticket", message: SAY.unknown_ticket, hash };
      return { decision: "admit", reason: null, message: exitMessage(), hash };
    }
    // The first reason that holds, in the table's order.
    const reason = RULES.reasons.map((r) => r.code).find((code) => OFFLINE_CHECKS[code]?.(row, hash)) || null;
    if (!reason) return { decision: "admit", reason, message: fill(RULES.admit, { place: place(row) }), hash };
    const gates = row ? bundle.payload.gates_for_block[row[3]] || [] : [];
    const message = fill(SAY[reason], {
      end: RULES.end[row && row[1] === "a" ? "away" : "home"],
      go: gates.length ? fill(RULES.go, { gates: gates.join(RULES.gatesJoinedBy) }) : "",
      // offline the steward learns only whether this scanner let it in itself
      where: mine.has(hash) ? RULES.whereThisScanner : RULES.whereBeforeBundle,
    });
    return { decision: "deny", reason, message, hash };
  }

  async function postScan(body) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ONLINE_WAIT_MS);
    try {
      return await fetch(config.scanUrl, {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify(body),
        signal: controller.signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }

  async function scan(barcode) {
    if (revoked || !barcode) return;
    if (!BARCODE.test(barcode)) {
      show({ decision: "deny", reason: "", message: WORDS.notBarcode });
      return;
    }
    const direction = directionChoice.value;
    const body = {
      barcode,
      turnstile: pairing.turnstile,
      scanned_at: new Date().toISOString(),
      nonce: crypto.randomUUID(),
      direction,
    };
    if (navigator.onLine && !holding()) {
      try {
        const answer = await postScan(body);
        if (answer.status === 401) return stopRevoked();
        const data = await answer.json().catch(() => ({}));
        if (answer.status === 503 || answer.status === 429) holdOff(answer);
        if (answer.ok) {
          answered();
          online(true);
          show({ ...data, offline: false, direction });
          if (data.decision === "admit" && bundle) await remember(await hashOf(barcode), direction === "in");
          return;
        }
        if (answer.status < 500 && answer.status !== 429) {
          show({ decision: "stop", reason: "", message: reasonOf(data, answer.status, { refused: WORDS.refusedHttpScan }) });
          return;
        }
        // A server error: the scan may not be stored; decide offline under the same nonce.
      } catch {
        holdOff(null); // no answer in time: decide offline, and give the server a moment
      }
    }
    online(false);
    const outcome = await decideOffline(barcode, direction);
    if (!outcome.decision) {
      show({ decision: "stop", reason: "", message: outcome.message, offline: true });
      return;
    }
    if (outcome.decision === "admit") moved(outcome.hash, direction === "in"); // the queue remembers it
    await idb("queue", "readwrite", (s) =>
      s.add({ ...body, decision: outcome.decision, reason: outcome.reason, offline: true }),
    );
    await drawQueue();
    show({ decision: outcome.decision, reason: outcome.reason, message: outcome.message, offline: true, direction });
  }

  scanForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const barcode = barcodeInput.value.trim();
    barcodeInput.value = "";
    barcodeInput.focus();
    scan(barcode);
  });

  // ---- the queue of offline scans ----------------------------------------------------------
  let queued = 0;
  async function drawQueue() {
    queued = (await getAll("queue")).length;
    document.querySelector("[data-queued]").textContent = say(WORDS.queued, { count: queued });
  }

  function listItem(list, section, text) {
    const li = document.createElement("li");
    li.textContent = text;
    document.querySelector(list).prepend(li);
    document.querySelector(section).hidden = false;
  }

  let flushing = null;
  function flush() {
    flushing ||= uploadQueue().finally(() => {
      flushing = null;
    });
    return flushing;
  }

  // In the order scanned, 500 at a time; each batch leaves the queue only once the server has
  // stored it (a lost answer means sending it again: the nonces make that harmless).
  async function uploadQueue() {
    while (!revoked) {
      if (holding()) return false; // the server asked for time: the queue waits
      const items = (await getAll("queue")).sort((a, b) => a.id - b.id).slice(0, UPLOAD_MAX);
      if (!items.length) return true;
      let answer;
      try {
        answer = await fetch(config.uploadUrl, {
          method: "POST",
          headers: headers({ "Content-Type": "application/json" }),
          body: JSON.stringify({
            scans: items.map(({ barcode, turnstile, scanned_at, nonce, direction, decision, reason }) => ({
              barcode, turnstile, scanned_at, nonce, direction, decision, reason,
            })),
          }),
          signal: inTime(),
        });
      } catch {
        online(false);
        return false;
      }
      if (answer.status === 401) {
        await stopRevoked();
        return false;
      }
      const data = await answer.json().catch(() => ({}));
      const bad = answer.status === 400 && /^scans\[(\d+)\]/.exec(data.field || "");
      if (bad) {
        // One scan the server will never take (a clock far ahead, say): shown, not retried.
        const item = items[Number(bad[1])];
        await idb("queue", "readwrite", (s) => s.delete(item.id));
        listItem("[data-refused]", "[data-refused-section]", `${time(item.scanned_at)} ${item.barcode}: ${data.detail}`);
        continue;
      }
      if (!answer.ok) {
        if (answer.status === 503 || answer.status === 429) holdOff(answer);
        return false; // the server is struggling: try again later
      }
      answered();
      online(true);
      data.results.forEach((result, i) => {
        if (result.conflict && !result.replayed) {
          const item = items[i];
          listItem(
            "[data-conflicts]",
            "[data-conflicts-section]",
            `${time(item.scanned_at)} ${item.barcode}: ${WORDS.usedTwice}`,
          );
        }
      });
      await idb("queue", "readwrite", (s) => items.forEach((item) => s.delete(item.id)));
      await drawQueue();
    }
    return false;
  }

  // ---- network state -----------------------------------------------------------------------
  function online(isOnline) {
    const label = document.querySelector("[data-network]");
    label.textContent = isOnline ? WORDS.online : WORDS.offline;
    label.classList.toggle("is-offline", !isOnline);
    root.dataset.online = isOnline;
  }

  // Queued scans go up first, so the fresh bundle's "inside" counts them. When the ground's
  // network returns, every scanner reconnects at once: each waits a random moment before asking
  // for a bundle (a bundle of 55,000 tickets costs the server most of a second).
  const REFRESH_SPREAD_MS = 30_000;
  async function reconnect({ refresh = true, spread = false } = {}) {
    if (revoked) return;
    online(navigator.onLine);
    if (!navigator.onLine || !(await flush()) || !refresh) return;
    if (spread) await new Promise((done) => setTimeout(done, Math.random() * REFRESH_SPREAD_MS));
    await refreshBundle();
  }

  window.addEventListener("online", () => reconnect({ spread: true }));
  window.addEventListener("offline", () => online(false));
  setInterval(() => {
    if (queued && navigator.onLine) reconnect({ spread: true });
    drawBundle();
  }, RETRY_MS);
  setInterval(refreshBundle, REFRESH_MS);

  // ---- the camera (scanner-camera-1.js: one scan per ticket held to the lens) -------------
  const cameraButton = document.querySelector("[data-camera]");
  const video = document.querySelector("[data-camera-view]");
  let stopCamera = null;
  cameraButton.hidden = false;
  cameraButton.addEventListener("click", async () => {
    if (stopCamera) {
      stopCamera();
      stopCamera = null;
      video.hidden = true;
      cameraButton.textContent = WORDS.camera;
      return;
    }
    try {
      const { startCamera } = await import(config.cameraModule);
      video.hidden = false;
      stopCamera = await startCamera(video, scan, { zxing: config.zxing });
      cameraButton.textContent = WORDS.stopCamera;
    } catch (error) {
      video.hidden = true;
      const said = WORDS.cameraErrors[error.code];
      show({ decision: "stop", reason: "", message: said ? say(said, { detail: error.detail }) : error.message || String(error) });
    }
  });

  // ---- start -------------------------------------------------------------------------------
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker
      .register(config.serviceWorker, { scope: config.scope })
      .then(() => navigator.serviceWorker.ready)
      .then(() => {
        root.dataset.offlineReady = "true";
      })
      .catch(() => {
        root.dataset.offlineReady = "false";
      });
  }

  async function start({ justPaired = false } = {}) {
    showOnly(work);
    document.querySelector("[data-turnstile]").textContent = pairing.turnstile;
    const kept = await idb("bundle", "readonly", (s) => s.get("current"));
    if (kept && !bundle) {
      try {
        await activate(kept);
      } catch (err) {
        bundleStatus.textContent = err.message;
      }
    }
    await drawQueue();
    barcodeInput.focus();
    await reconnect({ refresh: !justPaired });
    root.dataset.state = revoked ? "revoked" : "ready";
  }

  if (pairing) start();
  else showOnly(pairForm);
}
