from django.contrib import admin

from runner.models import Run


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    """Runs are records: admins look, filter and search; only workers write them."""

    list_display = [
        "id",
        "user",
        "exercise",
        "status",
        "reason",
        "duration_ms",
        "backend",
        "warm",
        "worker",
        "created_at",
    ]
    list_filter = ["status", "queue", "backend", "warm", "exercise__chapter__course"]
    search_fields = ["id", "user__username", "exercise__slug", "reason"]
    list_select_related = ["user", "exercise"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Run._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
