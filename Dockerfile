# Stratus as a container image (docs/container.md).
#
#   docker build -t stratus .
#   docker run -d --name stratus -p 8080:8080 -p 8443:8443 -v stratus-data:/data stratus
#
# Three stages on the official Node 20 images: `deps` installs the run-time packages (the
# bundle's externals: better-sqlite3, compiled here, pg, node-forge, cli-progress — whatever
# package-lock.json marks as production), `build` makes dist/stratus.mjs with esbuild
# (scripts/build.mjs), and the final stage is the slim image with only those two results.
#
# Behind a TLS-intercepting proxy, give npm the proxy's CA bundle as a build secret (BuildKit,
# the default builder since Docker 23); it is never written into a layer:
#   docker build --secret id=npm_ca,src=/etc/ssl/certs/ca-certificates.crt -t stratus .

# ---- run-time packages (production dependencies only; native modules compiled here, their
#      C sources and object files removed: only build/Release/better_sqlite3.node is loaded) ----
FROM node:20-bookworm AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --omit=dev --no-audit --no-fund --no-update-notifier \
    && cd node_modules/better-sqlite3 \
    && rm -rf deps src build/deps build/Release/obj build/Release/obj.target build/Release/.deps build/Release/test_extension.node

# ---- the bundle (every package from the lock file, install scripts skipped: esbuild only) ----
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=npm_ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund --no-update-notifier
COPY . .
RUN node scripts/build.mjs

# ---- the image ----
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    STRATUS_HOST=0.0.0.0 \
    STRATUS_HTTP_PORT=8080 \
    STRATUS_HTTPS_PORT=8443 \
    STRATUS_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# `stratus <command>` (token, console, reset, seed …) for `docker exec`; the data folder is
# made here so that a new named volume starts owned by the unprivileged `node` user (uid 1000).
RUN printf '#!/bin/sh\nexec node /app/dist/stratus.mjs "$@"\n' > /usr/local/bin/stratus \
    && chmod 755 /usr/local/bin/stratus \
    && mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080 8443
# SIGTERM: stop listening, let in-flight requests finish, close the store, exit 0
# ("shutting down" in the log). Give it the default 10 s stop timeout or more.
STOPSIGNAL SIGTERM
# The plain HTTP port answers /_stratus/health without a key (200 once the store is ready);
# the slim image has no curl, so Node's own fetch asks.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.STRATUS_HTTP_PORT || 8080) + '/_stratus/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
LABEL org.opencontainers.image.title="Stratus" \
      org.opencontainers.image.description="Self-hosted cloud REST APIs for development and testing" \
      org.opencontainers.image.licenses="MIT"
ENTRYPOINT ["node", "/app/dist/stratus.mjs"]
CMD ["serve"]
