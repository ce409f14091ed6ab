# The platform's image: web, migrate, beat and workers (docker-compose.yml). The sandbox image is
# separate (runner/image/Dockerfile). Build context: the repository root (.dockerignore keeps out
# virtualenvs, node_modules, var/, .env and wheel folders).
#
#   docker build -t easycompilers-app .                 # wheels from the package index
#   scripts/build-images.sh                             # offline: wheels and bundle made beforehand
ARG PYTHON=python:3.11-slim-bookworm
ARG NODE=node:22-bookworm-slim

# The browser bundle (editor, Run button), from the committed lock file. BUNDLE=prebuilt takes
# frontend/static/dist from the context instead (built beforehand with `npm ci && npm run build`).
FROM ${NODE} AS bundle
ARG BUNDLE=build
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json frontend/build.mjs ./
COPY frontend/src src
COPY frontend/static static
RUN if [ "$BUNDLE" = prebuilt ]; then test -s static/dist/learn.js; \
    else npm ci --no-audit --no-fund --loglevel=error && npm run --silent build; fi

FROM ${PYTHON}
# WHEELS=1: install only from wheels/app/ in the context (no index); else from the index, with
# torch's CPU build from PyTorch's own index (the platform never runs learners' code itself).
ARG WHEELS=
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH \
    VAR_DIR=/app/var \
    DJANGO_SETTINGS_MODULE=ecplatform.settings.production
WORKDIR /app
# `wheels/ap[p]`: a pattern, so a context without the folder (a clean clone) still builds.
COPY requirements.txt wheels/ap[p] /build/
RUN python3 -m venv /opt/venv \
    && if [ -n "$WHEELS" ]; then pip install --no-index --find-links /build -r /build/requirements.txt; \
       else pip install --extra-index-url "$TORCH_INDEX_URL" -r /build/requirements.txt; fi \
    && rm -rf /build
COPY . .
COPY --from=bundle /frontend/static/dist frontend/static/dist
# The repository root and platform/ on the import path (what `pip install -e .` does in a checkout);
# static files collected at build time (any key passes the build; production refuses to start without
# the real one).
RUN printf '/app\n/app/platform\n' > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/easycompilers.pth" \
    && SECRET_KEY=collectstatic-only-collectstatic-only-collectstatic-only-0123456789 \
       python3 manage.py collectstatic --noinput --verbosity 0 \
    && useradd --system --uid 10001 --home-dir /app app \
    && mkdir -p /app/var && chown app /app/var
USER app
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-m", "ecplatform.health", "--web", "http://127.0.0.1:8000/readyz"]
CMD ["python3", "-m", "uvicorn", "ecplatform.asgi:application", "--app-dir", "platform", "--host", "0.0.0.0", "--port", "8000"]
