from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active", "date_joined")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = (*BaseUserAdmin.fieldsets, ("Platform", {"fields": ("role", "theme")}))
    add_fieldsets = (*BaseUserAdmin.add_fieldsets, ("Platform", {"fields": ("role",)}))
