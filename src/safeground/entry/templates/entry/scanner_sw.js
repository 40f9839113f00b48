{% extends "offline_sw.js" %}
{% block about %}// The scanner page's service worker (served by entry.views.scanner_service_worker): the page
// opens at a turnstile with no network. Offline, it decides from the signed bundle it keeps in
// IndexedDB and queues the scans there, not here.{% endblock %}
