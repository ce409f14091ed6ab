from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import User
from accounts.services import login_lockout_lift


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active", "date_joined")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = (*BaseUserAdmin.fieldsets, ("Platform", {"fields": ("role", "theme")}))
    add_fieldsets = (*BaseUserAdmin.add_fieldsets, ("Platform", {"fields": ("role",)}))
    # The role sets these (User.save); editable checkboxes would only be overwritten on save.
    readonly_fields = ("is_staff", "is_superuser")
    actions = ["lift_login_lockout"]

    @admin.action(description="Lift login lockout of the selected users")
    def lift_login_lockout(self, request, queryset):
        lifted = [user.username for user in queryset if login_lockout_lift(username=user.username)]
        if lifted:
            self.message_user(request, f"Login lockout lifted for {', '.join(lifted)}.", messages.SUCCESS)
        else:
            self.message_user(request, "None of the selected users had failed logins on record.", messages.INFO)
