// The control room: the live log (newest first, by the time observed), quick entry, actions, and the map with markers
// and heat. Everything on screen is drawn from live frames; the server is the only source.
import { inTime, post as apiPost } from "./api-1.js";
import { connectLive, inLanguage, refreshPanels } from "./live-1.js";

{
  const config = JSON.parse(document.getElementById("control-room-config").textContent);
  // The page's words in the loggist's language (incidents/control_room_words.py); `{name}` a slot.
  const WORDS = config.words;
  const say = (text, slots = {}) => text.replace(/\{(\w+)\}/g, (_, name) => slots[name] ?? "");
  const state = (status) => WORDS.states[status] || status;
  const task = (code) => WORDS.tasks[code] || code;
  const logList = document.querySelector("[data-log]");
  const assigning = new Map(); // incident id -> the name chosen in its "Assign to" list, not yet sent
  const template = document.getElementById("entry-template");
  const markers = document.querySelector("[data-markers]");
  const filters = document.querySelector("[data-filters]");
  const freshness = document.querySelector("[data-freshness]");
  const entries = new Map(); // seq -> entry
  const incidents = new Map(); // report id -> incident state
  const photos = new Map(); // entry seq -> Map(photo id -> {url, sha256})
  let lastUpdate = null;
  let connected = false;

  // The API's refusals in the loggist's words (api-1.js).
  const post = (url, body) => apiPost(url, body, { refused: WORDS.refused });
  // Reports and flashpoint warnings are incidents of their own; other entries act on one.
  const isIncident = (entry) => entry.kind === "report" || entry.kind === "warning";
  const actionUrl = (entryId, action) => `/api/fixtures/${config.fixtureId}/log/${entryId}/${action}`;
  const n = (x) => Number(x).toLocaleString("en-GB");
  // Newest first by when it happened, the entry number beside it: an entry logged late (the
  // replay, an offline phone's report) takes its place in time, not at the top (issue 38).
  const newestFirst = (a, b) => Date.parse(b.observed_at) - Date.parse(a.observed_at) || b.seq - a.seq;
  const time = (iso) => new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: config.timeZone });

  // A phone's clock off, or its report sent late from its outbox: told apart by the phone's
  // own time at sending (device_offset_s, ADR 0026). The time shown is already corrected.
  function clockMark(entry) {
    const offset = entry.device_offset_s;
    if (offset === null || offset === undefined) return "";
    const limit = config.clockMarkSeconds;
    const minutes = (seconds) => Math.round(Math.abs(seconds) / 60);
    const marks = [];
    if (Math.abs(offset) >= limit) marks.push(say(offset > 0 ? WORDS.clockBehind : WORDS.clockAhead, { minutes: minutes(offset) }));
    const late = (Date.parse(entry.logged_at) - Date.parse(entry.observed_at)) / 1000;
    if (late >= limit) marks.push(say(WORDS.sentLate, { minutes: minutes(late) }));
    return marks.join(" · ");
  }

  function describeAction(e) {
    const who = e.author;
    const seq = e.concerns;
    if (e.kind === "assignment") return say(WORDS.assigned, { seq, assignee: e.assignee, author: who });
    const level = config.levels[e.escalated_to] || e.escalated_to;
    if (e.kind === "escalation") return say(WORDS.escalated, { seq, level, author: who });
    if (e.kind === "status") return say(WORDS.statusBy, { seq, status: state(e.status), author: who });
    if (e.kind === "correction") return say(WORDS.corrected, { seq, author: who });
    if (e.kind === "task") return say(WORDS.taskBy, { seq, task: task(e.task), author: who });
    return `#${e.seq}`;
  }

  function passesFilters(entry) {
    const incident = incidents.get(isIncident(entry) ? entry.id : entries.get(entry.concerns)?.id);
    if (!incident) return true;
    const f = new FormData(filters);
    if (f.get("category") && incident.category !== f.get("category")) return false;
    if (Number(f.get("severity")) && (incident.severity || 0) < Number(f.get("severity"))) return false;
    if (f.get("zone") && !incident.zone_ids.includes(Number(f.get("zone")))) return false;
    if (f.get("status") && incident.status !== f.get("status")) return false;
    return true;
  }

  function actionsFor(incident) {
    const box = document.createElement("div");
    box.className = "actions";
    if (incident.status === "closed") return box;
    // `control`: the button's name in the page's own terms (focus is kept by it across redraws).
    const button = (control, label, onClick) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = label;
      b.dataset.control = control;
      b.addEventListener("click", () => onClick().catch((err) => alert(err.message)));
      box.append(b);
    };
    if (config.may.assign && config.people.length) {
      // Chosen, then sent with its button: the arrow keys change a closed select at once, so
      // assigning on "change" gave the first name to a keyboard user on their first key press.
      const select = document.createElement("select");
      select.setAttribute("aria-label", say(WORDS.assignTo, { seq: incident.seq }));
      select.dataset.control = "assignee";
      select.append(new Option(WORDS.assignToChoose, ""));
      for (const p of config.people) select.append(new Option(p.label, p.username));
      select.value = assigning.get(incident.id) || "";
      select.addEventListener("change", () => assigning.set(incident.id, select.value));
      box.append(select);
      button("Assign", WORDS.assign, async () => {
        if (!select.value) return select.focus();
        await post(actionUrl(incident.id, "assign"), { assignee: select.value });
        assigning.delete(incident.id);
      });
    }
    if (config.may.escalate && incident.status !== "resolved") {
      for (const [level, label] of Object.entries(config.levels)) {
        if (incident.escalated_to === level) continue;
        button(`Escalate to ${level}`, say(WORDS.escalateTo, { level: label.toLowerCase() }), () =>
          post(actionUrl(incident.id, "escalate"), { to: level }),
        );
      }
    }
    if (config.may.status) {
      if (incident.status === "resolved") {
        button("Close", WORDS.close, () => post(actionUrl(incident.id, "status"), { status: "closed" }));
        button("Reopen", WORDS.reopen, () => post(actionUrl(incident.id, "status"), { status: "open" }));
      } else {
        button("Resolve", WORDS.resolve, () => post(actionUrl(incident.id, "status"), { status: "resolved" }));
      }
    }
    if (config.may.correct) {
      button("Correct", WORDS.correct, async () => {
        const text = prompt(say(WORDS.correctedText, { seq: incident.seq }), incident.text);
        if (text === null) return;
        const note = prompt(WORDS.whyCorrected);
        if (!note) return;
        await post(actionUrl(incident.id, "correct"), { text, note });
      });
    }
    return box;
  }

  function render(entry) {
    const node = template.content.firstElementChild.cloneNode(true);
    node.dataset.seq = entry.seq;
    const isReport = isIncident(entry);
    const incident = isReport ? incidents.get(entry.id) : null;
    node.classList.add(isReport ? `sev-${incident.severity}` : "action");
    if (entry.kind === "warning") node.classList.add("warning");
    node.querySelector(".seq").textContent = `#${entry.seq}`;
    node.querySelector("time").textContent = time(entry.observed_at);
    node.querySelector("time").dateTime = entry.observed_at;
    const mark = clockMark(entry);
    if (mark) {
      const clock = node.querySelector("[data-clock]");
      clock.textContent = `(${mark})`;
      clock.hidden = false;
    }
    if (isReport) {
      node.dataset.incident = entry.id;
      node.querySelector(".sev").textContent = `S${incident.severity}`;
      node.querySelector(".cat").textContent = incident.category_name;
      node.querySelector(".place").textContent = inLanguage(incident.place, incident.place_names);
      node.querySelector(".status").textContent = state(incident.status);
      node.querySelector(".entry-text").textContent = incident.text;
      node.querySelector(".entry-meta").textContent = [
        entry.author,
        incident.assignee ? say(WORDS.assignedTo, { assignee: incident.assignee }) : "",
        incident.task ? ` (${task(incident.task)})` : "",
        incident.escalated_to ? say(WORDS.escalatedToMeta, { level: config.levels[incident.escalated_to] }) : "",
      ].join("");
      node.classList.toggle("is-closed", incident.status === "closed");
      node.querySelector(".actions").replaceWith(actionsFor(incident));
    } else {
      node.querySelector(".cat").textContent = describeAction(entry);
      node.querySelector(".entry-text").textContent = [entry.text, entry.note].filter(Boolean).join(" — ");
      node.querySelector(".actions").remove();
    }
    drawPhotos(node.querySelector(".entry-photos"), entry.seq);
    node.hidden = !passesFilters(entry);
    return node;
  }

  // Photos are served only to those who may see their entry (the frame gives the URL).
  function drawPhotos(box, seq) {
    const shown = photos.get(seq);
    if (!shown) return box.remove();
    box.replaceChildren(
      ...[...shown].map(([id, p]) => {
        const link = Object.assign(document.createElement("a"), { href: p.url, target: "_blank", rel: "noopener" });
        link.dataset.photo = id;
        const img = Object.assign(document.createElement("img"), { src: p.url, loading: "lazy", alt: say(WORDS.photoOf, { seq }) });
        img.title = `SHA-256 ${p.sha256}`;
        link.append(img);
        return link;
      }),
    );
  }

  // The log is drawn again on every frame: a keyboard user's place in it (the entry and the
  // control they were on) is kept, not dropped to the top of the page.
  function focusedInLog() {
    const active = document.activeElement;
    if (!active || !logList.contains(active) || !active.dataset.control) return null;
    return { seq: active.closest("[data-seq]")?.dataset.seq, control: active.dataset.control };
  }
  function refocus(place) {
    if (!place) return;
    const entry = logList.querySelector(`[data-seq="${place.seq}"]`);
    const control = entry && [...entry.querySelectorAll("[data-control]")].find((c) => c.dataset.control === place.control);
    (control || entry?.querySelector("[data-control]") || logList.closest("[tabindex]"))?.focus();
  }

  function redraw() {
    const sorted = [...entries.values()].sort(newestFirst);
    const place = focusedInLog();
    logList.replaceChildren(...sorted.map(render));
    refocus(place);
    drawMap();
    drawTally();
    drawPinned();
    drawOutside();
  }

  // The match so far, where the log is: arrests, ejections and medical cases from the log's
  // reports; denials and people inside (against the safe capacity) from the gates' counts.
  let gateCounts = null;
  function drawTally() {
    const reports = [...incidents.values()].filter((i) => i.kind === "report");
    for (const code of ["arrest", "ejection", "medical"]) {
      const cell = document.querySelector(`[data-tally-${code}]`);
      if (cell) cell.textContent = reports.filter((i) => i.category === code).length;
    }
    if (!gateCounts) return;
    document.querySelector("[data-tally-denied]").textContent = n(gateCounts.denied.total);
    const inside = document.querySelector("[data-tally-inside]");
    inside.textContent = say(WORDS.admittedOf, { admitted: n(gateCounts.admitted), capacity: n(gateCounts.capacity) });
    inside.classList.toggle("over", gateCounts.capacity > 0 && gateCounts.admitted > gateCounts.capacity);
  }

  // Warnings (a flashpoint's, a gate's) stay pinned above the log, with a sound when one arrives, until this
  // operator acknowledges it (kept in this browser) or it is resolved.
  const ackKey = `safeground:acknowledged:${config.fixtureId}`;
  const acknowledged = new Set(JSON.parse(localStorage.getItem(ackKey) || "[]"));
  const sounded = new Set();
  const pinned = document.querySelector("[data-pinned-warnings]");
  function drawPinned() {
    const open = [...incidents.values()]
      .filter((i) => i.kind === "warning" && !["resolved", "closed"].includes(i.status) && !acknowledged.has(i.id))
      .sort(newestFirst);
    pinned.hidden = open.length === 0;
    pinned.querySelector("[data-pinned-list]").replaceChildren(
      ...open.map((w) => {
        const li = document.createElement("li");
        li.dataset.warning = w.id;
        const text = Object.assign(document.createElement("span"), {
          textContent: `#${w.seq} ${time(w.observed_at)} ${inLanguage(w.place, w.place_names)}: ${w.text}`,
        });
        const ack = Object.assign(document.createElement("button"), { type: "button", textContent: WORDS.acknowledge });
        ack.setAttribute("aria-label", say(WORDS.acknowledgeWarning, { seq: w.seq }));
        ack.addEventListener("click", () => {
          acknowledged.add(w.id);
          localStorage.setItem(ackKey, JSON.stringify([...acknowledged]));
          drawPinned();
        });
        li.append(text, ack);
        return li;
      }),
    );
    const fresh = open.filter((w) => !sounded.has(w.id));
    if (fresh.length) {
      fresh.forEach((w) => sounded.add(w.id));
      alarm();
    }
  }
  let audio = null;
  function alarm() {
    pinned.dataset.alarms = Number(pinned.dataset.alarms || 0) + 1;
    try {
      audio ||= new AudioContext();
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = 880;
      gain.gain.value = 0.2;
      tone.connect(gain).connect(audio.destination);
      tone.start();
      tone.stop(audio.currentTime + 0.5);
    } catch {
      // No sound (no audio device, or the page has not been interacted with): the pin stays.
    }
  }

  // Incidents with no block (outside the ground, at a gate, on a concourse) on a strip beside
  // the map, so none is nowhere.
  function drawOutside() {
    const list = document.querySelector("[data-outside-list]");
    const off = [...incidents.values()].filter((i) => i.kind === "report" && !i.block).sort(newestFirst);
    if (!off.length) return;
    list.replaceChildren(
      ...off.map((i) => {
        const li = document.createElement("li");
        li.dataset.incident = i.id;
        li.className = `sev-${i.severity}`;
        li.textContent = `#${i.seq} ${time(i.observed_at)} ${inLanguage(i.place, i.place_names) || WORDS.noPlace}: ${i.category_name} (S${i.severity}) ${state(i.status)}`;
        return li;
      }),
    );
  }

  function drawMap() {
    markers.replaceChildren();
    const perBlock = new Map();
    for (const incident of incidents.values()) {
      if (!incident.block) continue;
      const block = document.querySelector(`[data-plan] .block[data-block="${CSS.escape(incident.block)}"]`);
      if (!block) continue;
      const n = perBlock.get(incident.block) || 0;
      perBlock.set(incident.block, n + 1);
      const circle = document.createElementNS("http://www.w3.org/2000/svg", "circle");
      circle.setAttribute("cx", Number(block.dataset.x) + (n % 3) * 9 - 9);
      circle.setAttribute("cy", Number(block.dataset.y) - 14 - Math.floor(n / 3) * 9);
      circle.setAttribute("r", 6);
      circle.setAttribute("class", `marker sev-${incident.severity}${["resolved", "closed"].includes(incident.status) ? " faded" : ""}`);
      circle.dataset.incident = incident.id;
      const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = `#${incident.seq} ${incident.category_name} (S${incident.severity}) ${state(incident.status)}`;
      circle.append(title);
      markers.append(circle);
    }
    listByBlock();
    drawHeat();
  }

  // The map's text alternative: each block with incidents, and its incidents, in the plan's order.
  function listByBlock() {
    const items = [];
    for (const block of document.querySelectorAll("[data-plan] .block")) {
      const here = [...incidents.values()].filter((i) => i.block === block.dataset.block);
      if (!here.length) continue;
      const li = document.createElement("li");
      li.dataset.block = block.dataset.block;
      li.textContent = `Block ${block.dataset.name}: ${here.map((i) => `#${i.seq} ${i.category_name} (S${i.severity}) ${i.status}`).join("; ")}`;
      items.push(li);
    }
    if (!items.length) {
      const none = document.createElement("li");
      none.className = "muted";
      none.textContent = WORDS.nothingInBlock;
      items.push(none);
    }
    document.querySelector("[data-map-blocks-list]").replaceChildren(...items);
  }

  // Heat per zone: the severities of reports observed in the last N minutes, summed.
  function drawHeat() {
    const minutes = Number(document.querySelector("[data-heat-window]").value);
    const times = [...incidents.values()].map((i) => new Date(i.observed_at).getTime());
    const newest = times.length ? Math.max(...times) : Date.now();
    // Live, heat is measured back from now; for a replayed past match, from its newest entry.
    const reference = Math.abs(Date.now() - newest) < 6 * 3600 * 1000 ? Date.now() : newest;
    const since = reference - minutes * 60 * 1000;
    const heat = new Map();
    const warned = new Set();
    for (const incident of incidents.values()) {
      if (incident.kind === "warning") {
        // A gate's warning marks its gate (the Gates tab's), not the stands it serves.
        if (incident.category !== "gate" && !["resolved", "closed"].includes(incident.status)) {
          incident.zone_ids.forEach((z) => warned.add(z));
        }
        continue;
      }
      if (new Date(incident.observed_at).getTime() < since) continue;
      for (const zone of incident.zone_ids) heat.set(zone, (heat.get(zone) || 0) + (incident.severity || 1));
    }
    for (const block of document.querySelectorAll("[data-plan] .block")) {
      const score = heat.get(Number(block.dataset.zoneId)) || 0;
      const level = score >= 12 ? 3 : score >= 6 ? 2 : score > 0 ? 1 : 0;
      block.classList.remove("heat-1", "heat-2", "heat-3");
      if (level) block.classList.add(`heat-${level}`);
      block.classList.toggle("flashpoint", warned.has(Number(block.dataset.zoneId)));
      block.dataset.heat = score;
    }
  }

  // Broadcasts: what went out, who has acknowledged and who has not, live.
  const broadcasts = new Map();
  function drawBroadcasts() {
    const box = document.querySelector("[data-broadcasts]");
    const list = document.querySelector("[data-broadcast-list]");
    box.hidden = broadcasts.size === 0;
    const items = [...broadcasts.values()].sort((a, b) => b.id - a.id).map((b) => {
      const li = document.createElement("li");
      li.dataset.broadcast = b.id;
      const waiting = b.recipients.filter((name) => !b.acknowledged.includes(name));
      const head = document.createElement("strong");
      head.textContent = `${time(b.sent_at)} ${b.text}${b.zone ? ` (${b.zone})` : ""}`;
      const acks = document.createElement("div");
      acks.className = "meta";
      acks.dataset.broadcastAcks = "";
      acks.textContent = say(WORDS.acknowledged, { names: b.acknowledged.join(", ") || WORDS.nobodyYet });
      const wait = document.createElement("div");
      wait.className = "meta";
      wait.dataset.broadcastWaiting = "";
      wait.textContent = waiting.length ? say(WORDS.waitingFor, { names: waiting.join(", ") }) : WORDS.everyoneAcknowledged;
      li.append(head, acks, wait);
      return li;
    });
    list.replaceChildren(...items);
  }
  fetch(config.broadcastsUrl, { credentials: "same-origin", signal: inTime() })
    .then((r) => (r.ok ? r.json() : []))
    .then((found) => {
      for (const b of found) if (!broadcasts.has(b.id)) broadcasts.set(b.id, b);
      drawBroadcasts();
    });

  // The gates: admissions against capacity, denials, and the capacity warnings, live.
  function drawCounts(c) {
    const box = document.querySelector("[data-entry-counts]");
    if (!box || !c) return;
    box.hidden = false;
    document.querySelector("[data-gates-waiting]")?.remove();
    gateCounts = c;
    drawTally();
    box.querySelector("[data-admitted]").textContent = n(c.admitted);
    box.querySelector("[data-capacity]").textContent = n(c.capacity);
    box.querySelector("[data-prevented]").textContent = n(c.prevented);
    box.querySelector("[data-denied]").textContent = n(c.denied.total);
    box.querySelector("[data-count-warnings]").replaceChildren(
      ...c.warnings.map((text) => Object.assign(document.createElement("li"), { textContent: text })),
    );
    box.querySelector("[data-zone-counts]").replaceChildren(
      ...c.zones.map((z) => {
        const tr = document.createElement("tr");
        tr.dataset.zone = z.code;
        tr.classList.toggle("warn", z.warning);
        for (const v of [inLanguage(z.name, z.names), n(z.admitted), n(z.capacity), `${Math.round(z.share * 100)}%`]) {
          tr.append(Object.assign(document.createElement("td"), { textContent: v }));
        }
        return tr;
      }),
    );
    const reasons = Object.entries(c.denied.by_reason).filter(([, count]) => count > 0);
    box.querySelector("[data-denied-reasons]").textContent = reasons.length
      ? say(WORDS.denied, { reasons: reasons.map(([r, count]) => `${reasonName(r)} ${count}`).join(", ") })
      : "";
    if (c.conflicts) showConflicts(c.conflicts.list, c.conflicts.total);
  }
  // A ticket admitted twice (offline scanners): both scans, the first one stands. From the
  // counts (on load and every entry.counts) and from entry.conflict frames, each shown once.
  const conflicts = new Map();
  function showConflicts(found, total = null) {
    const list = document.querySelector("[data-conflicts]");
    if (!list) return;
    for (const c of found) conflicts.set(c.id, c);
    const scanText = (s) =>
      say(WORDS.scanAt, { time: time(s.scanned_at), gate: s.gate, turnstile: s.turnstile }) + (s.offline ? WORDS.offline : "");
    const items = [...conflicts.values()].sort((a, b) => b.id - a.id).map((c) => {
      const li = document.createElement("li");
      li.dataset.conflict = c.id;
      const t = c.ticket;
      const seat = t.block ? say(WORDS.seat, { block: t.block, row: t.row, seat: t.seat }) : t.area;
      const head = Object.assign(document.createElement("strong"), { textContent: say(WORDS.ticketFor, { seat }) });
      const first = Object.assign(document.createElement("div"), { textContent: say(WORDS.firstScan, { scan: scanText(c.first) }) });
      const second = Object.assign(document.createElement("div"), { textContent: say(WORDS.againScan, { scan: scanText(c.second) }) });
      first.className = "meta";
      second.className = "meta";
      li.append(head, first, second);
      return li;
    });
    if (items.length) list.replaceChildren(...items);
    document.querySelector("[data-conflict-count]").textContent = `(${Math.max(total ?? 0, conflicts.size)})`;
  }

  // The reasons' names, in the reader's language, from the counts the page asks for itself (a
  // published entry.counts is in the server's language: its names are not taken).
  let reasonLabels = {};
  const reasonName = (code) => reasonLabels[code] || code.replace("_", " ");
  fetch(config.countsUrl, { credentials: "same-origin", signal: inTime() })
    .then((r) => (r.ok ? r.json() : null))
    .then((c) => {
      if (c?.denied?.labels) reasonLabels = c.denied.labels;
      drawCounts(c);
      if (lastGates) drawGates(lastGates);
    });

  // Gate pressure (entry.gates): each gate's arrivals against its entry capacity, the queue they
  // imply, its denials by reason and its turnstiles; the gate warnings above, with their figures,
  // and the warned gates marked on the map.
  let lastGates = null;
  function warningWords(w) {
    const f = w.figures;
    if (w.kind === "jump") {
      return say(WORDS.gateJump, {
        gate: w.gate, reasons: w.reasons.map(reasonName).join(WORDS.reasonsJoinedBy), count: n(f.count),
        seconds: f.seconds, perMinute: n(f.per_minute), before: n(f.before_per_minute), minutes: f.baseline_minutes,
      });
    }
    if (w.kind === "capacity") {
      return say(WORDS.gateCapacity, {
        gate: w.gate, arrivals: n(f.arrivals_per_minute), capacity: n(f.capacity_per_minute),
        turnstiles: f.turnstiles, minutes: f.minutes,
      });
    }
    return say(WORDS.gateSilent, {
      gate: w.gate, turnstile: w.turnstile, seconds: f.seconds, busy: f.busy_turnstiles, others: n(f.others_per_minute),
    });
  }
  function drawGates(g) {
    lastGates = g;
    const box = document.querySelector("[data-gate-pressure]");
    if (!box) return;
    box.hidden = false;
    document.querySelector("[data-gates-waiting]")?.remove();
    const warned = new Set(g.warnings.map((w) => w.gate));
    box.querySelector("[data-gate-warnings]").replaceChildren(
      ...g.warnings.map((w) => {
        const li = Object.assign(document.createElement("li"), { textContent: warningWords(w) });
        li.dataset.gateWarning = w.kind;
        return li;
      }),
    );
    box.querySelector("[data-gate-rows]").replaceChildren(
      ...g.gates.map((gate) => {
        const tr = document.createElement("tr");
        tr.dataset.gate = gate.gate;
        tr.classList.toggle("warn", warned.has(gate.gate));
        const denied = Object.entries(gate.denied).map(([r, count]) => `${reasonName(r)} ${n(count)}`).join(", ");
        const cells = [
          gate.gate, n(gate.arrivals_per_minute), n(gate.capacity_per_minute),
          say(WORDS.queue, { queue: n(gate.queue), minutes: n(gate.queue_minutes) }), denied,
        ];
        for (const v of cells) tr.append(Object.assign(document.createElement("td"), { textContent: v }));
        const td = document.createElement("td");
        for (const t of gate.turnstiles) {
          const span = document.createElement("span");
          span.textContent = t.silent ? say(WORDS.turnstileSilent, { code: t.code }) : say(WORDS.turnstileRate, { code: t.code, rate: n(t.per_minute) });
          span.classList.toggle("silent", t.silent);
          td.append(span, " ");
        }
        tr.append(td);
        return tr;
      }),
    );
    for (const marker of document.querySelectorAll("[data-plan] .gate")) {
      const w = g.warnings.filter((x) => x.gate === marker.dataset.gate);
      marker.classList.toggle("warn", w.length > 0);
      marker.querySelector("title").textContent = [marker.dataset.gate, ...w.map(warningWords)].join("\n");
    }
  }

  // A banned holder at a turnstile (entry.denied, entry.banned_admitted): where, when, the seat.
  function bannedItem(d) {
    const li = document.createElement("li");
    const t = d.ticket;
    const seat = t
      ? [t.block, t.row && say(WORDS.row, { row: t.row }), t.seat && say(WORDS.seatNumber, { seat: t.seat })].filter(Boolean).join(", ")
      : "";
    li.textContent =
      say(WORDS.scanAt, { time: time(d.scanned_at), gate: d.gate, turnstile: d.turnstile }) +
      (d.offline ? WORDS.offline : "") +
      (seat ? say(WORDS.ticketForInLine, { seat }) : "");
    if (d.flag) {
      const link = document.createElement("a");
      link.href = `/register/flags/${d.flag}/`;
      link.textContent = WORDS.flag;
      li.append(link);
    }
    return li;
  }
  function showBannedDenial(d) {
    const list = document.querySelector("[data-banned-denials]");
    if (!list) return;
    list.querySelector(".muted")?.remove();
    list.prepend(bannedItem(d));
  }
  // A scanner offline let in a holder banned after its ticket list was made: they are inside.
  // Rare, so the list is made with the first one, above the turnstile refusals.
  function showBannedAdmitted(d) {
    const panel = document.querySelector("[data-entry-counts]");
    if (!panel) return;
    let list = panel.querySelector("[data-banned-admitted]");
    if (!list) {
      const heading = Object.assign(document.createElement("h3"), { textContent: WORDS.bannedAdmitted });
      list = Object.assign(document.createElement("ol"), { className: "list banned-admitted" });
      list.dataset.bannedAdmitted = "";
      list.setAttribute("role", "alert");
      panel.querySelector("[data-banned-denials]").previousElementSibling.before(heading, list);
    }
    list.prepend(bannedItem(d));
  }

  function onOtherFrame(frame) {
    if (frame.type === "entry.counts") {
      drawCounts(frame.data);
    } else if (frame.type === "entry.gates") {
      drawGates(frame.data);
    } else if (frame.type === "entry.denied") {
      showBannedDenial(frame.data);
    } else if (frame.type === "entry.banned_admitted") {
      showBannedAdmitted(frame.data);
    } else if (frame.type === "entry.conflict") {
      showConflicts([frame.data]);
    } else if (frame.type === "broadcast") {
      broadcasts.set(frame.data.id, frame.data);
      drawBroadcasts();
    } else if (frame.type === "broadcast.ack") {
      const b = broadcasts.get(frame.data.broadcast);
      if (b && !b.acknowledged.includes(frame.data.user)) b.acknowledged.push(frame.data.user);
      drawBroadcasts();
    } else if (frame.type === "log.photo") {
      const d = frame.data;
      if (!photos.has(d.seq)) photos.set(d.seq, new Map());
      photos.get(d.seq).set(d.photo, { url: d.url, sha256: d.sha256 });
      scheduleRedraw();
    } else if (frame.type === "steward.post") {
      const list = document.querySelector("[data-post-list]");
      if (!list) return;
      list.querySelector(".muted")?.remove();
      let li = list.querySelector(`[data-post="${CSS.escape(frame.data.steward)}"]`);
      if (!li) {
        li = document.createElement("li");
        li.dataset.post = frame.data.steward;
        list.append(li);
      }
      li.textContent = `${frame.data.name}: ${inLanguage(frame.data.post, frame.data.post_names)}`;
    }
  }

  function onFrame(frame) {
    refreshPanels(frame);
    if (frame.type !== "log.entry") return onOtherFrame(frame);
    const { entry, incident } = frame.data;
    entries.set(entry.seq, entry);
    incidents.set(incident.id, incident);
    lastUpdate = new Date();
    scheduleRedraw();
  }
  let pending = false;
  function scheduleRedraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      redraw();
    });
  }

  function showFreshness() {
    const ago = lastUpdate ? Math.round((Date.now() - lastUpdate) / 1000) : null;
    freshness.textContent = connected
      ? say(WORDS.connected, { ago: ago === null ? WORDS.noUpdates : say(WORDS.lastUpdate, { seconds: ago }) })
      : say(WORDS.reconnecting, { ago: ago === null ? "" : say(WORDS.lastUpdateAgo, { seconds: ago }) });
    freshness.classList.toggle("ok", connected);
    freshness.classList.toggle("down", !connected);
    freshness.dataset.connected = connected;
  }
  setInterval(showFreshness, 1000);
  setInterval(drawHeat, 30000);

  connectLive({
    fixtureId: config.fixtureId,
    onFrame,
    onStatus: (status) => {
      if (status.connected && !connected) refreshPanels(); // frames before the socket, or missed
      connected = status.connected;
      if (status.lastUpdate) lastUpdate = status.lastUpdate;
      showFreshness();
    },
  });

  filters.addEventListener("change", redraw);

  // The side column's tabs (map, gates, broadcasts, posts): arrow keys move between them, the
  // skip links open theirs.
  const tabs = [...document.querySelectorAll('[role="tab"][data-tab]')];
  function openTab(name, focus = true) {
    for (const tab of tabs) {
      const on = tab.dataset.tab === name;
      tab.setAttribute("aria-selected", on);
      tab.tabIndex = on ? 0 : -1;
      document.querySelector(`[data-panel="${tab.dataset.tab}"]`).hidden = !on;
      if (on && focus) tab.focus();
    }
  }
  for (const [index, tab] of tabs.entries()) {
    tab.addEventListener("click", () => openTab(tab.dataset.tab));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      openTab(tabs[(index + step + tabs.length) % tabs.length].dataset.tab);
    });
  }
  for (const link of document.querySelectorAll("[data-tab-link]")) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      openTab(link.dataset.tabLink, false);
      document.querySelector(link.hash)?.focus();
    });
  }
  document.querySelector("[data-heat-window]").addEventListener("change", drawHeat);

  // Clicking a block lists its incidents under the map.
  document.addEventListener("plan:block", (event) => {
    const code = event.detail.code;
    const box = document.querySelector("[data-block-entries]");
    box.hidden = false;
    box.querySelector("[data-block-entries-title]").textContent = say(WORDS.entriesInBlock, { block: code });
    const list = box.querySelector("ol");
    const reports = [...entries.values()].filter((e) => isIncident(e) && incidents.get(e.id)?.block === code);
    list.replaceChildren(...reports.sort(newestFirst).map(render));
    if (!reports.length) list.textContent = WORDS.noEntriesInBlock;
  });

  // Sending a broadcast and posting stewards: the frames that follow update the panels.
  function formPoster(selector, url, errorSelector, body) {
    const form = document.querySelector(selector);
    if (!form) return;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = form.querySelector(errorSelector);
      error.textContent = "";
      try {
        await post(url, body(new FormData(form)));
        form.querySelector('input[type="text"]')?.setAttribute("value", "");
      } catch (err) {
        error.textContent = err.message;
      }
    });
  }
  formPoster("[data-broadcast-form]", config.broadcastSendUrl, "[data-broadcast-error]", (d) => ({
    script: d.get("script"),
    text: d.get("text"),
    zone: d.get("zone"),
  }));
  formPoster("[data-post-form]", config.postUrl, "[data-post-error]", (d) => ({
    steward: d.get("steward"),
    zone: d.get("zone"),
  }));

  // Full time: the log's head signed now (ADR 0008); the police and the away club download it
  // from the checkpoints page and keep their copy.
  const sign = document.querySelector("[data-sign-full-time]");
  if (sign) {
    sign.addEventListener("click", async () => {
      const shown = document.querySelector("[data-signed]");
      try {
        const made = await post(config.checkpointUrl, { full_time: true });
        shown.textContent = say(WORDS.signedAt, { entries: made.statement.entries, head: made.statement.head.slice(0, 12) });
      } catch (err) {
        shown.textContent = err.message;
      }
    });
  }

  // Quick entry: category, block, severity, text; Enter logs it and returns to the category.
  const form = document.querySelector("[data-quick-entry]");
  if (form) {
    const category = form.querySelector("#qe-category");
    const severity = form.querySelector("#qe-severity");
    const setSeverity = () => { severity.value = category.selectedOptions[0]?.dataset.severity || "2"; };
    category.addEventListener("change", setSeverity);
    setSeverity();
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = form.querySelector("[data-entry-error]");
      error.textContent = "";
      const data = new FormData(form);
      try {
        await post(config.appendUrl, {
          category: data.get("category"),
          block: data.get("block").trim(),
          severity: Number(data.get("severity")),
          text: data.get("text"),
          outside: data.get("outside").trim(),
          observed_at: new Date().toISOString(),
          idempotency_key: crypto.randomUUID(),
        });
        form.querySelector("#qe-text").value = "";
        form.querySelector("#qe-block").value = "";
        form.querySelector("#qe-outside").value = "";
        category.focus();
      } catch (err) {
        error.textContent = err.message;
      }
    });
  }
}
