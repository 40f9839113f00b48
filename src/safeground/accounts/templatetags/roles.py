"""`{{ value|role_label }}`: a stored role shown as its label (accounts.permissions.role_label)."""

from django import template

from safeground.accounts.permissions import role_label as label

register = template.Library()


@register.filter
def role_label(role: str) -> str:
    return label(role)
