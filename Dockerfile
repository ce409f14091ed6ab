# The platform's image (web and workers, docker-compose.yml). The sandbox image is separate
# (runner/image/). Build context: the repository root.
ARG PYTHON=python:3.11-slim-bookworm
FROM ${PYTHON}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=ecplatform.settings.production
WORKDIR /app
COPY requirements.txt ./
RUN pip install -r requirements.txt
COPY . .
RUN pip install --no-deps --no-build-isolation -e . \
    && useradd --system --uid 10001 --home-dir /app app \
    && mkdir -p /app/var && chown app /app/var
USER app
EXPOSE 8000
# Production settings (above); proxy headers are honoured only from the addresses in
# FORWARDED_ALLOW_IPS (uvicorn reads it; unset: 127.0.0.1) and TRUSTED_PROXIES (Django).
CMD ["python", "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform", "--host", "0.0.0.0", "--port", "8000"]
