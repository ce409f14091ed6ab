import datetime

from django.db import migrations, models


def fill(apps, schema_editor):
    """Count what is already stored, course by course, as `manage.py rollups_rebuild` does: the
    starters per enrolment day are new, and each standing takes its enrolment's time. (The last
    migration that fills; the earlier ones' fills do nothing, as the live rebuild they would call
    writes the columns added here.)"""
    from courses.models import Course
    from teaching.services.course_counts import course_counts_rebuild
    from teaching.services.standings import standings_rebuild

    for course in Course.objects.filter(enrolments__isnull=False).distinct():
        course_counts_rebuild(course=course)
        standings_rebuild(course=course)


class Migration(migrations.Migration):
    dependencies = [
        ("teaching", "0005_choice_day_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="chapterdaycount",
            name="enrolled_starters",
            field=models.PositiveIntegerField(default=0, help_text="Starters who enrolled that day."),
        ),
        # Every standing is rewritten by the fill, which sets the enrolment's time.
        migrations.AddField(
            model_name="learnerstanding",
            name="enrolled_at",
            field=models.DateTimeField(default=datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)),
            preserve_default=False,
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
