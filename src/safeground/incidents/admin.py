from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Category, LogEntry


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["name", "code", "offence", "default_severity", "is_active"]


@admin.register(LogEntry)
class LogEntryAdmin(admin.ModelAdmin):
    """Read-only: entries are corrected by new entries, never edited."""

    list_display = ["fixture", "seq", "kind", "category", "severity", "author_name", "logged_at"]
    list_filter = ["kind", "category"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
