from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .models import Device, Membership, Organisation, User


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(User)
class SafegroundUserAdmin(UserAdmin):
    inlines = [MembershipInline]


@admin.register(Organisation)
class OrganisationAdmin(admin.ModelAdmin):
    list_display = ["name", "kind"]


@admin.register(Device)
class DeviceAdmin(admin.ModelAdmin):
    list_display = ["name", "organisation", "profile", "created_at", "revoked_at"]
    readonly_fields = ["key_hash", "created_at"]
