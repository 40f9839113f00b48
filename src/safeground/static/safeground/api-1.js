// Calling the API from a page, one way for every script (issue 36): Django's CSRF token, a JSON
// POST, and the words of a refusal.
//   import { answeredOnce, answerOf, csrfToken, inTime, post, postOnce, reasonOf } from "./api-1.js";

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

// The signal every fetch of a page passes: aborted when WAIT_MS has passed unanswered, and
// `moreMs` more for a body that takes its time to send (a photo).
export const inTime = (moreMs = 0) => AbortSignal.timeout(WAIT_MS + moreMs);

// POST a JSON body; answers the JSON answer, or throws an Error with the refusal's words (a
// TypeError, fetch's own, when there is no network or no answer in time).
export async function post(url, body, words = {}) {
  return judged(await answerOf(url, jsonPost(body), inTime()), words);
}

const jsonPost = (body) => ({
  method: "POST",
  headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
  body: JSON.stringify(body),
});

// The server's answer, {status, ok, data}: its JSON ({} if none); null when there was no
// network, or no whole answer before `signal` gave up.
export async function answerOf(url, init, signal) {
  try {
    const response = await fetch(url, { credentials: "same-origin", ...init, signal });
    const data = await response.json().catch(() => ({}));
    if (signal.aborted) return null; // cut mid-answer
    return { status: response.status, ok: response.ok, data };
  } catch {
    return null;
  }
}

function judged(answer, words) {
  if (answer === null) throw new TypeError("no answer in time");
  if (!answer.ok) throw new Error(reasonOf(answer.data, answer.status, words));
  return answer.data;
}

// After a link went silent and came back, the browser may hand a request one of the connections
// it kept from before, which the link killed: it never answers (seen on CI, ADR 0023). A request
// the server stores once however often it comes (an acknowledgement; a report, by its idempotency
// key) goes again as a copy on another connection every SEND_AGAIN_MS without an answer, until
// one answers or WAIT_MS has passed; the first answer wins and the other copies are given up,
// which also rids the browser of the dead connections they were handed. A copy unanswered after
// COPY_WAIT_MS is given up on its own, so that six dead connections cannot hold every copy until
// the end.
const SEND_AGAIN_MS = 2_000;
const COPY_WAIT_MS = 6_000;

// The first answer to copies of one request, as answerOf says it (null: none in WAIT_MS). Each
// copy is sent as `init()` makes it then (a report restamps the phone's clock, ADR 0026).
export function answeredOnce(url, init) {
  return new Promise((resolve) => {
    const copies = [];
    let done = false;
    const finish = (answer) => {
      if (done) return;
      done = true;
      clearInterval(again);
      clearTimeout(deadline);
      for (const copy of copies) copy.abort();
      resolve(answer);
    };
    const sendCopy = () => {
      const copy = new AbortController();
      copies.push(copy);
      setTimeout(() => copy.abort(), COPY_WAIT_MS);
      // No answer to this copy: another copy, or the deadline, answers.
      answerOf(url, init(), copy.signal).then((answer) => answer && finish(answer));
    };
    const again = setInterval(sendCopy, SEND_AGAIN_MS);
    const deadline = setTimeout(() => finish(null), WAIT_MS);
    sendCopy();
  });
}

// POST a JSON body the server stores once, in copies (answeredOnce); answers as post does.
export async function postOnce(url, body, words = {}) {
  return judged(await answeredOnce(url, () => jsonPost(body)), words);
}
