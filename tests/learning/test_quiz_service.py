"""The quiz rules, through the service and the selector the pages and the API share."""

import threading

import pytest
from django.db import connection
from django.http import Http404

from courses.models import ChapterProgress, QuizAnswer
from courses.selectors import quiz_state_for_learner
from courses.services.quizzes import QuizAnswerInvalidError, quiz_answer
from tests.learning.conftest import questions_of, right, wrong

pytestmark = pytest.mark.django_db


def test_it_moves_on_after_a_right_answer_and_counts_it_right_at_the_first_try(learner, course, part_2):
    q1, q2, *_ = questions_of(course, 2)
    result = quiz_answer(user=learner, question=q1, choice=right(q1))
    assert (result.is_correct, result.attempt, result.recorded) == (True, 1, True)
    state = quiz_state_for_learner(user=learner, chapter=part_2)
    assert state.current == q2 and state.number == 2 and state.total == 5
    assert state.just_right == right(q1) and state.wrong_choice is None
    assert state.score == 1


def test_it_keeps_the_learner_on_a_wrong_answer_with_that_choices_explanation(learner, course, part_2):
    q1 = questions_of(course, 2)[0]
    result = quiz_answer(user=learner, question=q1, choice=wrong(q1))
    assert (result.is_correct, result.attempt) == (False, 1)
    assert result.explanation == wrong(q1).explanation
    state = quiz_state_for_learner(user=learner, chapter=part_2)
    assert state.current == q1 and state.number == 1
    assert state.wrong_choice == wrong(q1)

    again = quiz_answer(user=learner, question=q1, choice=wrong(q1, 2))
    assert again.attempt == 2 and quiz_state_for_learner(user=learner, chapter=part_2).wrong_choice == wrong(q1, 2)
    last = quiz_answer(user=learner, question=q1, choice=right(q1))
    assert (last.is_correct, last.attempt) == (True, 3)
    assert quiz_state_for_learner(user=learner, chapter=part_2).number == 2


def test_it_scores_only_right_answers_at_the_first_try_and_reviews_every_question(learner, course, part_2):
    questions = questions_of(course, 2)
    for number, question in enumerate(questions, start=1):
        if number in (2, 4):  # two questions need a second go
            quiz_answer(user=learner, question=question, choice=wrong(question))
        result = quiz_answer(user=learner, question=question, choice=right(question))
    assert result.quiz_finished and result.score == 3
    progress = ChapterProgress.objects.get(user=learner, chapter=part_2)
    assert progress.quiz_finished_at is not None and progress.quiz_score == 3

    state = quiz_state_for_learner(user=learner, chapter=part_2)
    assert state.finished and state.current is None and state.score == 3
    assert [item.question for item in state.review] == questions
    assert [item.right_choice for item in state.review] == [right(q) for q in questions]
    assert [item.right_at_first_try for item in state.review] == [True, False, True, False, True]
    assert state.review[1].first_choice == wrong(questions[1]) and state.review[1].tries == 2


def test_it_resumes_at_the_same_question_after_the_learner_leaves(learner, course, part_2):
    q1, q2, q3, *_ = questions_of(course, 2)
    quiz_answer(user=learner, question=q1, choice=right(q1))
    quiz_answer(user=learner, question=q2, choice=right(q2))
    quiz_answer(user=learner, question=q3, choice=wrong(q3))
    # A new request, nothing in memory: the state comes from the stored answers alone.
    state = quiz_state_for_learner(user=learner, chapter=part_2)
    assert (state.current, state.number, state.wrong_choice) == (q3, 3, wrong(q3))


def test_it_keeps_each_learners_quiz_apart(make_user, course, part_2):
    first, second = make_user(), make_user()
    q1 = questions_of(course, 2)[0]
    quiz_answer(user=first, question=q1, choice=right(q1))
    assert quiz_state_for_learner(user=second, chapter=part_2).number == 1
    assert quiz_answer(user=second, question=q1, choice=wrong(q1)).attempt == 1


def test_it_refuses_a_choice_of_another_question_and_records_nothing(learner, course):
    q1, q2, *_ = questions_of(course, 2)
    with pytest.raises(QuizAnswerInvalidError):
        quiz_answer(user=learner, question=q1, choice=right(q2))
    other_chapter = questions_of(course, 4)[0]
    with pytest.raises(QuizAnswerInvalidError):
        quiz_answer(user=learner, question=q1, choice=right(other_chapter))
    assert not QuizAnswer.objects.exists()


def test_it_refuses_a_question_out_of_turn(learner, course):
    q2 = questions_of(course, 2)[1]
    with pytest.raises(QuizAnswerInvalidError):
        quiz_answer(user=learner, question=q2, choice=right(q2))
    assert not QuizAnswer.objects.exists()


def test_it_answers_a_question_in_an_unpublished_chapter_as_missing(learner, course):
    hidden = questions_of(course, 3)[0]
    assert not hidden.chapter.published
    with pytest.raises(Http404):
        quiz_answer(user=learner, question=hidden, choice=right(hidden))
    assert not QuizAnswer.objects.exists()


def test_it_lets_an_instructor_take_the_quiz_of_an_unpublished_chapter_they_teach(instructor, course):
    course.instructors.add(instructor)
    hidden = questions_of(course, 3)[0]
    assert quiz_answer(user=instructor, question=hidden, choice=right(hidden)).recorded


def test_it_records_a_repeated_submission_once_and_never_changes_the_score(learner, course, part_2):
    questions = questions_of(course, 2)
    q1 = questions[0]
    # A double click on a wrong choice: one attempt.
    assert quiz_answer(user=learner, question=q1, choice=wrong(q1)).recorded
    replay = quiz_answer(user=learner, question=q1, choice=wrong(q1))
    assert (replay.recorded, replay.attempt, replay.is_correct) == (False, 1, False)
    # A double click on the right one: one attempt, and the question is done.
    assert quiz_answer(user=learner, question=q1, choice=right(q1)).attempt == 2
    replay = quiz_answer(user=learner, question=q1, choice=right(q1))
    assert (replay.recorded, replay.attempt) == (False, 2)
    # A replayed wrong answer to a finished question changes nothing either.
    replay = quiz_answer(user=learner, question=q1, choice=wrong(q1, 2))
    assert (replay.recorded, replay.is_correct) == (False, True)
    assert QuizAnswer.objects.filter(user=learner, question=q1).count() == 2

    for question in questions[1:]:
        quiz_answer(user=learner, question=question, choice=right(question))
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).quiz_score == 4
    # Replaying every answer after the end: the quiz stays finished with the same score.
    for question in questions:
        assert not quiz_answer(user=learner, question=question, choice=wrong(question)).recorded
    assert QuizAnswer.objects.filter(user=learner).count() == 6
    assert ChapterProgress.objects.get(user=learner, chapter=part_2).quiz_score == 4
    assert quiz_state_for_learner(user=learner, chapter=part_2).score == 4


def test_it_takes_two_simultaneous_submissions_of_one_answer_once(transactional_db, make_user, course):
    learner = make_user()
    q1 = questions_of(course, 2)[0]
    choice = wrong(q1)
    barrier = threading.Barrier(2)
    results, errors = [], []

    def submit():
        try:
            barrier.wait()
            results.append(quiz_answer(user=learner, question=q1, choice=choice))
        except Exception as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(r.recorded for r in results) == [False, True]
    assert list(QuizAnswer.objects.filter(user=learner).values_list("attempt", flat=True)) == [1]


def test_it_costs_three_queries_to_read_a_learners_quiz_whatever_they_answered(
    learner, course, part_2, django_assert_num_queries
):
    with django_assert_num_queries(3):
        quiz_state_for_learner(user=learner, chapter=part_2)
    for question in questions_of(course, 2):
        quiz_answer(user=learner, question=question, choice=wrong(question))
        quiz_answer(user=learner, question=question, choice=right(question))
    with django_assert_num_queries(3):
        state = quiz_state_for_learner(user=learner, chapter=part_2)
    assert state.finished and len(state.review) == 5
