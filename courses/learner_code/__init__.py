"""A learner's own code from every exercise of a course, to take home: a Jupyter notebook or a
Python package that runs outside the platform (the downloads of the course completion page)."""

from courses.learner_code.notebook import notebook_build
from courses.learner_code.package import package_build

__all__ = ["notebook_build", "package_build"]
