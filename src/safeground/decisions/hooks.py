"""What apps above the decision log hear of, after it commits: a decision recorded or amended (a
kick-off delay among them) and an M/ETHANE report made or corrected. The partners' CAP feed
tells partner agencies of each; alerts pushes a major incident to the commanders' phones.

Every kind here runs after commit (safeground.hooks): nothing is heard of a rolled-back write,
and a hook's failure is logged, never turned into a failed write.
"""

from typing import Any

from safeground.hooks import Kind, Timing, ignored

# hook(decision): a decision was recorded, or amended (the new Decision; `amends` is the old).
decision_recorded: Kind[[Any], object, None] = Kind(
    "decisions.decision_recorded", Timing.AFTER_COMMIT, ignored
)
# hook(report): an M/ETHANE report was made, or corrected (the new report; `corrects` the old).
methane_reported: Kind[[Any], object, None] = Kind(
    "decisions.methane_reported", Timing.AFTER_COMMIT, ignored
)
