"""Cohorts are teaching's: Cohort and CohortMembership move here from courses, with their rows.

Only the state moves: teaching takes the two models over on the tables courses made for them
(courses_cohort and courses_cohortmembership, which they keep: teaching/cohort_models.py says why),
and the dashboards' counts' cohort keys point at teaching.Cohort; the database's foreign keys
already point at those tables. courses/migrations/0009_cohorts_to_teaching then drops the models
from courses' state.

The content types move with the models, so the admin's permissions on cohorts and its history of
them stay attached (a new database has none yet: they are made after migrating).
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ('cohort', 'cohortmembership')


def _content_types_move(apps, schema_editor, *, source, target):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    content_types = ContentType.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        if not content_types.filter(app_label=target, model=model).exists():
            content_types.filter(app_label=source, model=model).update(app_label=target)


def content_types_to_teaching(apps, schema_editor):
    _content_types_move(apps, schema_editor, source='courses', target='teaching')


def content_types_to_courses(apps, schema_editor):
    _content_types_move(apps, schema_editor, source='teaching', target='courses')


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('courses', '0008_question_kind'),
        ('teaching', '0008_answer_progress_to_count'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Cohort',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('invite_code', models.CharField(help_text='Learners join at /join/<code>/.', max_length=32, unique=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('course', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cohorts', to='courses.course')),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'courses_cohort',
                        'ordering': ['course', 'name'],
                        'constraints': [
                            models.UniqueConstraint(fields=('course', 'name'), name='cohort_unique_name', violation_error_message='The course already has a cohort with this name.'),
                            models.CheckConstraint(condition=models.Q(('invite_code', ''), _negated=True), name='cohort_invite_code_set'),
                        ],
                    },
                ),
                migrations.CreateModel(
                    name='CohortMembership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('joined_at', models.DateTimeField(auto_now_add=True)),
                        ('cohort', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='teaching.cohort')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cohort_memberships', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'courses_cohortmembership',
                        'ordering': ['cohort', 'joined_at'],
                        'indexes': [models.Index(fields=['user', 'cohort'], name='cohort_membership_user')],
                        'constraints': [models.UniqueConstraint(fields=('cohort', 'user'), name='cohort_membership_unique')],
                    },
                ),
                migrations.AddField(
                    model_name='cohort',
                    name='members',
                    field=models.ManyToManyField(blank=True, related_name='cohorts', through='teaching.CohortMembership', to=settings.AUTH_USER_MODEL),
                ),
                migrations.AlterField(
                    model_name='chaptercount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='chapterdaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='choicecount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='choicedaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisecount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisedaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exerciseerrorcount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exerciseerrordaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisepasscount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisepassdaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisetimecount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='exercisetimedaycount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
                migrations.AlterField(
                    model_name='questioncount',
                    name='cohort',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='teaching.cohort'),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_teaching, content_types_to_courses),
    ]
