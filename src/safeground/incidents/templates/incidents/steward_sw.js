{% extends "offline_sw.js" %}
{% block about %}// The steward page's service worker (served by incidents.views.steward_service_worker): the page
// opens with no network, network first for fresh tasks and token when there is one. Reports made
// offline wait in the page's outbox (IndexedDB), not here.{% endblock %}
{% block device %}phone{% endblock %}
{% block more %}{% load static %}
// Push alerts (alerts/): shown with the screen locked, receipts and acknowledgement sent back.
importScripts("{% static 'alerts/push-sw-1.js' %}");
{% endblock %}
