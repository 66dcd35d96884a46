# preflight container: tests run in the build stage, the runtime image runs
# as a non-root user.  The tests read the Axolotl corpus in ../shared, so
# pass it as a named build context (BuildKit):
#   docker build --build-context shared=../shared -t preflight .
# (No Docker engine runs on the project's development machines; this file
# is kept simple and reviewed by hand.)

FROM debian:bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config ca-certificates \
      libyaml-dev libjansson-dev libmicrohttpd-dev libsqlite3-dev \
      libgnutls28-dev libcmocka-dev python3 python3-yaml python3-jsonschema \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src/main
COPY --from=shared . /src/shared
COPY . /src/main
RUN make clean && make lint && make test && make

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libyaml-0-2 libjansson4 libmicrohttpd12 libsqlite3-0 libgnutls30 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /var/lib/preflight \
      --create-home preflight
COPY --from=build /src/main/build/preflight /usr/local/bin/preflight
USER preflight
WORKDIR /var/lib/preflight
ENTRYPOINT ["/usr/local/bin/preflight"]
CMD ["version"]
