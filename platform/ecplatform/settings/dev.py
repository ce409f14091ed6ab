"""Local development and `make run`: debug on, a fixed insecure key, SQLite unless DATABASE_URL."""

from ecplatform.env import env_bool

from .base import *  # noqa: F403
from .base import SECRET_KEY, VAR_DIR

DEBUG = env_bool("DEBUG", True)
SECRET_KEY = SECRET_KEY or "dev-only-insecure-key-never-use-in-production"
VAR_DIR.mkdir(parents=True, exist_ok=True)
