// The live socket of a fixture, for pages: reconnects on its own, shows each frame once.
//
//   import { connectLive } from "/static/safeground/live-1.js";
//   const live = connectLive({ fixtureId, lastSeq, onFrame, onStatus });
//   live.close();
//
// Frames are {type, fixture, seq, data}. onFrame gets every frame except hello/pong and those
// whose seq is not above the last one seen (so a reconnect's catch-up never shows a frame twice).
// onStatus gets {connected, lastUpdate, reconnectIn} whenever that changes, and every few seconds
// so a page can show "connected · last update 12 s ago" or "reconnecting…", in its own words
// (each page's come from the server: incidents/steward_words.py, control_room_words.py).
// lastUpdate is the last frame of the match (an entry, a count), never the socket's own hello or
// pong; and a socket the server has not answered for SILENT_MS (two pings) is not "connected":
// a status line never claims a freshness it does not have.

const PING_EVERY_MS = 15_000;
// Reconnect back-off: capped, exponential, full jitter (see retry()).
const BACKOFF_FIRST_MS = 1_000;
const BACKOFF_MAX_MS = 4_000;
const TICK_MS = 5_000;
const SILENT_MS = 2 * PING_EVERY_MS + 5_000;
// A socket still opening after this long is on a link that went silent (a half-open connection
// after the Wi-Fi dropped): the browser would wait minutes for its handshake. ADR 0023.
const CONNECT_WAIT_MS = 10_000;

// A ground's name as the frame gives it (English) or, where the frame carries it, in the page's
// language: one frame serves every reader (safeground/languages.py, in_every_language).
export function inLanguage(text, names) {
  return (names && names[document.documentElement.lang]) || text;
}

export function connectLive({ fixtureId, lastSeq = 0, onFrame = () => {}, onStatus = () => {} }) {
  let seq = Number(lastSeq) || 0;
  let socket = null;
  let backoff = BACKOFF_FIRST_MS;
  let pingTimer = null;
  let retryTimer = null;
  let closed = false;
  const status = { connected: false, lastUpdate: null, reconnectIn: null };
  let lastHeard = 0; // the last frame of any kind, pongs included
  let openedAt = 0;

  const report = () => onStatus({ ...status });
  const tick = setInterval(() => {
    // The server stopped answering (a half-open connection), or the handshake never finished:
    // give that socket up and open another, which catches up.
    if (socket && status.connected && Date.now() - lastHeard > SILENT_MS) abandon();
    else if (socket && !status.connected && Date.now() - openedAt > CONNECT_WAIT_MS) abandon();
    report();
  }, TICK_MS);

  // Its close may never come on a silent link: stop listening to it and retry at once.
  function abandon() {
    const old = socket;
    socket = null;
    clearInterval(pingTimer);
    pingTimer = null;
    status.connected = false;
    old.close();
    retry();
  }

  function url() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const after = `?after=${seq}`; // always: a page opening at 0 wants the whole log
    return `${scheme}//${window.location.host}/ws/fixtures/${fixtureId}/${after}`;
  }

  function open() {
    retryTimer = null;
    openedAt = Date.now();
    const mine = new WebSocket(url());
    socket = mine;
    // A socket given up (abandon) may still answer late: only the current one is listened to.
    mine.addEventListener("open", () => {
      if (socket !== mine) return;
      lastHeard = Date.now();
      status.connected = true;
      status.reconnectIn = null;
      report();
      pingTimer = setInterval(() => send({ type: "ping" }), PING_EVERY_MS);
    });
    mine.addEventListener("message", (event) => {
      if (socket === mine) receive(event.data);
    });
    mine.addEventListener("close", (event) => {
      if (socket !== mine) return;
      clearInterval(pingTimer);
      pingTimer = null;
      status.connected = false;
      socket = null;
      if (closed || event.code === 4401 || event.code === 4403 || event.code === 4404) {
        status.reconnectIn = null;
        status.refused = event.code >= 4000 ? event.code : undefined;
        report();
        return; // logged out, not allowed or no such match: retrying will not help
      }
      retry();
    });
  }

  function retry() {
    // A wait anywhere in [0, backoff] (full jitter), the back-off doubling up to its cap: after a
    // restart the match's 2,000 screens come back spread over the cap, not in lockstep, and
    // none waits longer than the cap once the server is up (issue 17; bench/bench_live.py's
    // reconnect run mimics this, docs/adr/0002-live-fan-out.md, Update 4).
    const delay = Math.random() * backoff;
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    status.reconnectIn = delay;
    report();
    retryTimer = setTimeout(open, delay);
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  function receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    lastHeard = Date.now();
    // Admitted (not merely accepted: an overloaded server accepts, then closes with 1013).
    if (frame.type === "hello") backoff = BACKOFF_FIRST_MS;
    if (frame.type === "hello" || frame.type === "pong") return;
    status.lastUpdate = new Date();
    if (typeof frame.seq === "number") {
      if (frame.seq <= seq) return; // already shown (catch-up after a reconnect)
      seq = frame.seq;
    }
    onFrame(frame);
    report();
  }

  open();
  return {
    get lastSeq() {
      return seq;
    },
    close() {
      closed = true;
      clearInterval(tick);
      clearInterval(pingTimer);
      clearTimeout(retryTimer);
      if (socket) socket.close(1000);
    },
  };
}

// A panel answered with a copy older than the latest change (the server makes a new one at most
// every half second for all screens, supporters/triage_views.py) says when to read again.
document.addEventListener("htmx:afterRequest", (event) => {
  const again = Number(event.detail.xhr?.getResponseHeader("Safeground-Read-Again-Ms"));
  const panel = event.detail.elt?.closest?.("[data-live-panel]");
  if (again > 0 && panel) setTimeout(() => refreshSoon(panel), again);
});

// Panels other apps add to a page (incidents/panels.py) say which event types refresh them, in
// data-live-panel="type other.type"; htmx fetches the fragment again. With no frame (after a
// reconnect, when frames without a seq may have been missed) every panel is refreshed.
export function refreshPanels(frame = null) {
  if (!window.htmx) return;
  for (const panel of document.querySelectorAll("[data-live-panel]")) {
    const types = panel.dataset.livePanel.split(" ").filter(Boolean);
    if (frame === null || types.includes(frame.type)) refreshSoon(panel);
  }
}

// A live refresh must not wipe what someone is typing in a panel (a steward's note on a failing
// check; the form would then go without it): the fields they changed keep their value, and the
// focus stays, across the refresh's swap. A form's own answer swaps as the server says.
function changed(field) {
  if (field.type === "file") return field.files.length > 0;
  if (field.type === "checkbox" || field.type === "radio") return field.checked !== field.defaultChecked;
  if (field.tagName === "SELECT") return !field.options[field.selectedIndex]?.defaultSelected;
  return field.value !== field.defaultValue;
}

document.addEventListener("htmx:beforeSwap", (event) => {
  const panel = event.detail.target;
  if (!event.detail.shouldSwap || !panel.matches("[data-live-panel]")) return;
  if (event.detail.requestConfig?.verb !== "get") return;
  const typed = [...panel.querySelectorAll("input[id], textarea[id], select[id]")].filter(changed);
  const focused = panel.contains(document.activeElement) ? document.activeElement.id : "";
  if (!typed.length && !focused) return;
  panel.addEventListener("htmx:afterSwap", () => {
    for (const old of typed) {
      const field = document.getElementById(old.id);
      if (!field || !panel.contains(field) || field.type !== old.type) continue;
      if (old.type === "file") field.files = old.files;
      else if (old.type === "checkbox" || old.type === "radio") field.checked = old.checked;
      else field.value = old.value;
    }
    if (focused) document.getElementById(focused)?.focus();
  }, { once: true });
});

// A panel is fetched again at most once every REFRESH_GAP_MS: the first frame at once, the last
// of a burst at the end of the gap. A flood of frames (a stand's supporters reporting) would
// otherwise have every control room re-read its fragment as fast as the server can render it.
const REFRESH_GAP_MS = 500;
const refreshes = new WeakMap(); // panel -> { last: ms, due: timer or null }

function refreshSoon(panel) {
  const state = refreshes.get(panel) || { last: -Infinity, due: null };
  refreshes.set(panel, state);
  if (state.due !== null) return; // the refresh at the end of the gap will show this frame too
  const fire = () => {
    state.due = null;
    state.last = performance.now();
    window.htmx.trigger(panel, "refresh");
  };
  const wait = state.last + REFRESH_GAP_MS - performance.now();
  if (wait <= 0) fire();
  else state.due = setTimeout(fire, wait);
}
