# preflight container: the daemon as a non-root user, its database on a
# volume, a health check that is the binary probing itself.
#
#   docker build --build-arg GIT_COMMIT=$(git rev-parse --short=12 HEAD) \
#       -t preflight .
#   docker volume create preflight-data
#   docker run --rm -v preflight-data:/var/lib/preflight preflight \
#       token create --team ml          # prints the token once
#   docker run -d --name preflight -p 8080:8080 \
#       -v preflight-data:/var/lib/preflight preflight
#   curl -H "Authorization: Bearer $TOKEN" http://localhost:8080/v1/checks
#
# The image listens on 0.0.0.0:8080 with --auth token (PREFLIGHT_LISTEN,
# PREFLIGHT_AUTH below; bearer tokens are required off loopback).  The
# build stage compiles and lints; the test suite runs in CI (make test),
# not here.  (No Docker engine runs on the project's development
# machines; tests/packaging.py checks this file and runs its HEALTHCHECK
# command against a live server.)

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config ca-certificates \
      libyaml-dev libjansson-dev libmicrohttpd-dev libsqlite3-dev \
      libgnutls28-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . /src
ARG GIT_COMMIT=unknown
RUN make clean \
 && make lint \
 && make GIT_COMMIT="$GIT_COMMIT" \
 && make install GIT_COMMIT="$GIT_COMMIT" PREFIX=/usr/local DESTDIR=/out

FROM debian:bookworm-slim
ARG GIT_COMMIT=unknown
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="preflight" \
      org.opencontainers.image.description="Checks Axolotl fine-tuning configs before they are launched: findings with line numbers, fix hints and the per-GPU memory estimate, over HTTP with history in SQLite." \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$GIT_COMMIT" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/preflight-dev/preflight" \
      org.opencontainers.image.documentation="https://github.com/preflight-dev/preflight/blob/main/README.md"
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libyaml-0-2 libjansson4 libmicrohttpd12 libsqlite3-0 libgnutls30 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/preflight \
      --create-home preflight
COPY --from=build /out/usr/local/ /usr/local/
ENV PREFLIGHT_LISTEN=0.0.0.0:8080 \
    PREFLIGHT_AUTH=token \
    PREFLIGHT_DB=/var/lib/preflight/preflight.db
USER preflight
WORKDIR /var/lib/preflight
VOLUME ["/var/lib/preflight"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/preflight", "health"]
ENTRYPOINT ["/usr/local/bin/preflight"]
CMD ["serve"]
