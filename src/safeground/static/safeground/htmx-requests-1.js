// Every htmx request carries Django's CSRF token from the page's meta tag, and a read (a panel or
// a fragment fetched again) not answered in 15 s is given up: on a link gone silent it would
// otherwise hold one of the browser's six connections to the server for good, and once all six
// hang nothing else the page asks for leaves the phone (api-1.js, ADR 0023). The next refresh
// asks again. Forms keep no limit: a photo on a crowded cell takes its time.
const READ_WAIT_MS = 15_000;

document.addEventListener("htmx:configRequest", (event) => {
  const meta = document.querySelector('meta[name="csrf-token"]');
  if (meta) event.detail.headers["X-CSRFToken"] = meta.content;
  if (event.detail.verb === "get" && !event.detail.timeout) event.detail.timeout = READ_WAIT_MS;
});
