# Multi-stage build: compile with the dev toolchain, ship only production dependencies and dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
# PORTCULLIS_CONTAINER: without DATABASE_URL the service refuses to start instead of quietly running the
# development setup (data lost with the container); PORTCULLIS_DEVELOPMENT=true asks for it explicitly.
ENV NODE_ENV=production PORTCULLIS_CONTAINER=true
# wget, as the original's (Alpine) image has it: the self-hosted Supabase stack's compose file checks the
# auth container's health with `wget --spider http://localhost:9999/health`. ca-certificates, as there too:
# the system's bundle, which bin/with-system-cas hands to node, so a CA added to it is trusted as by the original.
RUN apt-get update && apt-get install -y --no-install-recommends wget ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY sql ./sql
# The original's command names on the PATH (bin/auth): `docker exec … auth admin createuser …` keeps working.
RUN ln -s /app/bin/auth /usr/local/bin/auth && ln -s /app/bin/auth /usr/local/bin/gotrue
RUN useradd --system --uid 10001 --home /app portcullis && mkdir -p /app/.data && chown portcullis /app/.data
USER portcullis
# The development setup's embedded database and generated secret (DATA_DIR): kept across container restarts.
VOLUME ["/app/.data"]
# The API (API_PORT / PORT) and the Prometheus exporter (OTEL_EXPORTER_PROMETHEUS_PORT), at their defaults.
EXPOSE 8081 9100
# The port is read by the service's own configuration loader (docs/settings.md#names-sources-and-precedence):
# AUTH_API_PORT, then GOTRUE_API_PORT, then PORT, then 8081. The timeout covers the check's whole process:
# node's start and that loader's schema compile (1.7 to 3.6 s seen on a busy 2-core host) before the
# request's own 2.5 s limit; at 3 s Docker killed checks of an idle, answering service and counted them failed.
HEALTHCHECK --interval=10s --timeout=10s --start-period=20s --retries=3 \
  CMD ["node", "bin/healthcheck.js"]
# Through bin/with-system-cas, which names the certificate authorities to trust before node starts, then
# execs it: node stays the container's first process and gets its signals.
ENTRYPOINT ["/app/bin/with-system-cas", "node", "bin/portcullis.js"]
CMD ["serve"]
