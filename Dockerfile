# syntax=docker/dockerfile:1
# audit-ledger as a container: `docker build -t audit-ledger .`, or `docker compose up` with
# compose.yaml (the service, PostgreSQL and Redis). Two stages: the build has the compilers for
# better-sqlite3's native module and the dev dependencies for TypeScript; the image that runs
# keeps only production dependencies and the built packages, and runs as the unprivileged `node`
# user. Configuration is by environment variables (.env.example lists every one).

FROM node:24-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# Manifests first, so the dependency layer is rebuilt only when they change.
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY packages/verify/package.json packages/verify/
COPY packages/verify/bin packages/verify/bin
COPY packages/sdk/package.json packages/sdk/
COPY packages/server/package.json packages/server/
COPY packages/server/bin packages/server/bin
COPY packages/console/package.json packages/console/
RUN npm ci --no-audit --no-fund
COPY packages packages
# The server and what it depends on (core, verify), and the console it serves; no tests.
RUN npx tsc --build packages/server \
 && npm run build -w @audit-ledger/console \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    LEDGER_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages/core/package.json packages/core/
COPY --from=build /app/packages/core/dist packages/core/dist
COPY --from=build /app/packages/verify/package.json packages/verify/
COPY --from=build /app/packages/verify/bin packages/verify/bin
COPY --from=build /app/packages/verify/dist packages/verify/dist
COPY --from=build /app/packages/server/package.json packages/server/
COPY --from=build /app/packages/server/bin packages/server/bin
COPY --from=build /app/packages/server/dist/src packages/server/dist/src
COPY --from=build /app/packages/console/dist packages/console/dist
# The SQLite file, the signing key and the secrets key live here unless configured elsewhere.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/api/v1/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "packages/server/bin/audit-ledger.js", "serve"]
