// Push alerts on a steward's phone (the steward page): the phone subscribes when the steward
// checks in at their post, or on the alerts panel's switch (alerts/phone_panel.html, whose
// data attributes give the server's key, the URLs and the words to show); and the page tells
// the server when it shows a broadcast ("seen"). The service worker steward-1.js registers
// takes the pushes (alerts/push-sw-1.js).
import { post } from "../safeground/api-1.js";

{
  const config = JSON.parse(document.getElementById("steward-config").textContent);
  const panel = () => document.querySelector("[data-alerts-phone]");

  function say(word) {
    const here = panel();
    if (here) here.querySelector("[data-alerts-state]").textContent = here.dataset[word];
    if (here) here.dataset.alertsState = word;
  }

  function keyBytes(base64url) {
    const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(text, (c) => c.charCodeAt(0));
  }

  const supported = () => "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

  async function subscription(here, create) {
    const registration = await navigator.serviceWorker.ready;
    let found = await registration.pushManager.getSubscription();
    if (found || !create) return found;
    const options = { userVisibleOnly: true, applicationServerKey: keyBytes(here.dataset.publicKey) };
    try {
      found = await registration.pushManager.subscribe(options);
    } catch (error) {
      // Subscribed under another server key (the key was changed): start again, once.
      const old = await registration.pushManager.getSubscription();
      if (!old) throw error;
      await old.unsubscribe();
      found = await registration.pushManager.subscribe(options);
    }
    return found;
  }

  async function tell(here, found) {
    const { endpoint, keys } = found.toJSON();
    await post(here.dataset.subscribeUrl, { endpoint, keys, device: navigator.userAgent.slice(0, 200) });
    say("textOn");
  }

  async function turnOn() {
    const here = panel();
    if (!here) return;
    if (!supported()) return say("textUnsupported");
    // Asked within the tap (check-in or the switch): browsers ask only on a person's gesture.
    if ((await Notification.requestPermission()) !== "granted") return say("textDenied");
    try {
      await tell(here, await subscription(here, true));
    } catch {
      say("textFailed");
    }
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-alerts-subscribe], [data-check-in]")) turnOn();
  });

  // When the panel arrives: say whether this phone takes alerts, and refresh the server's copy
  // of its subscription (a push service may have renewed it).
  document.body.addEventListener("htmx:afterSettle", async () => {
    const here = panel();
    if (!here || here.dataset.alertsChecked) return;
    here.dataset.alertsChecked = "true";
    if (!supported()) return say("textUnsupported");
    if (Notification.permission === "denied") return say("textDenied");
    try {
      const found = Notification.permission === "granted" ? await subscription(here, false) : null;
      if (found) await tell(here, found);
      else say("textOff");
    } catch {
      say("textOff");
    }
  });

  // "Seen": the page's broadcast dialog (steward-1.js) opened on a broadcast.
  const dialog = document.querySelector("[data-broadcast]");
  const reported = new Set();
  function seen() {
    const id = dialog.dataset.broadcastId;
    if (!dialog.open || !id || reported.has(id)) return;
    reported.add(id);
    post(`${config.apiBase}/broadcasts/${id}/seen`, {}).catch(() => reported.delete(id));
  }
  if (dialog) {
    new MutationObserver(seen).observe(dialog, { attributes: true, attributeFilter: ["open", "data-broadcast-id"] });
  }
}
