# Production image: Bun runtime, production dependencies installed from the lockfile, non-root user.
# Build: docker build -t partner-registration .   Run: docker run -p 3000:3000 -e DATABASE_URL=… -e SECRETS_KEY=… partner-registration

# 1. Dependencies from package-lock.json (npm ci). Bun itself comes from the runtime image, so dev
#    dependencies (the bun npm package, TypeScript, test tools) stay out of the image.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# 2. Runtime: Bun runs the production bundle (scripts/build.ts), built here from the sources; the pages' files
#    are read from src/ at run time. BUN_JSC_forceRAMSize: the JS heap's growth heuristics of a small machine, as
#    `npm start` sets them (docs/performance.md, "Start and memory").
FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    DATA_DIR=/app/data \
    LOG_FORMAT=json \
    BUN_JSC_forceRAMSize=268435456
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json bunfig.toml ./
COPY migrations ./migrations
COPY src ./src
COPY scripts ./scripts
# The bundle, and the embedded database's migrated template (node_modules is not writable at run time).
# --strict: no template, no image (it would start slowly and large); the template is left readable by `bun`.
RUN bun scripts/build.ts && bun scripts/embedded-template.ts --strict
# The image's non-root "bun" user owns only the data directory (embedded database, admin token, documents).
RUN mkdir -p /app/data && chown -R bun:bun /app/data
USER bun
EXPOSE 3000
# Asks /readyz on the address the service listens on (HOST, or loopback when it listens on every address).
# Podman keeps HEALTHCHECK only in the docker image format: build with `--format docker`.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 CMD ["bun", "scripts/healthcheck.ts"]
CMD ["bun", "dist/main.js"]
