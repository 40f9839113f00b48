// The steward's outbox: every report is written here first (IndexedDB), then sent in order.
//
//   import { Outbox } from "./outbox-1.js";
//   const outbox = new Outbox({ owner: "steward", csrfToken: () => "…", words: config.words });
//   await outbox.add({ url, body, photo, photoUrl });  // body carries its idempotency_key
//   await outbox.flush();  // {sent: [...], refused: [...], stopped: null | "offline" | ...}
//
// An item is "queued" until the server stores the report, then "photo" until its photo (if any)
// is uploaded, then it leaves the outbox. The server stores a report once per idempotency key,
// so a retry after a lost answer is harmless and answers with the same entry. A refusal (4xx) moves
// the item to the "refused" store with the server's reason: it is shown, never dropped. Network
// errors, 5xx, 401 (logged out), 408 and 429 stop the flush and keep the item and its place in
// the queue, so reports always go out in the order they were made.
import { answeredOnce, answerOf, inTime, reasonOf } from "./api-1.js";

const DB_NAME = "safeground-steward";
const DB_VERSION = 1;
const OUTBOX = "outbox";
const REFUSED = "refused";

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function openDb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => {
      const db = req.result;
      // Auto-increment ids keep the order the reports were made in.
      if (!db.objectStoreNames.contains(OUTBOX)) db.createObjectStore(OUTBOX, { keyPath: "id", autoIncrement: true });
      if (!db.objectStoreNames.contains(REFUSED)) db.createObjectStore(REFUSED, { keyPath: "id" });
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

// The outbox's own words, in the steward's language (the page's config gives them).
const say = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slots[name] ?? "");

// A report none of whose copies is answered in api-1.js's wait (15 s) is given up and sent again
// later under the same key (the server stores it once): on a connection that went silent (a
// half-open link after the Wi-Fi dropped) the browser would otherwise wait for minutes, and every
// report behind it with it. A photo, sent once, waits longer by its size at 128 kbit/s (a crowded
// cell's share). ADR 0023.
const SLOW_BYTES_PER_MS = 16;
const NO_ANSWER = { status: 0, ok: false, data: {} }; // no network, or no answer in time

// Worth trying again later: the report may yet be stored as it is.
const transient = (status) => status >= 500 || status === 401 || status === 408 || status === 429;

export class Outbox {
  constructor({ owner, csrfToken, words }) {
    this.owner = owner;
    this.words = words;
    this.csrfToken = csrfToken;
    this.db = openDb();
    this.running = null;
  }

  async _store(name, mode = "readonly") {
    const db = await this.db;
    return db.transaction(name, mode).objectStore(name);
  }

  async _all(name) {
    const items = await request((await this._store(name)).getAll());
    return items.filter((item) => item.owner === this.owner).sort((a, b) => a.id - b.id);
  }

  queued() {
    return this._all(OUTBOX);
  }

  refused() {
    return this._all(REFUSED);
  }

  async add({ url, body, photo = null, photoUrl = "", label = "" }) {
    const item = {
      owner: this.owner,
      url,
      body,
      photo, // a Blob: IndexedDB keeps it across reloads and restarts
      photoName: photo && photo.name ? photo.name : "photo",
      photoUrl,
      label,
      state: "queued",
      entry: null,
      createdAt: new Date().toISOString(),
      attempts: 0,
      lastError: "",
    };
    item.id = await request((await this._store(OUTBOX, "readwrite")).add(item));
    return item;
  }

  async dismiss(id) {
    await request((await this._store(REFUSED, "readwrite")).delete(id));
  }

  async _put(item) {
    await request((await this._store(OUTBOX, "readwrite")).put(item));
  }

  async _refuse(item, reason) {
    const db = await this.db;
    const tx = db.transaction([OUTBOX, REFUSED], "readwrite");
    tx.objectStore(OUTBOX).delete(item.id);
    tx.objectStore(REFUSED).put({ ...item, photo: null, reason, refusedAt: new Date().toISOString() });
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  }

  async _done(item) {
    await request((await this._store(OUTBOX, "readwrite")).delete(item.id));
  }

  // One flush at a time in this page, and across tabs where the browser has Web Locks.
  flush() {
    if (!this.running) {
      const run = () => this._flush();
      const locked = navigator.locks ? navigator.locks.request("safeground-steward-outbox", run) : run();
      this.running = locked.finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  async _flush() {
    const result = { sent: [], refused: [], stopped: null };
    for (const item of await this.queued()) {
      const outcome = item.state === "queued" ? await this._sendReport(item) : "photo";
      if (outcome === "photo") {
        const photoOutcome = await this._sendPhoto(item);
        if (photoOutcome !== "done") {
          if (photoOutcome === "refused") result.refused.push(item);
          else {
            result.stopped = photoOutcome;
            break;
          }
        } else result.sent.push(item);
      } else if (outcome === "done") result.sent.push(item);
      else if (outcome === "refused") result.refused.push(item);
      else {
        result.stopped = outcome;
        break; // keep the order: nothing overtakes a report still waiting
      }
    }
    return result;
  }

  _headers(headers = {}) {
    return { "X-CSRFToken": this.csrfToken(), ...headers };
  }

  async _sendReport(item) {
    item.attempts += 1;
    // Sent in copies (answeredOnce): the server stores a report once per idempotency key.
    const answer = (await answeredOnce(item.url, () => ({
      method: "POST",
      headers: this._headers({ "Content-Type": "application/json" }),
      // The phone's clock as it sends, read again at each try: the server learns how far the
      // clock is off, and a report held offline is not taken for a wrong clock (ADR 0026).
      body: JSON.stringify({ ...item.body, sent_at: new Date().toISOString() }),
    }))) ?? NO_ANSWER;
    if (answer.ok) {
      item.entry = { id: answer.data.id, seq: answer.data.seq };
      if (!item.photo) {
        await this._done(item);
        return "done";
      }
      item.state = "photo";
      await this._put(item);
      return "photo";
    }
    return this._failed(item, answer, (reason) => reason);
  }

  async _sendPhoto(item) {
    const form = new FormData();
    form.append("photo", item.photo, item.photoName);
    const url = item.photoUrl.replace("{entry_id}", item.entry.id);
    // One copy: a photo is not stored once per key. Its wait grows with its size.
    const wait = inTime((item.photo.size || 0) / SLOW_BYTES_PER_MS);
    const answer = (await answerOf(url, { method: "POST", headers: this._headers(), body: form }, wait)) ?? NO_ANSWER;
    if (answer.ok) {
      await this._done(item);
      return "done";
    }
    return this._failed(item, answer, (reason) => say(this.words.photoRefused, { seq: item.entry.seq, reason }));
  }

  async _failed(item, answer, explain) {
    if (answer.status === 0 || transient(answer.status)) {
      item.lastError = answer.status === 0 ? "no network" : answer.status === 401 ? "logged out" : `server error ${answer.status}`;
      await this._put(item);
      return answer.status === 0 ? "offline" : answer.status === 401 ? "logged-out" : "server";
    }
    await this._refuse(item, explain(reasonOf(answer.data, answer.status, { refused: this.words.refusedHttp, notAllowed: this.words.notAllowed })));
    return "refused";
  }
}
