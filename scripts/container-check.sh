#!/usr/bin/env bash
# The container check (issue 27): builds the image from the Dockerfile with podman, as an operator would, and proves
# what they rely on — embedded start and /readyz, the HEALTHCHECK, a non-root user who can write only /app/data, a
# DATABASE_URL start against PostgreSQL, a restart on the same volume, `podman stop` exiting 0 with the drain line,
# and a clear message for an unwritable data volume. Prints a line per check and ends with
# "container check: N passed, N failed"; exits non-zero when a check failed.
#
#   bash scripts/container-check.sh            (root, or sudo; .ci/run runs it)
#
# Base images: the Dockerfile's own (node:20-bookworm-slim, oven/bun) when they can be pulled; otherwise stand-ins
# made here — a Debian bookworm rootfs from debootstrap (cached in $CONTAINER_CACHE), with this machine's Node 20 and
# npm for the build stage, and with the `bun` binary from node_modules and a `bun` user for the runtime stage. The
# Dockerfile itself is used as it is. The build stage of a stand-in trusts this machine's CA bundle (outbound TLS
# may be intercepted here); the real images never get it.
#
# Settings: CONTAINER_CACHE (default /var/cache/partner-container), CONTAINER_CHECK_PG (PostgreSQL for the
# DATABASE_URL start, default postgres://postgres@127.0.0.1:5432), CONTAINER_CHECK_KEEP=1 keeps the image.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CACHE=${CONTAINER_CACHE:-/var/cache/partner-container}
PG=${CONTAINER_CHECK_PG:-postgres://postgres@127.0.0.1:5432}
IMAGE=localhost/partner-registration:check
NODE_BASE=docker.io/library/node:20-bookworm-slim
BUN_BASE=docker.io/oven/bun:$(sed -nE 's/^FROM oven\/bun:([^ ]+).*/\1/p' Dockerfile)
RUN_ID=pr-check-$$
WORK=$(mktemp -d)
PASSED=0
FAILED=0

log() { printf '[container-check %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
pass() { log "ok: $*"; PASSED=$((PASSED + 1)); }
fail() { log "FAILED: $*"; FAILED=$((FAILED + 1)); }
finish() {
  log "container check: $PASSED passed, $FAILED failed"
  echo "container check: $PASSED passed, $FAILED failed"
  [ "$FAILED" -eq 0 ]
  exit $?
}

# podman as this machine allows it: no CAP_SYS_RESOURCE (so explicit ulimits), cgroups v1/v2 hybrid (runc, not crun).
export CONTAINERS_CONF=$WORK/containers.conf
cat >"$CONTAINERS_CONF" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
EOF
P() { as_root env CONTAINERS_CONF="$CONTAINERS_CONF" podman "$@"; }

cleanup() {
  P rm -f -t 0 "$RUN_ID-embedded" "$RUN_ID-pg" "$RUN_ID-ro" >/dev/null 2>&1
  P volume rm -f "$RUN_ID-data" >/dev/null 2>&1
  [ -n "${PG_DB:-}" ] && psql "$PG/postgres" -qc "DROP DATABASE IF EXISTS $PG_DB WITH (FORCE)" >/dev/null 2>&1
  # The image goes, and with it the untagged images this build left (layers of earlier builds that the new one
  # replaced): without this, every run keeps its own ~0.5 GB. Tagged base images and stand-ins stay for the next run.
  if [ "${CONTAINER_CHECK_KEEP:-0}" != 1 ]; then
    P rmi -f "$IMAGE" >/dev/null 2>&1
    P image prune -f >/dev/null 2>&1
  fi
  as_root rm -rf "$WORK"
}
trap cleanup EXIT

# ------------------------------------------------------------------------------------------------- tools
missing=()
for tool in podman runc debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} (Debian's packages)"
  as_root apt-get update -qq && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq podman runc debootstrap \
    || { fail "installing podman, runc and debootstrap"; finish; }
fi
log "$(P --version)"

# ------------------------------------------------------------------------------------------------- base images
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

rootfs_image() { # the cached Debian bookworm minbase rootfs, imported once as localhost/partner-check/bookworm
  P image exists localhost/partner-check/bookworm:latest && return 0
  if [ ! -s "$CACHE/bookworm-rootfs.tar" ]; then
    log "making a Debian bookworm rootfs with debootstrap (cached in $CACHE)"
    as_root mkdir -p "$CACHE"
    as_root rm -rf "$CACHE/rootfs.partial"
    as_root debootstrap --variant=minbase bookworm "$CACHE/rootfs.partial" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
      || { tail -20 "$WORK/debootstrap.log"; return 1; }
    as_root tar -C "$CACHE/rootfs.partial" -cf "$CACHE/bookworm-rootfs.tar.partial" . && \
      as_root mv "$CACHE/bookworm-rootfs.tar.partial" "$CACHE/bookworm-rootfs.tar" && as_root rm -rf "$CACHE/rootfs.partial"
  fi
  P import "$CACHE/bookworm-rootfs.tar" localhost/partner-check/bookworm:latest >/dev/null
}

node_standin() {
  local dir=$WORK/node-standin
  mkdir -p "$dir"
  cp "$(command -v node)" "$dir/node"
  cp -r "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$dir/npm"
  cp /etc/ssl/certs/ca-certificates.crt "$dir/ca.crt"
  cat >"$dir/Containerfile" <<'EOF'
FROM localhost/partner-check/bookworm:latest
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca.crt /usr/local/share/partner-check/ca.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/partner-check/ca.crt npm_config_cafile=/usr/local/share/partner-check/ca.crt
EOF
  P build --quiet --network host -t "$NODE_BASE" "$dir" >/dev/null
}

bun_standin() {
  local dir=$WORK/bun-standin
  mkdir -p "$dir"
  cp "$(readlink -f node_modules/.bin/bun)" "$dir/bun"
  cat >"$dir/Containerfile" <<'EOF'
FROM localhost/partner-check/bookworm:latest
COPY bun /usr/local/bin/bun
RUN ln -s bun /usr/local/bin/bunx && groupadd -g 1000 bun && useradd -u 1000 -g bun -m -s /bin/sh bun
WORKDIR /home/bun/app
EOF
  P build --quiet --network host -t "$BUN_BASE" "$dir" >/dev/null
}

for base in "$NODE_BASE" "$BUN_BASE"; do
  # Kept from an earlier run (pulled or a stand-in): the cache that keeps CI inside its budget.
  if P image exists "$base"; then log "base image $base: present"; continue; fi
  if timeout 60 env CONTAINERS_CONF="$CONTAINERS_CONF" podman pull -q "$base" >/dev/null 2>&1; then
    log "base image $base pulled"
  else
    log "base image $base cannot be pulled here: making a stand-in"
    rootfs_image || { fail "the Debian rootfs for the stand-ins"; finish; }
    if [ "$base" = "$NODE_BASE" ]; then node_standin; else bun_standin; fi || { fail "stand-in $base"; finish; }
  fi
done

# ------------------------------------------------------------------------------------------------- build
log "building the image (podman build --format docker: the OCI format drops HEALTHCHECK)"
started=$(date +%s)
if P build --format docker --pull=never --network host -t "$IMAGE" . >"$WORK/build.log" 2>&1; then
  BUILD_SECONDS=$(($(date +%s) - started))
  pass "image built in ${BUILD_SECONDS} s, $(P image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}')"
else
  tail -40 "$WORK/build.log"
  fail "image build"
  finish
fi
# The template the build made (a cached build layer says nothing): there, and readable by the image's user.
if P run --rm --network none "$IMAGE" sh -c 'test -r node_modules/.cache/partner-registration/pglite-*/PG_VERSION' 2>>"$WORK/podman.log"; then
  pass "the image holds the embedded database template, readable by its user"
else
  fail "no embedded database template readable by the image's user"
fi

# ------------------------------------------------------------------------------------------------- helpers
# Waits for /readyz on PORT; prints the seconds it took (since $2, a date +%s.%N) or fails after 60 s.
wait_ready() {
  local port=$1 since=$2
  for _ in $(seq 1 1200); do
    if curl -fsS -o "$WORK/readyz" "http://127.0.0.1:$port/readyz" 2>/dev/null; then
      echo "$(date +%s.%N) $since" | awk '{printf "%.2f", $1 - $2}'
      return 0
    fi
    sleep 0.05
  done
  return 1
}
# Peak memory of a container, in MiB, from its memory cgroup (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`).
peak_mib() {
  local id dir file
  id=$(P inspect --format '{{.Id}}' "$1") && [ -n "$id" ] || { echo "?"; return; }
  for dir in $(as_root find /sys/fs/cgroup -maxdepth 4 -type d -name "*$id*" 2>/dev/null); do
    for file in memory.max_usage_in_bytes memory.peak; do
      [ -r "$dir/$file" ] && { awk '{printf "%.0f", $1/1048576}' "$dir/$file"; return; }
    done
  done
  echo "?"
}

# ------------------------------------------------------------------------------------------------- embedded
PORT1=$(free_port)
P volume create "$RUN_ID-data" >/dev/null
since=$(date +%s.%N)
# (podman's healthcheck timers need systemd, absent here: its complaints go to the work log; `healthcheck run` works.)
P run -d --name "$RUN_ID-embedded" --network host -e PORT="$PORT1" -v "$RUN_ID-data:/app/data" "$IMAGE" >/dev/null 2>>"$WORK/podman.log"
if seconds=$(wait_ready "$PORT1" "$since") && grep -q '"database":"embedded"' "$WORK/readyz"; then
  FIRST_START=$seconds
  FIRST_PEAK=$(peak_mib "$RUN_ID-embedded")
  pass "embedded start on a fresh volume: /readyz ready in ${FIRST_START} s, peak memory ${FIRST_PEAK} MiB"
  awk -v s="$FIRST_START" 'BEGIN { exit !(s <= 3) }' && pass "first start within 3 s" || fail "first start took ${FIRST_START} s (target 3 s)"
  [ "$FIRST_PEAK" != "?" ] && [ "$FIRST_PEAK" -le 300 ] && pass "first start's peak memory within 300 MiB" \
    || fail "first start's peak memory ${FIRST_PEAK} MiB (target 300 MiB)"
else
  P logs "$RUN_ID-embedded" 2>&1 | tail -20
  fail "embedded start: /readyz never answered ready"
fi
P logs "$RUN_ID-embedded" >"$WORK/embedded.log" 2>&1
grep -q "embedded database template unavailable" "$WORK/embedded.log" \
  && fail "the embedded template was not usable (the cluster was made from scratch)" || pass "the embedded database came from the image's template"

if P healthcheck run "$RUN_ID-embedded" >/dev/null 2>&1; then pass "HEALTHCHECK healthy"; else fail "HEALTHCHECK"; fi
[ "$(P inspect --format '{{.Config.Healthcheck}}' "$RUN_ID-embedded")" != "<nil>" ] && pass "the image carries its HEALTHCHECK" \
  || fail "the image has no HEALTHCHECK (built without --format docker?)"

uid=$(P exec "$RUN_ID-embedded" id -u)
[ "$uid" != 0 ] && pass "runs as a non-root user (uid $uid)" || fail "runs as root"
if P exec "$RUN_ID-embedded" sh -c 'touch /app/data/.probe && rm /app/data/.probe'; then pass "/app/data writable"; else fail "/app/data not writable"; fi
writable=()
for path in /app /app/dist /app/src /app/node_modules /app/migrations /usr/local/bin; do
  P exec "$RUN_ID-embedded" sh -c "touch $path/.probe" 2>/dev/null && writable+=("$path")
done
[ ${#writable[@]} -eq 0 ] && pass "nothing but /app/data writable (checked /app, dist, src, node_modules, migrations, /usr/local/bin)" \
  || fail "writable besides /app/data: ${writable[*]}"

# The ops CLI inside the container, on the service's own admin token (DATA_DIR/admin-token): an account to read back.
if P exec -e PORT="$PORT1" "$RUN_ID-embedded" bun dist/cli.js accounts create --name "Hotel Contenedor" --email ops@contenedor.example.co \
  >"$WORK/account.json" 2>&1; then pass "cli accounts create inside the container"; else cat "$WORK/account.json"; fail "cli accounts create"; fi
ACCOUNT_ID=$(sed -nE 's/.*"account_id": *"([^"]+)".*/\1/p' "$WORK/account.json" | head -1)
P exec -e PORT="$PORT1" "$RUN_ID-embedded" bun dist/cli.js keys create --account "$ACCOUNT_ID" --env test >"$WORK/key.json" 2>&1
API_KEY=$(sed -nE 's/.*"api_key": *"([^"]+)".*/\1/p' "$WORK/key.json" | head -1)
partner_properties() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $API_KEY" "http://127.0.0.1:$1/api/partners/properties"; }
[ "$(partner_properties "$PORT1")" = 200 ] && pass "a key made with the CLI works on the partner API" || fail "the CLI's key on the partner API"

# Restart on the same volume: the account is still there.
since=$(date +%s.%N)
P restart -t 30 "$RUN_ID-embedded" >/dev/null 2>>"$WORK/podman.log"
if seconds=$(wait_ready "$PORT1" "$since"); then
  RESTART=$seconds
  pass "restart on the same volume: ready in ${RESTART} s"
  [ -n "$API_KEY" ] && [ "$(partner_properties "$PORT1")" = 200 ] && pass "the key made before the restart still works" \
    || fail "the key made before the restart no longer works"
else
  fail "restart: /readyz never answered ready"
fi

# podman stop: SIGTERM, the drain line, exit 0.
P stop -t 30 "$RUN_ID-embedded" >/dev/null 2>>"$WORK/podman.log"
code=$(P inspect --format '{{.State.ExitCode}}' "$RUN_ID-embedded")
[ "$code" = 0 ] && pass "podman stop: exit code 0" || fail "podman stop: exit code $code"
P logs "$RUN_ID-embedded" >"$WORK/embedded.log" 2>&1
grep -q "stopped: drained" "$WORK/embedded.log" && pass "podman stop: the drain line logged" || fail "podman stop: no drain line"

# ------------------------------------------------------------------------------------------------- DATABASE_URL
PG_DB=t_container_$$
if psql "$PG/postgres" -qc "CREATE DATABASE $PG_DB" >/dev/null 2>&1; then
  PORT2=$(free_port)
  since=$(date +%s.%N)
  P run -d --name "$RUN_ID-pg" --network host -e PORT="$PORT2" -e DATABASE_URL="$PG/$PG_DB" \
    -e SECRETS_KEY="$(head -c 32 /dev/urandom | base64)" -e ADMIN_TOKEN="check-$$" "$IMAGE" >/dev/null 2>>"$WORK/podman.log"
  if seconds=$(wait_ready "$PORT2" "$since") && grep -q '"database":"postgres"' "$WORK/readyz"; then
    PG_START=$seconds
    pass "DATABASE_URL start: migrated and ready in ${PG_START} s"
    tables=$(psql "$PG/$PG_DB" -Atc "SELECT count(*) FROM schema_migrations")
    [ "$tables" -gt 0 ] && pass "migrations applied to PostgreSQL ($tables)" || fail "no migrations in PostgreSQL"
  else
    P logs "$RUN_ID-pg" 2>&1 | tail -20
    fail "DATABASE_URL start"
  fi
  P stop -t 30 "$RUN_ID-pg" >/dev/null 2>>"$WORK/podman.log"
  [ "$(P inspect --format '{{.State.ExitCode}}' "$RUN_ID-pg")" = 0 ] && pass "DATABASE_URL instance stopped with exit 0" \
    || fail "DATABASE_URL instance's exit code"
else
  fail "PostgreSQL at $PG is not reachable for the DATABASE_URL start"
fi

# ------------------------------------------------------------------------------------------------- unwritable volume
mkdir -p "$WORK/root-owned"
chmod 755 "$WORK/root-owned"
PORT3=$(free_port)
P run --name "$RUN_ID-ro" --network host -e PORT="$PORT3" -v "$WORK/root-owned:/app/data" "$IMAGE" >"$WORK/ro.log" 2>&1
code=$?
if [ "$code" -ne 0 ] && grep -q "cannot write /app/data/" "$WORK/ro.log" && grep -q "DATA_DIR must be a directory this process" "$WORK/ro.log"; then
  pass "an unwritable data volume: exit $code, saying what to fix"
else
  tail -5 "$WORK/ro.log"
  fail "an unwritable data volume (exit $code) without the clear message"
fi

# ------------------------------------------------------------------------------------------------- compose
# deploy/compose.yaml as an operator starts it: PostgreSQL, Redis, two ROLE=api behind HAProxy, a ROLE=worker and
# Prometheus. Stand-ins for the four images (deploy/standins/) where they cannot be pulled.
PROJECT=""
# podman-compose echoes the commands it runs, secrets included: its output stays in the work directory.
C() {
  ( set -a; . "$WORK/compose.env"; set +a; cd deploy
    if [ "$(id -u)" -eq 0 ]; then podman-compose -p "$PROJECT" "$@"; else sudo -E podman-compose -p "$PROJECT" "$@"; fi
  ) >>"$WORK/compose.log" 2>&1
}
receiver_counts() { # how many deliveries the receiver logged for each external_id given
  P logs "$PROJECT-receiver" >"$WORK/receiver.log" 2>&1
  for id in "$@"; do grep -c "\"external_id\":\"$id\"" "$WORK/receiver.log"; done | tr '\n' ' '
}
compose_check() {
  command -v podman-compose >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq podman-compose \
    || { fail "installing podman-compose"; return; }
  local pair name image
  for pair in postgres=docker.io/library/postgres:15 redis=docker.io/library/redis:7 \
    prometheus=docker.io/prom/prometheus:v2.42.0 haproxy=docker.io/library/haproxy:2.6; do
    name=${pair%%=*}
    image=${pair#*=}
    P image exists "$image" && continue
    if timeout 60 env CONTAINERS_CONF="$CONTAINERS_CONF" podman pull -q "$image" >/dev/null 2>&1; then
      log "compose image $image pulled"
    else
      log "compose image $image cannot be pulled here: making a stand-in (deploy/standins/$name.Containerfile)"
      { rootfs_image && P build -q --network host -f "deploy/standins/$name.Containerfile" -t "$image" deploy/standins >/dev/null; } \
        || { fail "stand-in $image"; return; }
    fi
  done

  PROJECT=prcheck$$
  local lb api1 api2 prom
  lb=$(free_port)
  api1=$(free_port)
  api2=$(free_port)
  prom=$(free_port)
  {
    echo "SECRETS_KEY=$(head -c 32 /dev/urandom | base64)"
    echo "ADMIN_TOKEN=check-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    echo "IMAGE=$IMAGE"
    echo "WEBHOOK_ALLOW_PRIVATE_URLS=true"
    echo "PORT=$lb"
    echo "API1_PORT=$api1"
    echo "API2_PORT=$api2"
    echo "PROMETHEUS_PORT=$prom"
  } >"$WORK/compose.env"
  local since seconds
  since=$(date +%s.%N)
  if ! C up -d --no-build; then tail -20 "$WORK/compose.log"; fail "podman-compose up"; return; fi
  if seconds=$(wait_ready "$lb" "$since") && grep -q '"database":"postgres"' "$WORK/readyz"; then
    pass "podman-compose up: the API ready behind one port in ${seconds} s"
  else
    P ps -a --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}} {{.Status}}'
    fail "podman-compose up: the API never ready behind its port"
    return
  fi
  local up="" want="api1:9464 api2:9464 worker:9464"
  for _ in $(seq 1 60); do
    up=$(curl -s "http://127.0.0.1:$prom/api/v1/targets" | node -e '
      let s = ""
      process.stdin.on("data", (c) => (s += c)).on("end", () => {
        try {
          console.log(JSON.parse(s).data.activeTargets.filter((t) => t.health === "up").map((t) => t.labels.instance).sort().join(" "))
        } catch { console.log("") }
      })')
    [ "$up" = "$want" ] && break
    sleep 1
  done
  [ "$up" = "$want" ] && pass "Prometheus scrapes both API instances and the worker" || fail "Prometheus targets up: '$up'"

  # A receiver on the deployment's network, then an account and its test environment through the CLI.
  P run -d --name "$PROJECT-receiver" --network "${PROJECT}_default" --network-alias receiver "$IMAGE" bun -e '
    Bun.serve({ port: 8080, async fetch(req) {
      const body = await req.json().catch(() => ({}))
      console.log(JSON.stringify({ received: body.type, external_id: body.data?.external_id }))
      return new Response("ok")
    } })' >/dev/null 2>>"$WORK/podman.log"
  local account key property code
  P exec "${PROJECT}_api1_1" bun dist/cli.js accounts create --name "Hotel Compose" --email ops@compose.example.co >"$WORK/account.json" 2>&1
  account=$(sed -nE 's/.*"account_id": *"([^"]+)".*/\1/p' "$WORK/account.json" | head -1)
  P exec "${PROJECT}_api1_1" bun dist/cli.js sandbox create --account "$account" >"$WORK/sandbox.json" 2>&1
  key=$(sed -nE 's/.*"api_key": *"([^"]+)".*/\1/p' "$WORK/sandbox.json" | head -1)
  property=$(sed -nE 's/.*"property_id": *"([^"]+)".*/\1/p' "$WORK/sandbox.json" | head -1)
  if [ -n "$account" ] && [ -n "$key" ] && [ -n "$property" ]; then
    pass "cli accounts create and sandbox create against the deployment"
  else
    cat "$WORK/account.json" "$WORK/sandbox.json"
    fail "the account through the CLI"
    return
  fi
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$lb/api/partners/webhooks" -H "Authorization: Bearer $key" \
    -H 'content-type: application/json' -d '{"url":"http://receiver:8080/hook","events":["reservation.created"]}')
  [ "$code" = 201 ] && pass "a webhook endpoint through the load balancer" || fail "webhook endpoint: HTTP $code"
  local made=() port
  for port in "$api1" "$api2"; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port/api/partners/reservations" \
      -H "Authorization: Bearer $key" -H 'content-type: application/json' \
      -d "{\"external_id\":\"COMPOSE-$port\",\"property_id\":\"$property\",\"check_in\":\"2026-12-20\",\"check_out\":\"2026-12-22\",\"guest_name\":\"Ana Pérez\",\"guests_count\":1}")
    if [ "$code" = 201 ]; then made+=("COMPOSE-$port"); else fail "a reservation through the API instance on $port: HTTP $code"; fi
  done
  [ ${#made[@]} -eq 2 ] && pass "a reservation through each API instance"
  local delivered=""
  for _ in $(seq 1 60); do
    delivered=$(receiver_counts "${made[@]}")
    [ "$delivered" = "1 1 " ] && break
    sleep 0.5
  done
  # Given time to repeat itself, a delivery must not.
  sleep 2
  delivered=$(receiver_counts "${made[@]}")
  [ "$delivered" = "1 1 " ] && pass "each reservation's webhook delivered once, by the worker" \
    || fail "webhooks delivered: '$delivered' (expected once each)"

  # Stopped cleanly: every instance exits 0 with its drain line.
  C stop -t 30
  local clean=() service
  for service in api1 api2 worker; do
    P logs "${PROJECT}_${service}_1" >"$WORK/$service.log" 2>&1
    [ "$(P inspect --format '{{.State.ExitCode}}' "${PROJECT}_${service}_1")" = 0 ] && grep -q "stopped: drained" "$WORK/$service.log" \
      && clean+=("$service")
  done
  [ ${#clean[@]} -eq 3 ] && pass "podman-compose stop: api1, api2 and worker exit 0 with the drain line" \
    || fail "podman-compose stop: clean only ${clean[*]:-none}"
}
compose_cleanup() {
  [ -z "$PROJECT" ] && return
  P rm -f -t 0 "$PROJECT-receiver" >/dev/null 2>&1
  C down -v
  P network rm -f "${PROJECT}_default" >/dev/null 2>&1
}
compose_check
compose_cleanup

# ------------------------------------------------------------------------------------------------- figures
[ -n "${CONTAINER_CHECK_FIGURES:-}" ] && printf 'build_seconds=%s\nfirst_start_seconds=%s\nfirst_peak_mib=%s\nrestart_seconds=%s\npg_start_seconds=%s\nimage=%s\n' \
  "${BUILD_SECONDS:-}" "${FIRST_START:-}" "${FIRST_PEAK:-}" "${RESTART:-}" "${PG_START:-}" \
  "$(P image inspect --format '{{.Size}}' "$IMAGE" 2>/dev/null)" >"$CONTAINER_CHECK_FIGURES"
finish
