"""What apps above the log hear of, after it commits: a broadcast sent, a task given to someone,
a warning written, a flashpoint's or a gate's (alerts pushes each to stewards' phones), an
incident resolved or closed (supporters texts the reporters whose report it was).

The log never imports those apps: each registers a hook in its AppConfig.ready(). Every kind
here runs after commit (safeground.hooks): nothing is heard of a rolled-back write, and a hook's
failure is logged, never turned into a failed write.
"""

from typing import Any

from safeground.hooks import Kind, Timing, ignored

# hook(broadcast): an urgent message to stewards was sent.
broadcast_sent: Kind[[Any], object, None] = Kind(
    "incidents.broadcast_sent", Timing.AFTER_COMMIT, ignored
)
# hook(assignment): an incident was assigned (the entry names the assignee).
task_given: Kind[[Any], object, None] = Kind("incidents.task_given", Timing.AFTER_COMMIT, ignored)
# hook(warning): a warning entry: a flashpoint's (its zone is on it) or a gate's (its gate).
warning_written: Kind[[Any], object, None] = Kind(
    "incidents.warning_written", Timing.AFTER_COMMIT, ignored
)
# hook(status_entry): an incident was resolved or closed (the entry's `concerns` is the incident's
# report). Heard at each resolution and closing: a hook that acts once checks.
incident_dealt_with: Kind[[Any], object, None] = Kind(
    "incidents.incident_dealt_with", Timing.AFTER_COMMIT, ignored
)
