// Calling the API from a page, one way for every script (issue 36): Django's CSRF token, a JSON
// POST, and the words of a refusal.
//   import { csrfToken, inTime, post, postOnce, reasonOf } from "./api-1.js";

// A `{name}` slot filled.
const say = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slots[name] ?? "");

// Django's CSRF token. Its cookie, which base.html's "csrf-cookie" meta tag names: the cookie
// is set with every page, and is fresher than the token in a page a service worker kept (it
// rotates at login). The "csrf-token" meta tag's when there is no cookie.
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.content;
export function csrfToken() {
  const name = meta("csrf-cookie");
  const cookie = name && document.cookie.split("; ").find((c) => c.startsWith(`${name}=`));
  if (cookie) return decodeURIComponent(cookie.slice(name.length + 1));
  return meta("csrf-token") || "";
}

// A refusal the person can read: the API's {"code","field","detail"} (the field named), a list
// of what a form's fields lack (pydantic's detail list: each field and its message), or a text;
// else the page's words for a refusal, `refused` with its `{status}` slot and `notAllowed` for a
// 403 (each page says them in its reader's language).
export function reasonOf(data, status, words = {}) {
  if (data && data.field) return `${data.field}: ${data.detail}`;
  if (data && Array.isArray(data.detail)) {
    return data.detail.map((d) => `${(d.loc || []).slice(-1)[0]}: ${d.msg}`).join("; ");
  }
  if (data && typeof data.detail === "string" && data.detail) return data.detail;
  if (status === 403 && words.notAllowed) return words.notAllowed;
  return say(words.refused || "HTTP {status}", { status });
}

// A request not answered in this long is given up as if there were no network. On a link gone
// silent (a half-open connection) the browser would otherwise wait for minutes: a POST with its
// button disabled, and any request holding one of the six connections the browser keeps to the
// server, so that once all six hang nothing else the page asks for leaves the phone. ADR 0023.
const WAIT_MS = 15_000;

// The signal every fetch of a page passes: aborted when WAIT_MS has passed unanswered.
export const inTime = () => AbortSignal.timeout(WAIT_MS);

// POST a JSON body; answers the JSON answer, or throws an Error with the refusal's words (a
// TypeError, fetch's own, when there is no network or no answer in time).
export function post(url, body, words = {}) {
  return send(url, body, words, inTime());
}

async function send(url, body, words, signal) {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
    const data = await response.json().catch(() => ({}));
    if (signal.aborted) throw new TypeError("no answer in time");
    if (!response.ok) throw new Error(reasonOf(data, response.status, words));
    return data;
  } catch (err) {
    if (err.name === "TimeoutError" || err.name === "AbortError") throw new TypeError("no answer in time");
    throw err;
  }
}

// After a link went silent and came back, the browser may hand a request one of the connections
// it kept from before, which the link killed: it never answers (seen on CI, ADR 0023). For a POST
// the server stores once however often it comes (an acknowledgement), a copy goes again on
// another connection every SEND_AGAIN_MS without an answer, until one answers or WAIT_MS has
// passed; the first answer wins and the other copies are given up, which also rids the browser of
// the dead connections they were handed. A copy unanswered after COPY_WAIT_MS is given up on its
// own, so that six dead connections cannot hold every copy until the end.
const SEND_AGAIN_MS = 2_000;
const COPY_WAIT_MS = 6_000;

export function postOnce(url, body, words = {}) {
  return new Promise((resolve, reject) => {
    const copies = [];
    let done = false;
    const finish = (settle, value) => {
      if (done) return;
      done = true;
      clearInterval(again);
      clearTimeout(deadline);
      for (const copy of copies) copy.abort();
      settle(value);
    };
    const sendCopy = () => {
      const copy = new AbortController();
      copies.push(copy);
      setTimeout(() => copy.abort(), COPY_WAIT_MS);
      send(url, body, words, copy.signal).then(
        (data) => finish(resolve, data),
        // No network for this copy: another copy, or the deadline, answers.
        (err) => (err instanceof TypeError ? null : finish(reject, err)),
      );
    };
    const again = setInterval(sendCopy, SEND_AGAIN_MS);
    const deadline = setTimeout(() => finish(reject, new TypeError("no answer in time")), WAIT_MS);
    sendCopy();
  });
}
