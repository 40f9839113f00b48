// Push alerts in the steward page's service worker (imported by incidents' steward_sw.js): a
// push from the server (alerts/push.py) is shown as a notification even with the screen locked,
// and its arrival is reported back at once ("delivered"). Its Acknowledge button acknowledges
// the broadcast without unlocking; a tap on the notification opens (or brings back) the
// steward page, which shows the broadcast over everything with its own Acknowledge.
// The push carries a token for its one recipient: the reports need no session (a locked
// phone's may have ended) and no CSRF token (a worker cannot read the page's).

const ALERT_RECEIPT_TRIES = 3;
const ALERT_RECEIPT_WAIT_MS = 15_000; // unanswered (a link gone silent): tried again

async function alertReceipt(data, state) {
  for (let attempt = 1; attempt <= ALERT_RECEIPT_TRIES; attempt += 1) {
    try {
      const response = await fetch(data.receipt, {
        method: "POST",
        credentials: "omit",
        headers: { "Content-Type": "application/json", "X-Alert-Token": data.token },
        body: JSON.stringify({ state }),
        signal: AbortSignal.timeout(ALERT_RECEIPT_WAIT_MS),
      });
      if (response.ok) return true;
      if (response.status < 500 && response.status !== 429) return false; // refused: final
    } catch {
      // no network this moment: try again shortly, a bounded number of times
    }
    await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
  }
  return false;
}

function alertShow(data) {
  return self.registration.showNotification(data.title, {
    body: data.body,
    tag: data.tag,
    renotify: true,
    requireInteraction: Boolean(data.urgent),
    vibrate: [300, 100, 300, 100, 300],
    data,
    actions: data.acknowledge ? [{ action: "acknowledge", title: data.acknowledge_label }] : [],
  });
}

self.addEventListener("push", (event) => {
  let data;
  try {
    data = event.data.json();
  } catch {
    return; // not one of ours
  }
  event.waitUntil(Promise.all([alertShow(data), alertReceipt(data, "delivered")]));
});

// The window showing the steward page, if one is open (the tap brings it back, not a second).
async function alertWindow(url) {
  const wanted = new URL(url, self.location.origin).pathname;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  return windows.find((client) => new URL(client.url).pathname === wanted) || null;
}

async function alertTapped(notification, action) {
  const data = notification.data || {};
  notification.close();
  if (action === "acknowledge") return alertReceipt(data, "acknowledged");
  const url = new URL(data.url, self.location.origin).href;
  const open = await alertWindow(url);
  if (open) return open.focus();
  return self.clients.openWindow(url);
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(alertTapped(event.notification, event.action));
});
