{% extends "offline_sw.js" %}{% load i18n %}
{% block about %}// The steward page's service worker (served by incidents.views.steward_service_worker): the page
// opens with no network, network first for fresh tasks and token when there is one. Reports made
// offline wait in the page's outbox (IndexedDB), not here.{% endblock %}
{% block offline_text %}{% translate "No network, and this page was never opened on this phone with a network. Open it once with a network so it works offline." as text %}{{ text|escapejs }}{% endblock %}
{% block more %}{% load static %}
// Push alerts (alerts/): shown with the screen locked, receipts and acknowledgement sent back.
importScripts("{% static 'alerts/push-sw-1.js' %}");
{% endblock %}
