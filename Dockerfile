# syntax=docker/dockerfile:1
# Multi-stage: build with dev dependencies, run with production dependencies only, as a non-root user.

# Node.js 24 LTS, the exact release CI tests on (.ci/run).
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the sources are not copied yet, so `prepare` (the build) runs below.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
# The web console (console/, built by `npm run build` into dist/console, shipped with dist).
COPY console ./console
# The public leaderboard site (site/, built into dist/site, served at SITE_PATH when SITE_ENABLED=true).
COPY site ./site
# The commit for rhythmc_build_info (no .git in the build context): --build-arg SOURCE_COMMIT=$(git rev-parse HEAD)
ARG SOURCE_COMMIT=unknown
RUN SOURCE_COMMIT="$SOURCE_COMMIT" npm run build

FROM node:24.21.0-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

FROM node:24.21.0-bookworm-slim
# jemalloc instead of glibc's malloc, returning freed pages within a second: under a network's full
# traffic the service's native memory outside V8 and the rank index (what node, pg and ws malloc)
# was about half glibc's (37–45 MiB instead of 72–84 with the memory-bound V8 flags), at no CPU
# cost seen (docs/decisions.md "jemalloc in the image"). The link gives one path on amd64 and arm64.
# tini as PID 1 (docs/decisions.md "Signals at any time"): the kernel gives PID 1 no default
# signal action, so node there would ignore a SIGTERM that comes before its own handlers (its
# modules load for a second or more) and `docker stop` would wait out its grace period; tini
# forwards SIGTERM/SIGINT to node, reaps zombies and exits with node's status.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 tini \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    RESOURCE_DIR=/resources \
    LD_PRELOAD=/usr/local/lib/libjemalloc.so.2 \
    MALLOC_CONF=background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,narenas:2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data /resources && chown node:node /data /resources
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["tini", "--"]
# Pending migrations run at start-up (under an advisory lock on PostgreSQL), then the service listens.
# SIGTERM at any moment stops it cleanly with status 0 (during start-up: once the step in progress ends).
CMD ["node", "dist/src/main.js"]
