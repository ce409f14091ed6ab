"""Cohorts are teaching's: teaching/migrations/0009_cohorts took Cohort and CohortMembership over,
on their tables, and pointed the counts' keys at them; here they leave courses' state. The database
has nothing to do."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('courses', '0008_question_kind'),
        ('teaching', '0009_cohorts'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name='cohort', name='members'),
                migrations.DeleteModel(name='CohortMembership'),
                migrations.DeleteModel(name='Cohort'),
            ],
            database_operations=[],
        ),
    ]
