# The platform's image (web and workers, docker-compose.yml). The sandbox image is separate
# (runner/image/). Build context: the repository root.
ARG PYTHON=python:3.11-slim-bookworm
FROM ${PYTHON}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY requirements.txt ./
RUN pip install -r requirements.txt
COPY . .
RUN pip install --no-deps --no-build-isolation -e . \
    && useradd --system --uid 10001 --home-dir /app app \
    && mkdir -p /app/var && chown app /app/var
USER app
EXPOSE 8000
CMD ["python", "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform", "--host", "0.0.0.0", "--port", "8000"]
