"""The one base of every API request body's schema."""

from ninja import Schema
from pydantic import ConfigDict


class Body(Schema):
    """A request body: a property the schema does not declare is refused (422
    `invalid_request` naming it), and the schema says so (`additionalProperties: false`), so a
    client, and schemathesis, knows what may be sent (ADR 0021)."""

    model_config = ConfigDict(extra="forbid")
