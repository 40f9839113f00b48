// A steward's phone page: quick reports through the outbox (they survive no network) and what
// became of each, the tasks the control room gives them, and its broadcasts shown over
// everything with a sound.
import { csrfToken, inTime, post as apiPost, postOnce } from "./api-1.js";
import { connectLive, inLanguage, refreshPanels } from "./live-1.js";
import { Outbox } from "./outbox-1.js";

{
  const config = JSON.parse(document.getElementById("steward-config").textContent);
  const root = document.querySelector("[data-steward]");
  const form = document.querySelector("[data-report]");
  const message = document.querySelector("[data-report-message]");
  const freshness = document.querySelector("[data-freshness]");
  const RETRY_MS = 5_000;
  // The page's words, in the steward's language (incidents/steward_words.py): `{name}` a slot.
  const WORDS = config.words;
  const say = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slots[name] ?? "");
  const categoryName = (name) => WORDS.categories[name] || name;

  const time = (iso) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: config.timeZone });
  // The API's refusals in the steward's words (api-1.js).
  const words = { refused: WORDS.refusedHttp, notAllowed: WORDS.notAllowed };
  const post = (url, body) => apiPost(url, body, words);
  const noNetwork = (err) => err instanceof TypeError; // fetch's own failure, not a refusal

  // ---- Offline: the service worker keeps the page; the outbox keeps the reports. ----------
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker
      .register(config.serviceWorker, { scope: config.scope, type: "classic" })
      .then(() => navigator.serviceWorker.ready)
      .then(() => {
        root.dataset.offlineReady = "true";
      })
      .catch(() => {
        root.dataset.offlineReady = "false";
      });
  }

  const outbox = new Outbox({ owner: config.username, csrfToken, words: WORDS });
  let queuedCount = 0;
  let stopped = null;
  const sentList = document.querySelector("[data-sent]");

  function item(text, extra = "") {
    const li = document.createElement("li");
    li.textContent = text;
    if (extra) {
      const small = document.createElement("span");
      small.className = "meta";
      small.textContent = ` ${extra}`;
      li.append(small);
    }
    return li;
  }

  // Draws overlap (a flush's and a dismissal's): only the last one begun draws, so an older
  // read of the outbox never puts back a refusal the steward has just dismissed.
  let draws = 0;
  async function drawOutbox() {
    const draw = ++draws;
    const [queued, refused] = await Promise.all([outbox.queued(), outbox.refused()]);
    if (draw !== draws) return;
    queuedCount = queued.length;
    document.querySelector("[data-outbox-count]").textContent = say(WORDS.queued, { count: queued.length });
    document.querySelector("[data-queued]").replaceChildren(
      ...queued.map((q) => {
        const li = item(q.label, `${time(q.body.observed_at)} · ${q.state === "photo" ? say(WORDS.photoWaiting, { seq: q.entry.seq }) : WORDS.waiting}`);
        li.className = "is-queued";
        return li;
      }),
    );
    const refusedList = document.querySelector("[data-refused]");
    refusedList.replaceChildren(
      ...refused.map((r) => {
        const li = item(r.label, `${time(r.body.observed_at)}`);
        li.className = "is-refused";
        const why = document.createElement("p");
        why.className = "reason";
        why.dataset.reason = "";
        why.textContent = r.reason;
        const dismiss = document.createElement("button");
        dismiss.type = "button";
        dismiss.textContent = WORDS.seen;
        dismiss.setAttribute("aria-label", say(WORDS.seenLabel, { label: r.label }));
        dismiss.addEventListener("click", async () => {
          await outbox.dismiss(r.id);
          drawOutbox();
        });
        li.append(why, dismiss);
        return li;
      }),
    );
    document.querySelector("[data-refused-section]").hidden = refused.length === 0;
    showFreshness();
  }

  // One flush at a time; a call during one runs one more flush after it (for reports added
  // meanwhile). Each flush's result is drawn once, so each sent report shows once.
  let current = null;
  let next = null;
  function flush() {
    if (!current) {
      current = flushOnce().finally(() => {
        current = null;
      });
      return current;
    }
    next ||= current.catch(() => {}).then(() => {
      next = null;
      return flush();
    });
    return next;
  }
  async function flushOnce() {
    const result = await outbox.flush();
    stopped = result.stopped;
    for (const sent of result.sent) sentReport(sent);
    if (result.sent.length) drawReports();
    await drawOutbox();
    return result;
  }
  window.addEventListener("online", () => flush());
  setInterval(() => {
    if (queuedCount) flush();
  }, RETRY_MS);

  // ---- The report form -------------------------------------------------------------------
  const severityInputs = form.querySelectorAll('input[name="severity"]');
  const setSeverity = (value) => {
    for (const input of severityInputs) input.checked = input.value === String(value);
  };
  for (const tile of form.querySelectorAll('input[name="category"]')) {
    tile.addEventListener("change", () => {
      if (form.elements.more_category) form.elements.more_category.value = "";
      setSeverity(tile.dataset.severity);
    });
  }
  form.elements.more_category?.addEventListener("change", (event) => {
    const chosen = event.target.selectedOptions[0];
    if (!chosen.value) return;
    for (const tile of form.querySelectorAll('input[name="category"]')) tile.checked = false;
    setSeverity(chosen.dataset.severity);
  });

  function chosenCategory() {
    const tile = form.querySelector('input[name="category"]:checked');
    if (tile) return { code: tile.value, name: tile.nextElementSibling.textContent };
    const more = form.elements.more_category;
    if (more && more.value) return { code: more.value, name: more.selectedOptions[0].textContent };
    return null;
  }

  function chosenPlace() {
    const chip = form.querySelector('input[name="place"]:checked');
    const block = chip ? chip.value : form.elements.block_any?.value || "";
    if (block) return { place: { block }, label: say(WORDS.block, { block }) };
    if (config.post) return { place: { [config.post.field]: config.post.code }, label: config.post.label };
    return null;
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const observedAt = new Date().toISOString(); // when the steward pressed the button
    message.textContent = "";
    const category = chosenCategory();
    const where = chosenPlace();
    if (!category) {
      message.textContent = WORDS.pickWhat;
      return;
    }
    if (!where) {
      message.textContent = WORDS.pickWhere;
      return;
    }
    const text = form.elements.text.value.trim();
    const severity = Number(form.querySelector('input[name="severity"]:checked')?.value || 0) || null;
    const photo = form.elements.photo.files[0] || null;
    const added = await outbox.add({
      url: config.appendUrl,
      photoUrl: `${config.apiBase}/log/{entry_id}/photo`,
      body: {
        category: category.code,
        severity,
        text,
        observed_at: observedAt,
        idempotency_key: crypto.randomUUID(),
        ...where.place,
      },
      photo,
      label: `${category.name} · ${where.label}${text ? ` · ${text}` : ""}`,
    });
    form.reset();
    setSeverity(2);
    message.textContent = WORDS.saved;
    await drawOutbox();
    const result = await flush();
    if (result.sent.some((sent) => sent.id === added.id)) message.textContent = WORDS.sent;
    else if (result.refused.some((refused) => refused.id === added.id)) message.textContent = WORDS.refused;
  });

  // ---- My reports: each as it stands now, as the control room acts on it -----------------
  // Their frames reach this person wherever the report is (selectors.entry_audience); a report
  // is known as theirs by its id: from the server's page, or from the answer to its POST.
  const reports = new Map(); // id -> {id, seq, status, category_name, text, place, updated_seq, observed_at} or a label
  const latest = new Map(); // incident id -> its state in the last frame (may beat the POST's answer)
  const kept = `safeground-steward-reports-${config.fixtureId}-${config.username}`;
  const brief = ({ id, seq, status, category_name, text, place, place_names, updated_seq, observed_at }) => ({
    id, seq, status, category_name, text, place, place_names, updated_seq, observed_at,
  });

  function keepReport(report) {
    const known = reports.get(report.id);
    if (!known || known.updated_seq <= report.updated_seq) reports.set(report.id, report);
  }

  function sentReport(sent) {
    // The answer names only the entry: the rest is what the phone sent, until a frame says more.
    const { id, seq } = sent.entry;
    keepReport({ id, seq, status: "open", updated_seq: seq, observed_at: sent.body.observed_at, label: sent.label });
    if (latest.has(id)) keepReport(latest.get(id));
  }

  function stateWord(report) {
    const reopened = report.updated_seq !== report.seq;
    const word = report.status !== "open" ? report.status : reopened ? "open" : "received";
    return WORDS.states[word] || word;
  }

  function drawReports() {
    // Newest first by when it happened, as the control room lists the log.
    const sorted = [...reports.values()].sort((a, b) => Date.parse(b.observed_at) - Date.parse(a.observed_at) || b.seq - a.seq);
    sentList.replaceChildren(
      ...sorted.map((report) => {
        const label = report.label || [categoryName(report.category_name), inLanguage(report.place, report.place_names), report.text].filter(Boolean).join(" · ");
        const li = item(label, `${time(report.observed_at)} · ${say(WORDS.loggedAs, { seq: report.seq })} ·`);
        li.dataset.report = report.id;
        const state = document.createElement("span");
        state.className = "task-state";
        state.dataset.reportState = report.status;
        state.textContent = stateWord(report);
        li.append(" ", state);
        return li;
      }),
    );
    try {
      // A page opened again with no network is the service worker's copy: it keeps these.
      sessionStorage.setItem(kept, JSON.stringify(sorted));
    } catch {
      // no storage: the page still shows them until it is closed
    }
  }

  for (const report of config.reports) keepReport(report);
  try {
    for (const report of JSON.parse(sessionStorage.getItem(kept) || "[]")) {
      // sent since this copy of the page was made, or acted on since
      if (report.seq > config.lastSeq || reports.has(report.id)) keepReport(report);
    }
  } catch {
    // nothing kept
  }

  // ---- Tasks -----------------------------------------------------------------------------
  const tasks = new Map(config.tasks.map((t) => [t.id, t]));
  const taskList = document.querySelector("[data-tasks]");

  function drawTasks() {
    const sorted = [...tasks.values()].sort((a, b) => a.seq - b.seq);
    taskList.replaceChildren(...sorted.map(renderTask));
    document.querySelector("[data-no-tasks]").hidden = sorted.length > 0;
  }

  function renderTask(task) {
    const li = document.createElement("li");
    li.className = `task sev-${task.severity}`;
    li.dataset.task = task.id;
    const head = document.createElement("div");
    head.className = "task-head";
    head.textContent = `#${task.seq} ${categoryName(task.category_name)} · ${inLanguage(task.place, task.place_names)}`;
    const state = document.createElement("span");
    state.className = "task-state";
    state.dataset.taskState = "";
    state.textContent = WORDS.tasks[task.task || "new"] || task.task;
    head.append(" ", state);
    const text = document.createElement("p");
    text.textContent = task.text;
    const buttons = document.createElement("div");
    buttons.className = "task-actions";
    const error = document.createElement("p");
    error.className = "errorlist";
    error.setAttribute("role", "alert");
    const answer = (word, label) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "big";
      b.textContent = label;
      b.addEventListener("click", async () => {
        b.disabled = true;
        error.textContent = "";
        try {
          await post(`${config.apiBase}/log/${task.id}/task`, { task: word });
          tasks.set(task.id, { ...task, task: word });
          drawTasks();
        } catch (err) {
          error.textContent = noNetwork(err) ? WORDS.noNetworkTask : err.message;
          b.disabled = false;
        }
      });
      buttons.append(b);
    };
    if (!task.task) answer("accepted", WORDS.accept);
    if (task.task !== "done") answer("done", WORDS.done);
    li.append(head, text, buttons, error);
    return li;
  }

  function onEntry({ incident }) {
    latest.set(incident.id, brief(incident));
    if (reports.has(incident.id)) {
      keepReport(brief(incident));
      drawReports();
    }
    const mine = incident.assignee_username === config.username && incident.status !== "closed";
    if (mine) {
      const { id, seq, status, category_name, severity, text, place, place_names, task } = incident;
      tasks.set(id, { id, seq, status, category_name, severity, text, place, place_names, task });
    } else {
      tasks.delete(incident.id);
    }
    drawTasks();
  }

  // ---- Broadcasts: over everything, with a sound, until acknowledged ---------------------
  const dialog = document.querySelector("[data-broadcast]");
  const waiting = new Map(); // broadcast id -> broadcast, oldest first on screen
  let showing = null;
  let audio = null;

  // Browsers let a page make sound only after a tap: make the audio context on the first one.
  document.addEventListener(
    "pointerdown",
    () => {
      try {
        audio = audio || new AudioContext();
        audio.resume();
      } catch {
        audio = null;
      }
    },
    { once: true },
  );

  function beep() {
    try {
      audio = audio || new AudioContext();
      const start = audio.currentTime;
      for (let i = 0; i < 3; i += 1) {
        const tone = audio.createOscillator();
        const gain = audio.createGain();
        tone.type = "square";
        tone.frequency.value = 880;
        gain.gain.setValueAtTime(0.25, start + i * 0.35);
        gain.gain.setValueAtTime(0, start + i * 0.35 + 0.2);
        tone.connect(gain).connect(audio.destination);
        tone.start(start + i * 0.35);
        tone.stop(start + i * 0.35 + 0.22);
      }
    } catch {
      // no audio on this device: the dialog still shows
    }
    if (navigator.vibrate) navigator.vibrate([300, 100, 300, 100, 300]);
  }

  function addressedToMe(broadcast) {
    return broadcast.recipients.includes(config.username) && !broadcast.acknowledged.includes(config.username);
  }

  function receiveBroadcast(broadcast) {
    if (!addressedToMe(broadcast) || waiting.has(broadcast.id)) return;
    waiting.set(broadcast.id, broadcast);
    showNextBroadcast();
  }

  function showNextBroadcast() {
    if (showing && waiting.has(showing.id)) return;
    const next = [...waiting.values()].sort((a, b) => a.id - b.id)[0];
    showing = next || null;
    if (!next) {
      if (dialog.open) dialog.close();
      return;
    }
    dialog.dataset.broadcastId = next.id;
    dialog.dataset.script = next.script;
    // A script's own name (no words of the sender's) is read in the steward's language.
    const script = WORDS.scripts[next.script];
    dialog.querySelector("[data-broadcast-text]").textContent = script && next.text === script.source ? script.said : next.text;
    dialog.querySelector("[data-broadcast-meta]").textContent =
      `${next.zone ? `${next.zone} · ` : ""}${next.sent_by} · ${time(next.sent_at)}`;
    dialog.querySelector("[data-broadcast-error]").textContent = "";
    if (!dialog.open) dialog.showModal();
    beep();
  }

  function acknowledged(id) {
    waiting.delete(id);
    showNextBroadcast();
  }

  dialog.addEventListener("cancel", (event) => event.preventDefault()); // Escape does not dismiss it
  dialog.querySelector("[data-broadcast-ack]").addEventListener("click", async (event) => {
    const button = event.currentTarget;
    const id = showing?.id;
    if (!id) return;
    button.disabled = true;
    dialog.querySelector("[data-broadcast-error]").textContent = "";
    try {
      await postOnce(`${config.apiBase}/broadcasts/${id}/ack`, {}, words); // stored once
      acknowledged(id);
    } catch (err) {
      dialog.querySelector("[data-broadcast-error]").textContent = noNetwork(err)
        ? WORDS.noNetworkAck
        : err.message;
    } finally {
      button.disabled = false;
    }
  });

  async function fetchBroadcasts() {
    try {
      const response = await fetch(config.broadcastsUrl, { credentials: "same-origin", signal: inTime() });
      if (!response.ok) return;
      const found = await response.json();
      found.forEach(receiveBroadcast);
    } catch {
      // offline: the live socket or the next reconnect brings them
    }
  }

  // ---- Live frames and the freshness line ------------------------------------------------
  let connected = false;
  let lastUpdate = null;
  let refused = null;

  function onFrame(frame) {
    lastUpdate = new Date();
    refreshPanels(frame);
    if (frame.type === "log.entry") onEntry(frame.data);
    else if (frame.type === "broadcast") receiveBroadcast(frame.data);
    else if (frame.type === "broadcast.ack" && frame.data.user === config.username) {
      acknowledged(frame.data.broadcast); // acknowledged from another of my devices
    }
  }

  function showFreshness() {
    const online = navigator.onLine && connected;
    const ago = lastUpdate ? say(WORDS.lastUpdate, { seconds: Math.round((Date.now() - lastUpdate) / 1000) }) : WORDS.noUpdates;
    let text;
    if (refused === 4401) text = WORDS.loggedOut;
    else if (online) text = say(WORDS.connected, { ago }) + (queuedCount ? say(WORDS.queuedCount, { count: queuedCount }) : "");
    else text = say(WORDS.offline, { count: queuedCount });
    if (stopped === "logged-out") text = WORDS.loggedOutQueued;
    freshness.textContent = text;
    freshness.classList.toggle("ok", online);
    freshness.classList.toggle("down", !online);
    freshness.dataset.connected = online;
  }
  setInterval(showFreshness, 1000);
  window.addEventListener("offline", showFreshness);

  connectLive({
    fixtureId: config.fixtureId,
    lastSeq: config.lastSeq,
    onFrame,
    onStatus: (status) => {
      const reconnected = status.connected && !connected;
      connected = status.connected;
      refused = status.refused || null;
      if (status.lastUpdate) lastUpdate = status.lastUpdate;
      if (reconnected) {
        refreshPanels(); // deployment's panel: its frames have no seq to catch up by
        fetchBroadcasts(); // broadcasts are not in the catch-up: ask for any missed
        flush();
      }
      showFreshness();
    },
  });

  drawTasks();
  drawReports();
  drawOutbox().then(flush);
}
