{% load i18n %}{% autoescape off %}{% block about %}{% endblock %}
//
// Shared by the pages that open with no network (templates/offline_sw.js; each page's worker
// extends it). It keeps the page and its files in one cache, named by version and by a digest of
// the files. The page: network first, the cached copy when there is none. Static files: cache
// first. Everything else (the API, the live socket) goes to the network untouched. The view
// gives the cache's name and the prefix of its older ones, the page's URL, the URLs of its files
// (as the page names them, hashed in production) and STATIC_URL, each as JSON.
const CACHE_PREFIX = {{ cache_prefix }};
const CACHE = {{ cache_name }};
const PAGE = {{ page_url }};
const ASSETS = {{ assets }};
const STATIC_URL = {{ static_url }};
const NETWORK_TIMEOUT_MS = 4000;
// A file not fetched in this long is given up: on a link gone silent its request would otherwise
// hold one of the browser's six connections to the server for good, and the page's own requests
// (a report, an acknowledgement) would queue behind it. ADR 0023.
const FILE_WAIT_MS = 15_000;

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // One by one, so a missing optional file does not stop the page from being kept.
      await Promise.all(
        [PAGE, ...ASSETS].map(async (url) => {
          try {
            const response = await fetch(url, {
              credentials: "same-origin",
              cache: "no-cache",
              signal: AbortSignal.timeout(FILE_WAIT_MS),
            });
            if (response.ok && !response.redirected) await cache.put(url, response);
          } catch {
            // offline, or too slow, while installing: the next visit fills it
          }
        }),
      );
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && url.pathname === PAGE) {
    event.respondWith(pageFirstFromNetwork(request));
  } else if (url.pathname.startsWith(STATIC_URL)) {
    event.respondWith(fileFromCache(request));
  }
});

async function pageFirstFromNetwork(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await withTimeout(fetch(request), NETWORK_TIMEOUT_MS);
    if (response.ok && response.type === "basic" && !response.redirected) {
      await cache.put(PAGE, response.clone());
    }
    return response;
  } catch {
    const kept = await cache.match(PAGE);
    if (kept) return kept;
    return new Response(
      "<!doctype html><title>{% translate "Offline" as offline %}{{ offline|escapejs }}</title><p>" +
        "{% block offline_text %}{% translate "No network, and this page was never opened on this device with a network. Open it once with a network so it works offline." as text %}{{ text|escapejs }}{% endblock %}</p>",
      { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } },
    );
  }
}

async function fileFromCache(request) {
  const cache = await caches.open(CACHE);
  const url = new URL(request.url);
  const kept = await cache.match(url.pathname);
  if (kept) return kept;
  const response = await fetch(request, { signal: AbortSignal.timeout(FILE_WAIT_MS) });
  if (response.ok && response.type === "basic") await cache.put(url.pathname, response.clone());
  return response;
}

function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("network timeout")), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
{% block more %}{% endblock %}{% endautoescape %}
