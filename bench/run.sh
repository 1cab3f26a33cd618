#!/usr/bin/env bash
# Benchmark of the service against a minimal Bun.serve + pg baseline (bench/baseline.ts) and two peers written the
# way a TypeScript team would by default (bench/peers/: `hono`, Hono 4 + zod + pg on Bun; `fastify`, Fastify 5 with
# response schemas + pg on Node, bundled for Node into the work directory first), all running the same SQL, for
# three cases: `properties` (GET /api/partners/properties), `get` (GET /api/partners/registrations/{external_id})
# and `create` (POST /api/partners/reservations, a fresh external_id per request via bench/create.lua).
# Invoked by `npm run bench`; see docs/performance.md.
#
# Everything stays on this machine: PostgreSQL on 127.0.0.1, every server bound to 127.0.0.1, wrk against
# 127.0.0.1 only. Bounded: ROUNDS × servers × (quiet wait ≤ BENCH_QUIET_WAIT + WARMUP + DURATION) plus ~20 s
# of setup. The database BENCH_DB is dropped and recreated on every run and dropped again on exit, also on
# failure; every server started here is stopped on exit.
#
# Knobs (environment):
#   BENCH_SERVERS (baseline,hono,fastify,service: the measured servers, comma-separated, measured in that order in
#   odd rounds and reversed in even ones; the service is started anyway: it migrates and seeds the database and
#   is the reference of the same-answer and same-SQL check, which covers every selected server),
#   BENCH_CASES (properties,get,create: any of them, comma-separated; they always run in that order, because
#   every `create` run empties the reservation tables),
#   BENCH_ROUNDS (3), BENCH_DURATION (10s), BENCH_WARMUP (3s), BENCH_CONNECTIONS (50), BENCH_THREADS (2),
#   BENCH_POOL (10), BENCH_DB (bench_partner), BENCH_PGHOST / BENCH_PGPORT / BENCH_PGUSER (127.0.0.1 / 5432 /
#   postgres), BENCH_QUIET_WAIT (15: seconds to wait, per run, for other processes to leave the CPUs),
#   BENCH_PG_LOG (PostgreSQL's log file for the same-SQL check; "none" skips the check),
#   BENCH_COMPARE_REF (a git ref, e.g. f27a162, the @effect/sql house path: also measures the service as of that commit, from a `git archive`
#   copy sharing node_modules; the ratio and the verdict stay those of the working tree),
#   BENCH_ACCESS_LOG=1 also measures the working tree with LOG_LEVEL=Info ("svc+log": the access log's one line per
#   request written to its log file, as in production) beside the usual LOG_LEVEL=Warning service,
#   BENCH_OTLP=1 also measures the working tree with traces on ("svc+otlp": OTEL_EXPORTER_OTLP_ENDPOINT set to a
#   tiny local sink, bench/otlp-sink.ts, so every request makes and exports its spans) beside the usual service
#   (traces unset); its SQL is not compared for `create`, where it also stores each job's trace context,
#   BENCH_COMPARE_ENV="NAME=value …" also measures the working tree with these variables added to its environment
#   ("svc+env": a setting's A/B in one run, e.g. BENCH_COMPARE_ENV="BUN_JSC_largeHeapGrowthFactor=2"),
#   BENCH_BUN_FLAGS: flags for the services' bun (e.g. `--cpu-prof-md --cpu-prof-dir=DIR`: a profile per start),
#   BENCH_BASELINE_BUN_FLAGS: the same for the baseline's and the Hono peer's bun (their profiles beside the service's),
#   BENCH_NODE (node: the Node binary of the Fastify peer),
#   BENCH_ENTRY (dist: the production bundle `npm start` runs, built first by scripts/build.ts; src: `bun src/main.ts`),
#   BENCH_RATE (200) and BENCH_RATE_DURATION (10: seconds): the fixed-rate latency run of each case (bench/rate.ts),
#   BENCH_STARTS (3: starts timed per kind: fresh embedded DATA_DIR, embedded restart, DATABASE_URL),
#   BENCH_JSC_RAM (268435456: BUN_JSC_forceRAMSize of the services, as `npm start` sets it; "" for Bun's default),
#   BENCH_KEEP=1 keeps the work directory (raw wrk outputs, server logs, SQL logs).
#
# Printed per case and server: req/s, p99 at BENCH_RATE req/s, and CPU µs per request of the server process (all
# its threads; the node process for the Fastify peer) and of PostgreSQL (every process named postgres) over the
# wrk window, divided by the requests wrk reports.
#
# Targets (issue 28), one verdict line each at the end (met / NOT met, with the figures): the service's req/s
# ratio to the baseline (median of the per-round ratios) >= 0.8 for properties and get, and its median req/s
# ahead of the Fastify peer's there; >= 0.65 for create; p99 at BENCH_RATE req/s <= 20 ms per case; service peak
# RSS (ROLE=api) over the whole bench load <= 200 MB; ready (/readyz 200) <= 1 s after a restart of the embedded
# service. The other start timings (fresh embedded DATA_DIR, DATABASE_URL, idle RSS) are printed beside them.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUN="$ROOT/node_modules/.bin/bun"

ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-10s}
WARMUP=${BENCH_WARMUP:-3s}
CONNECTIONS=${BENCH_CONNECTIONS:-50}
THREADS=${BENCH_THREADS:-2}
POOL=${BENCH_POOL:-10}
DB=${BENCH_DB:-bench_partner}
PGHOST_=${BENCH_PGHOST:-127.0.0.1}
PGPORT_=${BENCH_PGPORT:-5432}
PGUSER_=${BENCH_PGUSER:-postgres}
QUIET_WAIT=${BENCH_QUIET_WAIT:-15}
COMPARE_REF=${BENCH_COMPARE_REF:-}
ACCESS_LOG=${BENCH_ACCESS_LOG:-}
OTLP=${BENCH_OTLP:-}
COMPARE_ENV=${BENCH_COMPARE_ENV:-}
CASES_SEL=${BENCH_CASES:-properties,get,create}
SERVERS_SEL=${BENCH_SERVERS:-baseline,hono,fastify,service}
NODE=${BENCH_NODE:-node}
ENTRY=${BENCH_ENTRY:-dist}
RATE=${BENCH_RATE:-200}
RATE_DURATION=${BENCH_RATE_DURATION:-10}
STARTS=${BENCH_STARTS:-3}
JSC_RAM=${BENCH_JSC_RAM-268435456}
declare -A TARGET_RATIO=([properties]=0.8 [get]=0.8 [create]=0.65)
declare -A TARGET_AHEAD_OF=([properties]=fastify [get]=fastify)  # the service's median req/s above this peer's
TARGET_RATE_P99_MS=20
TARGET_RSS_MB=200
TARGET_RESTART_MS=1000

[[ "$DB" =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "BENCH_DB must be a plain lower-case identifier" >&2; exit 2; }
case "$PGHOST_" in 127.0.0.1|localhost|::1) ;; *) echo "BENCH_PGHOST must be local" >&2; exit 2 ;; esac
CASES=()
for c in properties get create; do [[ ",$CASES_SEL," == *",$c,"* ]] && CASES+=("$c"); done
for c in ${CASES_SEL//,/ }; do
  [[ " ${CASES[*]} " == *" $c "* ]] || { echo "BENCH_CASES: unknown case $c (properties, get, create)" >&2; exit 2; }
done
(( ${#CASES[@]} > 0 )) || { echo "BENCH_CASES selects no case" >&2; exit 2; }
SELECTED=()
for name in ${SERVERS_SEL//,/ }; do
  case "$name" in baseline|hono|fastify|service) ;;
    *) echo "BENCH_SERVERS: unknown server $name (baseline, hono, fastify, service)" >&2; exit 2 ;; esac
  [[ " ${SELECTED[*]} " == *" $name "* ]] || SELECTED+=("$name")
done
(( ${#SELECTED[@]} > 0 )) || { echo "BENCH_SERVERS selects no server" >&2; exit 2; }
selected() { [[ " ${SELECTED[*]} " == *" $1 "* ]]; }
[[ "$DURATION" =~ ^[0-9]+s$ && "$WARMUP" =~ ^[0-9]+s$ ]] || { echo "durations are whole seconds, e.g. 10s" >&2; exit 2; }
case "$ENTRY" in dist) ENTRY_FILE=dist/main.js ;; src) ENTRY_FILE=src/main.ts ;;
  *) echo "BENCH_ENTRY is dist or src" >&2; exit 2 ;; esac
for v in RATE RATE_DURATION STARTS; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "BENCH_$v must be a positive whole number" >&2; exit 2; }
done

PUBLIC_BASE_URL=https://checkin.bench.invalid  # both servers build checkin_url from it
DATABASE_URL="postgres://${PGUSER_}@${PGHOST_}:${PGPORT_}/${DB}"
export PGOPTIONS="-c client_min_messages=warning"
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_")

WORK=$(mktemp -d /tmp/bench-partner.XXXXXX)
declare -A PID=() PORT=() DIR=() LEVEL=() OTLP_URL=() EXTRA_ENV=()
SERVERS=()      # measured servers, in round-1 order
CLEANED=0

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---------------------------------------------------------------------------------------------- tools
if ! command -v wrk >/dev/null 2>&1; then
  log "installing wrk from Debian"
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update && apt-get install -y wrk
  else
    sudo apt-get update && sudo apt-get install -y wrk
  fi
fi
require_tools psql curl ss
if selected fastify; then
  command -v "$NODE" >/dev/null || die "$NODE is required for the Fastify peer (BENCH_NODE)"
fi


# PostgreSQL's server log, for the same-SQL check (Debian: logging_collector off, stderr goes to /var/log).
PG_LOG=${BENCH_PG_LOG:-}
if [[ -z "$PG_LOG" ]]; then
  collector=$("${PSQL[@]}" -d postgres -Atc "SELECT pg_current_logfile()" 2>/dev/null || true)
  data_dir=$("${PSQL[@]}" -d postgres -Atc "SHOW data_directory" 2>/dev/null || true)
  if [[ -n "$collector" && -r "$data_dir/$collector" ]]; then
    PG_LOG="$data_dir/$collector"
  else
    PG_LOG=$(ls -t /var/log/postgresql/postgresql-*.log 2>/dev/null | head -1 || true)
  fi
fi
[[ "$PG_LOG" == none || -r "$PG_LOG" ]] || PG_LOG=none

# ---------------------------------------------------------------------------------------------- machine
BUN_VERSION=$("$BUN" --version)
PG_VERSION=$("${PSQL[@]}" -d postgres -Atc "SHOW server_version")
WRK_VERSION=$(wrk --version 2>&1 | head -1 | awk '{print $2}' || true)
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM_GB=$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
GIT_REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_DIRTY=$(git status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src" || true)
log "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB RAM; bun $BUN_VERSION; PostgreSQL $PG_VERSION; wrk $WRK_VERSION"
log "service: working tree at $GIT_REV$GIT_DIRTY, run as $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset}"
if [[ $ENTRY == dist ]]; then
  "$BUN" scripts/build.ts >&2 || die "building the bundle failed"
fi
if selected fastify; then
  NODE_VERSION=$("$NODE" --version)
  # Node 20 runs no TypeScript: the peer and its libraries bundled into one ES module (pg-native is optional in pg).
  "$BUN" build --target=node --format=esm --external pg-native bench/peers/fastify.ts --outfile="$WORK/fastify.mjs" \
    >"$WORK/fastify-build.log" 2>&1 || { cat "$WORK/fastify-build.log" >&2; die "bundling bench/peers/fastify.ts failed"; }
  log "fastify peer: bench/peers/fastify.ts bundled for node $NODE_VERSION"
fi

# ---------------------------------------------------------------------------------------------- servers
start_server() { # name
  local name=$1
  [[ -n "${PORT[$name]:-}" ]] || PORT[$name]=$(free_port)
  local peer_env=(DATABASE_URL="$DATABASE_URL" DB_POOL_SIZE="$POOL" PORT="${PORT[$name]}" PUBLIC_BASE_URL="$PUBLIC_BASE_URL")
  if [[ $name == baseline ]]; then
    env "${peer_env[@]}" "$BUN" ${BENCH_BASELINE_BUN_FLAGS:-} bench/baseline.ts >>"$WORK/$name.log" 2>&1 &
  elif [[ $name == hono ]]; then
    env "${peer_env[@]}" "$BUN" ${BENCH_BASELINE_BUN_FLAGS:-} bench/peers/hono.ts >>"$WORK/$name.log" 2>&1 &
  elif [[ $name == fastify ]]; then
    # exec: the pid is node's own (its CPU and its pool's connections are read by pid).
    (exec env "${peer_env[@]}" NODE_ENV=production "$NODE" "$WORK/fastify.mjs") >>"$WORK/$name.log" 2>&1 &
  else
    mkdir -p "$WORK/$name.data"
    (cd "${DIR[$name]}" && exec env DATABASE_URL="$DATABASE_URL" ROLE=api LOG_LEVEL="${LEVEL[$name]:-Warning}" LOG_FORMAT=json ADMIN_TOKEN="$ADMIN_TOKEN" SECRETS_KEY="$SECRETS_KEY" PUBLIC_BASE_URL="$PUBLIC_BASE_URL" \
      DB_POOL_SIZE="$POOL" PORT="${PORT[$name]}" HOST=127.0.0.1 DATA_DIR="$WORK/$name.data" REDIS_URL= \
      METRICS_PORT= OTEL_EXPORTER_OTLP_ENDPOINT="${OTLP_URL[$name]:-}" ${JSC_RAM:+BUN_JSC_forceRAMSize=$JSC_RAM} \
      ${EXTRA_ENV[$name]:-} "$BUN" ${BENCH_BUN_FLAGS:-} "${ENTRY_OF[$name]:-src/main.ts}") >>"$WORK/$name.log" 2>&1 &
  fi
  PID[$name]=$!
  local _
  for _ in $(seq 1 300); do
    kill -0 "${PID[$name]}" 2>/dev/null || { tail -20 "$WORK/$name.log" >&2; die "$name exited during start-up"; }
    if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[$name]}/readyz" 2>/dev/null; then
      log "$name ready on 127.0.0.1:${PORT[$name]} (pid ${PID[$name]})"
      return 0
    fi
    sleep 0.1
  done
  tail -20 "$WORK/$name.log" >&2
  die "$name not ready after 30 s"
}

SERVERS=()  # first the service's variants (below), then the selected servers around them
DIR[service]=$ROOT
declare -A ENTRY_OF=([service]=$ENTRY_FILE)
if [[ -n "$COMPARE_REF" ]]; then
  REF_NAME="svc@$(git rev-parse --short "$COMPARE_REF^{commit}" 2>/dev/null)" || die "unknown git ref $COMPARE_REF"
  DIR[$REF_NAME]="$WORK/ref"
  mkdir -p "$WORK/ref"
  git archive --format=tar "$COMPARE_REF" src migrations package.json tsconfig.json bunfig.toml | tar -x -C "$WORK/ref"
  ln -s "$ROOT/node_modules" "$WORK/ref/node_modules"
  # Run the way the working tree runs: its bundle when ENTRY=dist (built by this tree's scripts/build.ts from the
  # ref's sources), else its sources. (Until 2026-11-27 the ref always ran from its sources: ~100 µs per request
  # slower than a bundle of the same code on the reads.)
  if [[ $ENTRY == dist ]]; then
    mkdir -p "$WORK/ref/scripts" && cp scripts/build.ts "$WORK/ref/scripts/build.ts"
    (cd "$WORK/ref" && "$BUN" scripts/build.ts >&2) || die "building the bundle of $COMPARE_REF failed"
  fi
  ENTRY_OF[$REF_NAME]=$ENTRY_FILE
  SERVERS+=("$REF_NAME")
  log "also measuring the service as of $COMPARE_REF ($REF_NAME)"
fi
if [[ -n "$ACCESS_LOG" ]]; then
  DIR[svc+log]=$ROOT
  ENTRY_OF[svc+log]=$ENTRY_FILE
  LEVEL[svc+log]=Info
  SERVERS+=(svc+log)
  log "also measuring the working tree with LOG_LEVEL=Info (svc+log: one access-log line per request)"
fi
if [[ -n "$COMPARE_ENV" ]]; then
  for assignment in $COMPARE_ENV; do
    [[ "$assignment" =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]] || die "BENCH_COMPARE_ENV: not NAME=value: $assignment"
  done
  DIR[svc+env]=$ROOT
  ENTRY_OF[svc+env]=$ENTRY_FILE
  EXTRA_ENV[svc+env]=$COMPARE_ENV
  SERVERS+=(svc+env)
  log "also measuring the working tree with $COMPARE_ENV (svc+env)"
fi
if [[ -n "$OTLP" ]]; then
  PORT[otlp-sink]=$(free_port)
  "$BUN" bench/otlp-sink.ts "${PORT[otlp-sink]}" >>"$WORK/otlp-sink.log" 2>&1 &
  PID[otlp-sink]=$!
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null --max-time 1 -X POST -d '{}' "http://127.0.0.1:${PORT[otlp-sink]}/v1/traces" 2>/dev/null && break
    sleep 0.1
  done
  DIR[svc+otlp]=$ROOT
  ENTRY_OF[svc+otlp]=$ENTRY_FILE
  OTLP_URL[svc+otlp]="http://127.0.0.1:${PORT[otlp-sink]}"
  SERVERS+=(svc+otlp)
  log "also measuring the working tree with traces exported (svc+otlp: OTLP/HTTP to the sink on 127.0.0.1:${PORT[otlp-sink]})"
fi
EXTRAS=("${SERVERS[@]}")  # the service's variants are measured right after the service
SERVERS=()
for name in "${SELECTED[@]}"; do
  SERVERS+=("$name")
  [[ $name == service ]] && SERVERS+=("${EXTRAS[@]}")
done
selected service || SERVERS+=("${EXTRAS[@]}")
# The same-answer and same-SQL check: the service (the reference, always started) and every measured server.
CHECKED=(service)
for name in "${SERVERS[@]}"; do [[ $name == service ]] || CHECKED+=("$name"); done
log "measured: ${SERVERS[*]}"

# ---------------------------------------------------------------------------------------------- database
log "creating database $DB"
"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)" -c "CREATE DATABASE ${DB}" >/dev/null
if [[ "$PG_LOG" != none ]]; then
  # Only for the same-SQL check below; every server is restarted (new connections) after it is reset.
  "${PSQL[@]}" -d postgres -c "ALTER DATABASE ${DB} SET log_statement = 'all'" >/dev/null
fi

ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Required with DATABASE_URL (design §9): encrypts the stored TRA tokens and webhook secrets.
SECRETS_KEY=$(head -c 32 /dev/urandom | base64)
start_server service  # applies the migrations

cli() { "$BUN" src/cli.ts --url "http://127.0.0.1:${PORT[service]}" --token "$ADMIN_TOKEN" "$@"; }

log "creating the bench account, its sandbox and its limits through the ops CLI"
ACCOUNT_ID=$(cli accounts create --name "Bench Partner" --email bench@example.com | json_get account_id)
cli sandbox create --account "$ACCOUNT_ID" >"$WORK/sandbox.json"
API_KEY=$(json_get api_key <"$WORK/sandbox.json")
# The admin RPC caps every limit at 1,000,000 per minute (16.7k req/s): far above what any server does here.
cli accounts limits --account "$ACCOUNT_ID" --reads 1000000 --writes 1000000 --tests 1000000 >/dev/null

log "adding 300 accounts with a key each, 3,000 of their properties, 5 more for the bench account"
"${PSQL[@]}" -d "$DB" -v account="$ACCOUNT_ID" -f "$ROOT/bench/other-accounts.sql" >/dev/null
"${PSQL[@]}" -d "$DB" -v account="$ACCOUNT_ID" >/dev/null <<'SQL'
-- The bench key lists 5 test properties (2 from the sandbox, these 3); the 2 live ones must not show.
INSERT INTO properties (account_id, environment, name, internal_name, external_id, rnt_id, reports_tra,
                        requires_document_photos)
SELECT :'account', env, 'Hotel Bench ' || p, 'bench-' || p, 'PMS-BENCH-' || p, 'RNT-9' || lpad(p::text, 4, '0'),
       p % 2 = 0, p % 3 = 0
FROM (VALUES (1, 'test'), (2, 'test'), (3, 'test'), (4, 'live'), (5, 'live')) AS v(p, env);

ANALYZE;
SQL
COUNTS=$("${PSQL[@]}" -d "$DB" -Atc "SELECT (SELECT count(*) FROM accounts) || ' accounts, ' ||
  (SELECT count(*) FROM api_keys) || ' keys, ' || (SELECT count(*) FROM properties) || ' properties'")
log "data: $COUNTS"

for name in "${SERVERS[@]}"; do [[ -n "${PID[$name]:-}" ]] || start_server "$name"; done

AUTH="Authorization: Bearer ${API_KEY}"
GET_EXTERNAL_ID=BENCH-GET-1        # the reservation the `get` case reads (created below through the service)
CHECK_EXTERNAL_ID=BENCH-SQL-CHECK  # the reservation each server creates in the same-SQL check of `create`
# bench/create-body.json, with its placeholder replaced (curl); wrk's bench/create.lua does the same per request.
create_body() { sed "s/__EXTERNAL_ID__/$1/" "$ROOT/bench/create-body.json"; }

declare -A CASE_METHOD=([properties]=GET [get]=GET [create]=POST)
declare -A CASE_PATH=([properties]=/api/partners/properties [get]="/api/partners/registrations/${GET_EXTERNAL_ID}"
  [create]=/api/partners/reservations)
declare -A CASE_STATUS=([properties]=200 [get]=200 [create]=201)

if [[ " ${CASES[*]} " == *" get "* ]]; then
  create_body "$GET_EXTERNAL_ID" >"$WORK/get-setup.json"
  status=$(curl -sS --max-time 5 -o "$WORK/get-setup.out" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    --data-binary "@$WORK/get-setup.json" "http://127.0.0.1:${PORT[service]}/api/partners/reservations")
  [[ $status == 201 ]] || { cat "$WORK/get-setup.out" >&2; die "creating the reservation of the get case answered $status"; }
  log "created reservation ${GET_EXTERNAL_ID} through the service for the get case"
fi

# ---------------------------------------------------------------------------------------------- same answer, same SQL
fetch_once() { # case name → $WORK/case.name.{status,headers,body}
  local case=$1 name=$2 f="$WORK/$1.$2" args=()
  if [[ $case == create ]]; then
    create_body "$CHECK_EXTERNAL_ID" >"$WORK/check-body.json"
    args=(-X POST -H 'Content-Type: application/json' --data-binary "@$WORK/check-body.json")
  fi
  curl -sS --max-time 5 -D "$f.rawheaders" -o "$f.body" -w '%{http_code}' -H "$AUTH" "${args[@]}" \
    "http://127.0.0.1:${PORT[$name]}${CASE_PATH[$case]}" >"$f.status"
  # Left out: date, request id, rate limit, Node's hop-by-hop connection/keep-alive, and the charset Fastify adds
  # to application/json (JSON is UTF-8 by definition, RFC 8259).
  tr -d '\r' <"$f.rawheaders" | sed 1d | awk -F': ' 'NF >= 2 {print tolower($1) ": " $2}' |
    grep -Ev '^(date|x-request-id|x-ratelimit-[a-z]+|connection|keep-alive): ' |
    sed 's#^content-type: application/json; charset=utf-8$#content-type: application/json#' | sort >"$f.headers"
}
# Each server creates the same reservation in the check of `create`: the previous one's is deleted first.
forget_check_reservation() {
  "${PSQL[@]}" -d "$DB" -v id="$CHECK_EXTERNAL_ID" >/dev/null <<'SQL'
DELETE FROM events WHERE reservation_id IN (SELECT id FROM reservations WHERE external_id = :'id');
DELETE FROM reservations WHERE external_id = :'id';
SQL
}
# What differs between two creations of the same reservation: ids, timestamps, the check-in token, event ids.
# Masked in the SQL log of `create` (statement texts and every other parameter must still match).
mask_volatile() {
  sed -E -e 's/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/<uuid>/g' \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}(:[0-9]{2})?)?/<timestamp>/g' \
    -e 's/evt_[0-9a-f]{32}/evt_<id>/g' -e "s#(/checkin/|')[A-Za-z0-9_-]{32}('|\")#\\1<token>\\2#g"
}

pg_log_size() { stat -c %s "$PG_LOG"; }
# What PostgreSQL logged for $DB after byte offset $1, message text only (timestamps and pids dropped), with the
# statement names masked (`execute <unnamed>:` or a named, prepared `execute p1_0:` → `execute:`: the service names
# the statements it runs often; the check is about texts and parameters). The
# service's minute write of its keys' last use (auth/KeyUsage.ts, no request's statement) is left out with its
# parameters: it may land in any server's window.
pg_log_since() {
  tail -c +$(($1 + 1)) "$PG_LOG" | awk -v db="@${DB} " '
    /^[0-9]{4}-[0-9]{2}-[0-9]{2} / {
      keep = index($0, db) > 0
      if (keep) {
        sub(/^.*(LOG|DETAIL): +/, "")
        if ($0 ~ /UPDATE api_keys SET last_used_at/) { usage = 1; keep = 0; next }
        if (usage && $0 ~ /^parameters:/) { usage = 0; keep = 0; next }
        usage = 0
        print
      }
      next
    }
    keep { print }' | sed -E 's/^execute [^ :]+:/execute:/'
}

if [[ "$PG_LOG" != none ]]; then
  log "checking that every server sends the same SQL (log_statement=all, $PG_LOG)"
  for case in "${CASES[@]}"; do
    for name in "${CHECKED[@]}"; do
      [[ $case == create ]] && forget_check_reservation
      offset=$(pg_log_size)
      fetch_once "$case" "$name"
      sleep 0.5
      if [[ $case == create ]]; then
        pg_log_since "$offset" | mask_volatile >"$WORK/$case.$name.sql"
      else
        pg_log_since "$offset" >"$WORK/$case.$name.sql"
      fi
    done
    grep -q 'key_hash = \$1' "$WORK/$case.service.sql" ||
      { cat "$WORK/$case.service.sql" >&2; die "$case: no key lookup in the service's SQL log"; }
    for name in "${CHECKED[@]}"; do
      [[ $name == service ]] && continue
      # Traced, a create also writes each job's trace context (migration 0016): the same statements plus a column.
      [[ $name == svc+otlp && $case == create ]] && continue
      if ! diff -u "$WORK/$case.service.sql" "$WORK/$case.$name.sql" >"$WORK/$case.$name.sql.diff"; then
        cat "$WORK/$case.$name.sql.diff" >&2
        die "$case: $name does not send the service's SQL (bench/peers/shared.ts must hold it exactly)"
      fi
    done
    masked=""; [[ $case == create ]] && masked=" (ids, timestamps, token and event ids masked)"
    log "$case: same SQL, $(grep -c '^\(execute\|statement\)' "$WORK/$case.service.sql") statements per request," \
      "texts and parameters identical$masked"
  done
  [[ " ${CASES[*]} " == *" create "* ]] && forget_check_reservation
  "${PSQL[@]}" -d postgres -c "ALTER DATABASE ${DB} RESET log_statement" >/dev/null
  # Restart every measured server so that no connection keeps log_statement=all (the service only if measured).
  for name in "${CHECKED[@]}"; do stop_pid "${PID[$name]}"; unset "PID[$name]"; done
  for name in "${SERVERS[@]}"; do start_server "$name"; done
else
  log "WARNING: PostgreSQL log not readable; same-SQL check skipped (set BENCH_PG_LOG)"
  for case in "${CASES[@]}"; do
    for name in "${CHECKED[@]}"; do
      [[ $case == create ]] && forget_check_reservation
      fetch_once "$case" "$name"
    done
  done
  [[ " ${CASES[*]} " == *" create "* ]] && forget_check_reservation
  selected service || stop service
fi

# Bodies: byte for byte, except in `create`, where the values that differ between two creations (reservation id,
# check-in token and URL, created_at) are masked first; key order still has to match.
same_body() { # file file [masked keys]
  MASK="${3:-}" "$BUN" -e '
    const mask = (process.env.MASK ?? "").split(",").filter(Boolean)
    const read = async (f) => { const v = JSON.parse(await Bun.file(f).text()); for (const k of mask) if (k in v) v[k] = "*"; return JSON.stringify(v) }
    process.exit((await read(process.argv[1])) === (await read(process.argv[2])) ? 0 : 1)' "$1" "$2"
}
declare -A ANSWER=()
for case in "${CASES[@]}"; do
  for name in "${CHECKED[@]}"; do
    f="$WORK/$case.$name"
    [[ $(cat "$f.status") == "${CASE_STATUS[$case]}" ]] ||
      { cat "$f.body" >&2; die "$case: $name answered $(cat "$f.status"), expected ${CASE_STATUS[$case]}"; }
    [[ $name == service ]] && continue
    if [[ $case == create ]]; then
      same_body "$WORK/$case.service.body" "$f.body" reservation_id,checkin_token,checkin_url,created_at
    else
      cmp -s "$WORK/$case.service.body" "$f.body"
    fi || {
      diff <(tr ',' '\n' <"$WORK/$case.service.body") <(tr ',' '\n' <"$f.body") >&2 || true
      die "$case: response bodies of service and $name differ"
    }
    diff -u "$WORK/$case.service.headers" "$f.headers" >&2 ||
      die "$case: response headers of service and $name differ (beyond date, request id, rate limit, connection, charset)"
  done
  ANSWER[$case]="${CASE_STATUS[$case]}, $(wc -c <"$WORK/$case.service.body") bytes"
  log "$case: same answer from every server: ${ANSWER[$case]}, same headers apart from date/request id/rate limit/connection/charset"
done
if [[ " ${CASES[*]} " == *" properties "* ]]; then
  PROPS=$(json_get properties.length <"$WORK/properties.service.body")
  [[ "$PROPS" == 5 ]] || die "expected 5 properties for the bench key, got $PROPS"
  ANSWER[properties]+=", $PROPS properties"
fi

# ---------------------------------------------------------------------------------------------- rounds
# PostgreSQL backends serving the connections that process $1 holds (matched by client port).
pg_backends() {
  local ports
  ports=$(ss -Htnp state established "( dport = :${PGPORT_} )" |
    awk -v p="pid=$1," 'index($0, p) {n = split($3, a, ":"); printf "%s%s", sep, a[n]; sep = ","}')
  [[ -n "$ports" ]] || return 0
  "${PSQL[@]}" -d postgres -Atc "SELECT pid FROM pg_stat_activity WHERE datname = '${DB}' AND client_port IN (${ports})"
}
# "pid ticks" lines, CPU ticks (user + system) of every process named postgres: the backends, and the background
# processes (WAL writer, checkpointer…) that a request's work also costs.
pg_all_snapshot() {
  # (cat fails when a process ends between the glob and the read: what it read still counts.)
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk '$2 == "(postgres)" {print $1, $14 + $15}'
}
# pg_all_ticks before after: the ticks between two snapshots, per process (one started in between counts from
# zero; one that ended in between is not counted, rather than its whole life subtracted).
pg_all_ticks() {
  awk 'NR == FNR {t[$1] = $2; next} {d += $2 - (($1 in t) ? t[$1] : 0)} END {printf "%d\n", d}' <(printf '%s\n' "$1") \
    <(printf '%s\n' "$2")
}
to_ms() { # wrk latency ("850.00us", "6.20ms", "1.02s", "1.10m") → ms
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.2f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.2f", v }
    else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.2f", v * 60000 }
    else { sub(/s$/, "", v); printf "%.2f", v * 1000 } }'
}



measure() { # case round name
  local case=$1 round=$2 name=$3
  local pid=${PID[$name]} url="http://127.0.0.1:${PORT[$name]}${CASE_PATH[$case]}" script=() args=()
  if [[ $case == create ]]; then
    # Every create run starts from empty reservation and event tables, after a checkpoint.
    "${PSQL[@]}" -d "$DB" -c "TRUNCATE reservations CASCADE" -c "CHECKPOINT" >/dev/null
    script=(-s "$ROOT/bench/create.lua")
  fi
  wait_quiet
  [[ $case == create ]] && args=(-- "${name}-r${round}-warmup" "$ROOT/bench/create-body.json")
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -H "$AUTH" "${script[@]}" "$url" "${args[@]}" \
    >"$WORK/${case}-r${round}-${name}-warmup.txt" 2>&1
  [[ $case == create ]] && args=(-- "${name}-r${round}" "$ROOT/bench/create-body.json")
  local backends backend; mapfile -t backends < <(pg_backends "$pid")
  local -A pg_start=()
  for backend in "${backends[@]}"; do pg_start[$backend]=$(cpu_ticks "$backend"); done
  local cpu0 m0 cpu1 m1 pg=0 pgs0 pgs1 pga wrk_s out="$WORK/${case}-r${round}-${name}.txt"
  cpu0=$(cpu_ticks "$pid"); pgs0=$(pg_all_snapshot); m0=$(machine_ticks)
  # bash's `time` keyword gives wrk's own CPU (user + system seconds).
  wrk_s=$( { TIMEFORMAT='%U %S'; time wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "$AUTH" \
    "${script[@]}" "$url" "${args[@]}" >"$out" 2>&1; } 2>&1 | awk '{print $1 + $2}')
  cpu1=$(cpu_ticks "$pid"); pgs1=$(pg_all_snapshot); m1=$(machine_ticks)
  pga=$(pg_all_ticks "$pgs0" "$pgs1")
  # Backends of the pool at the end too: a connection opened during the run counts from zero.
  mapfile -t backends < <( { printf '%s\n' "${!pg_start[@]}"; pg_backends "$pid"; } | sort -u | grep . )
  for backend in "${backends[@]}"; do
    [[ -r /proc/$backend/stat ]] || continue
    pg=$((pg + $(cpu_ticks "$backend") - ${pg_start[$backend]:-0}))
  done
  kill -0 "$pid" 2>/dev/null || die "$name died during round $round of $case"
  local rps requests seconds p50 p99 non2xx sockerr
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$out")
  requests=$(awk '/ requests in / {print $1}' "$out")
  seconds=$(awk '/ requests in / {v = $4; sub(/s,$/, "", v); print v}' "$out")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$out")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out"); non2xx=${non2xx:-0}
  sockerr=$(awk '/Socket errors:/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$out"); sockerr=${sockerr:-0}
  [[ -n "$rps" && -n "$requests" && "$requests" -gt 0 ]] || { cat "$out" >&2; die "could not read wrk's output"; }
  local us_req cores pg_us_req pga_us_req machine other
  us_req=$(awk -v d=$((cpu1 - cpu0)) -v n="$requests" -v hz="$CLK_TCK" 'BEGIN {printf "%.0f", d / hz / n * 1e6}')
  cores=$(awk -v d=$((cpu1 - cpu0)) -v s="$seconds" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", d / hz / s}')
  pg_us_req=$(awk -v d="$pg" -v n="$requests" -v hz="$CLK_TCK" -v b="${#backends[@]}" \
    'BEGIN {if (b == 0) print "-"; else printf "%.0f", d / hz / n * 1e6}')
  pga_us_req=$(awk -v d="$pga" -v n="$requests" -v hz="$CLK_TCK" 'BEGIN {printf "%.0f", d / hz / n * 1e6}')
  # What the rest of the machine did meanwhile (other processes), in cores.
  machine=$(awk -v d=$((m1 - m0)) -v s="$seconds" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", d / hz / s}')
  other=$(awk -v m=$((m1 - m0)) -v c=$((cpu1 - cpu0)) -v p="$pga" -v w="$wrk_s" -v s="$seconds" -v hz="$CLK_TCK" \
    'BEGIN {o = ((m - c - p) / hz - w) / s; printf "%.2f", (o < 0 ? 0 : o)}')
  local rows=""
  if [[ $case == create ]]; then
    # The outbox commits with the change: as many reservation.created events as reservations, every run.
    rows=$("${PSQL[@]}" -d "$DB" -Atc "SELECT (SELECT count(*) FROM reservations) || ' ' || (SELECT count(*) FROM events)")
    [[ ${rows% *} == "${rows#* }" ]] || die "$case round $round $name: reservations and events differ: $rows"
    rows="; ${rows% *} reservations, as many events"
  fi
  # Columns: 1 round, 2 server, 3 req/s, 4 p50, 5 p99, 6 non-2xx, 7 socket errors, 8 server µs/req, 9 server cores,
  # 10 pool backends' µs/req, 11 machine cores, 12 others' cores, 13 wrk's CPU s, 14 backends, 15 PostgreSQL µs/req.
  printf '%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$rps" "$p50" "$p99" "$non2xx" \
    "$sockerr" "$us_req" "$cores" "$pg_us_req" "$machine" "$other" "$wrk_s" "${#backends[@]}" "$pga_us_req" >>"$RESULTS"
  log "$case round $round $name: $(printf '%.0f' "$rps") req/s, p50 ${p50} ms, p99 ${p99} ms, non-2xx $non2xx;" \
    "${us_req} µs CPU/req (${cores} cores), PostgreSQL ${pga_us_req} µs/req (its pool's backends ${pg_us_req}); machine ${machine} cores busy, ${other} by others$rows"
}

LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
log "load average before the rounds: $LOAD"
log "cases ${CASES[*]}; per case $ROUNDS rounds over ${SERVERS[*]}, order reversed every other round; each run:" \
  "${WARMUP} warm-up, then wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency"
declare -A HWM=() RSS=() PEAK=() RATE_OF=()
# rate_run case name: bench/rate.ts at $RATE req/s for $RATE_DURATION s, its JSON in RATE_OF[case.name].
rate_run() {
  local case=$1 name=$2 url args=()
  url="http://127.0.0.1:${PORT[$name]}${CASE_PATH[$case]}"
  if [[ $case == create ]]; then
    "${PSQL[@]}" -d "$DB" -c "TRUNCATE reservations CASCADE" -c "CHECKPOINT" >/dev/null
    args=("$ROOT/bench/create-body.json" "${name}-rate")
  fi
  wait_quiet
  RATE_OF[$case.$name]=$("$BUN" bench/rate.ts "$url" "${CASE_METHOD[$case]}" "$RATE" "$RATE_DURATION" "$AUTH" "${args[@]}") ||
    die "$case: the fixed-rate run against $name failed"
  log "$case at ${RATE} req/s, $name: ${RATE_OF[$case.$name]}"
}
for case in "${CASES[@]}"; do
  RESULTS="$WORK/results-$case.tsv"
  : >"$RESULTS"
  # Peak RSS per case: VmHWM is reset (clear_refs 5) before the case's first run, read after its last.
  for name in "${SERVERS[@]}"; do echo 5 >"/proc/${PID[$name]}/clear_refs" 2>/dev/null || true; done
  for round in $(seq 1 "$ROUNDS"); do
    order=("${SERVERS[@]}")
    if (( round % 2 == 0 )); then
      order=(); for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[$i]}"); done
    fi
    for name in "${order[@]}"; do measure "$case" "$round" "$name"; done
  done
  for name in "${SERVERS[@]}"; do rate_run "$case" "$name"; done
  for name in "${SERVERS[@]}"; do
    HWM[$case.$name]=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[$name]}/status")
    RSS[$case.$name]=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/${PID[$name]}/status")
    (( ${HWM[$case.$name]} > ${PEAK[$name]:-0} )) && PEAK[$name]=${HWM[$case.$name]}
  done
done

# ---------------------------------------------------------------------------------------------- start
# Every measured server stops first: the starts are timed on a quiet machine.
for name in "${SERVERS[@]}"; do stop "$name"; done
declare -A START_MS=()
START_IDLE_RSS=""
# time_start kind data_dir [env...] → ms from the launch of the entry to its first /readyz 200 (ROLE=all:
# everything loaded, the loops started); the process is stopped afterwards, or left in START_PID (idle=1).
time_start() {
  local kind=$1 dir=$2; shift 2
  local port t0 t1 pid
  port=$(free_port)
  wait_quiet
  t0=$(now_ms)
  (exec env -u DATABASE_URL "$@" ROLE=all LOG_LEVEL=Warning LOG_FORMAT=json ADMIN_TOKEN="$ADMIN_TOKEN" \
    PUBLIC_BASE_URL="$PUBLIC_BASE_URL" PORT="$port" HOST=127.0.0.1 DATA_DIR="$dir" REDIS_URL= METRICS_PORT= \
    ${JSC_RAM:+BUN_JSC_forceRAMSize=$JSC_RAM} \
    "$BUN" "$ENTRY_FILE") >>"$WORK/start-$kind.log" 2>&1 &
  pid=$!
  PID[start]=$pid
  until curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$port/readyz" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { tail -20 "$WORK/start-$kind.log" >&2; die "start ($kind) exited"; }
    (( $(now_ms) - t0 > 60000 )) && die "start ($kind) not ready within 60 s"
    sleep 0.01
  done
  t1=$(now_ms)
  START_MS[$kind]+="$((t1 - t0)) "
  if [[ "${IDLE:-}" == 1 ]]; then
    sleep 5
    START_IDLE_RSS=$(awk '/^VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
  fi
  stop start
}
if selected service; then
  log "timing $STARTS starts of each kind: fresh embedded DATA_DIR, embedded restart, DATABASE_URL (ROLE=all)"
  for i in $(seq 1 "$STARTS"); do time_start fresh "$WORK/start-fresh-$i"; done
  for i in $(seq 1 "$STARTS"); do IDLE=$([[ $i == "$STARTS" ]] && echo 1) time_start restart "$WORK/start-fresh-1"; done
  for i in $(seq 1 "$STARTS"); do
    time_start postgres "$WORK/start-pg" DATABASE_URL="$DATABASE_URL" SECRETS_KEY="$SECRETS_KEY"
  done
else
  log "starts not timed: the service is not in BENCH_SERVERS"
fi

# ---------------------------------------------------------------------------------------------- report
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v n="$1" -v c="$2" '$2 == n {print $c}' "$RESULTS"; }
ratios() { # name → "round ratio" lines, name/baseline req/s per round
  awk -F'\t' -v n="$1" '$2 == n {s[$1] = $3} $2 == "baseline" {b[$1] = $3}
    END {for (r in s) if (b[r] > 0) printf "%s %.3f\n", r, s[r] / b[r]}' "$RESULTS" | sort -n
}
measured() { [[ " ${SERVERS[*]} " == *" $1 "* ]]; }
# verdict_line "target" "measured" ok: one line per target (ok 1 met, 0 NOT met, "" not measured: counts as not met).
verdict_line() {
  local word
  case "$3" in 1) word=met ;; 0) word="NOT met" ;; *) word="not measured" ;; esac
  printf 'target %s: %s: %s\n' "$1" "$word" "$2"
  [[ "$3" == 1 ]] || ALL_OK=0
  SUMMARY+=("$word: $1 ($2)")
}

echo
echo "baseline (Bun.serve + pg), peers (bench/peers/) and service (working tree ${GIT_REV}${GIT_DIRTY}), same SQL"
echo "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB; bun $BUN_VERSION${NODE_VERSION:+; node $NODE_VERSION}; PostgreSQL $PG_VERSION; load average before: $LOAD"
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency after a ${WARMUP} warm-up; pg pool $POOL each; $ROUNDS rounds over ${SERVERS[*]}, order reversed every other round"
echo "data: $COUNTS"
ALL_OK=1
SUMMARY=()
for case in "${CASES[@]}"; do
  RESULTS="$WORK/results-$case.tsv"
  echo
  echo "== ${case}: ${CASE_METHOD[$case]} ${CASE_PATH[$case]}; answer ${ANSWER[$case]}"
  [[ $case == create ]] && echo "   (a fresh external_id per request: wrk -s bench/create.lua; tables emptied and CHECKPOINT before each run)"
  ROW='| %-6s | %-12s | %6s | %6s | %6s | %7s | %8s | %10s | %9s | %9s | %9s | %7s | %6s |\n'
  printf "$ROW" round server 'req/s' 'p50 ms' 'p99 ms' non-2xx 'sock err' 'CPU µs/req' 'srv cores' 'PG µs/req' 'pool µs' machine others
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' -------- -------------- -------- -------- -------- --------- ---------- ------------ ----------- ----------- ----------- --------- --------
  while IFS=$'\t' read -r round name rps p50 p99 non2xx sockerr us cores pgus machine other _ _ pgall; do
    printf "$ROW" "$round" "$name" "$rps" "$p50" "$p99" "$non2xx" "$sockerr" "$us" "$cores" "$pgall" "$pgus" "$machine" "$other"
  done <"$RESULTS"
  for name in "${SERVERS[@]}"; do
    printf "$ROW" median "$name" \
      "$(col "$name" 3 | median)" "$(col "$name" 4 | median)" "$(col "$name" 5 | median)" \
      "$(col "$name" 6 | awk '{s += $1} END {print s}')" "$(col "$name" 7 | awk '{s += $1} END {print s}')" \
      "$(col "$name" 8 | median)" "$(col "$name" 9 | median)" "$(col "$name" 15 | median)" "$(col "$name" 10 | median)" \
      "$(col "$name" 11 | median)" "$(col "$name" 12 | median)"
  done
  echo "CPU µs/req and srv cores: the server process, all its threads (node for fastify). PG µs/req: every process named"
  echo "postgres; pool µs: only the backends of the server's pool. Both over the wrk window, per request wrk reports."
  echo "machine: cores busy during the run (of $(nproc)); others: machine minus server, PostgreSQL and wrk (disturbance)."
  # The summary: medians of rounds, the ratio to the baseline (median of the per-round ratios), the fixed-rate p99.
  SUM='| %-12s | %7s | %11s | %13s | %10s | %9s | %8s |\n'
  printf "$SUM" server 'req/s' 'x baseline' "p99 @${RATE}/s ms" 'CPU µs/req' 'PG µs/req' 'peak MB'
  printf '|%s|%s|%s|%s|%s|%s|%s|\n' -------------- --------- ------------- --------------- ------------ ----------- ----------
  for name in "${SERVERS[@]}"; do
    r=-
    if [[ $name != baseline ]] && measured baseline; then
      r=$(ratios "$name" | awk '{print $2}' | median)
      [[ $r == - ]] || r=$(awk -v r="$r" 'BEGIN {printf "%.3f", r}')
    fi
    printf "$SUM" "$name" "$(col "$name" 3 | median)" "$r" "$(json_get p99 <<<"${RATE_OF[$case.$name]}")" \
      "$(col "$name" 8 | median)" "$(col "$name" 15 | median)" "${HWM[$case.$name]}"
  done
  for name in "${SERVERS[@]}"; do
    [[ $name == baseline ]] && continue
    measured baseline || break
    r=$(ratios "$name")
    m=$(awk '{print $2}' <<<"$r" | median)
    printf '%-12s / baseline req/s: %s-> median %.3f (ratio of the medians %.3f)\n' "$name" \
      "$(awk '{printf "r%s %.2f, ", $1, $2}' <<<"$r")" "$m" \
      "$(awk -v s="$(col "$name" 3 | median)" -v b="$(col baseline 3 | median)" 'BEGIN {print s / b}')"
  done
  for name in "${SERVERS[@]}"; do
    printf '%-12s peak RSS (VmHWM) during %s %4s MB, RSS at its end %4s MB\n' "$name" "$case" "${HWM[$case.$name]}" "${RSS[$case.$name]}"
  done
  for name in "${SERVERS[@]}"; do
    printf '%-12s at %s req/s for %s s: %s\n' "$name" "$RATE" "$RATE_DURATION" "${RATE_OF[$case.$name]}"
  done
  DISTURBED=$(awk -F'\t' '$12 > 0.25 {printf "r%s %s (%s cores), ", $1, $2, $12}' "$RESULTS")
  [[ -z "$DISTURBED" ]] ||
    echo "WARNING: other processes used the CPUs during ${DISTURBED%, }: those runs read low; re-run on a quiet machine"
  ERRORS=$(awk -F'\t' '{s += $6 + $7} END {print s + 0}' "$RESULTS")
  if (( ERRORS > 0 )); then
    ALL_OK=0
    echo "$case: $(awk -F'\t' '$6 + $7 > 0 {printf "r%s %s %s, ", $1, $2, $6 + $7}' "$RESULTS")non-2xx answers or socket errors under wrk: FAIL"
  fi
  if ! measured service; then
    verdict_line "$case: the service's targets" "the service is not in BENCH_SERVERS" ""
    continue
  fi
  echo "wrk at $CONNECTIONS connections (saturation), service p99: $(col service 5 | median) ms (informational)"
  target=${TARGET_RATIO[$case]}
  if measured baseline; then
    RATIO=$(ratios service | awk '{print $2}' | median)
    RATIO=$(awk -v r="$RATIO" 'BEGIN {printf "%.3f", r}')
    verdict_line "$case: service req/s >= ${target} x the baseline (median of the rounds' ratios)" \
      "${RATIO} (service $(col service 3 | median), baseline $(col baseline 3 | median) req/s)" \
      "$(awk -v r="$RATIO" -v t="$target" 'BEGIN {print (r >= t) ? 1 : 0}')"
  else
    verdict_line "$case: service req/s >= ${target} x the baseline" "the baseline is not in BENCH_SERVERS" ""
  fi
  peer=${TARGET_AHEAD_OF[$case]:-}
  if [[ -n "$peer" ]]; then
    if measured "$peer"; then
      svc=$(col service 3 | median); other=$(col "$peer" 3 | median)
      verdict_line "$case: service ahead of the $peer peer (median req/s)" "service $svc, $peer $other req/s" \
        "$(awk -v s="$svc" -v o="$other" 'BEGIN {print (s > o) ? 1 : 0}')"
    else
      verdict_line "$case: service ahead of the $peer peer (median req/s)" "the $peer peer is not in BENCH_SERVERS" ""
    fi
  fi
  rate_p99=$(json_get p99 <<<"${RATE_OF[$case.service]}")
  rate_failed=$(json_get failed <<<"${RATE_OF[$case.service]}")
  verdict_line "$case: service p99 at ${RATE} req/s <= ${TARGET_RATE_P99_MS} ms" "${rate_p99} ms, ${rate_failed} failed" \
    "$(awk -v p="$rate_p99" -v t="$TARGET_RATE_P99_MS" -v f="$rate_failed" 'BEGIN {print (p <= t && f == 0) ? 1 : 0}')"
done

echo
if measured service; then
  echo "== memory and start (ROLE=api under the load above; starts with ROLE=all, median of $STARTS)"
  peak=${PEAK[service]:-0}
  verdict_line "service peak RSS (ROLE=api) over the bench load <= ${TARGET_RSS_MB} MB" "${peak} MB" \
    "$(( peak <= TARGET_RSS_MB ? 1 : 0 ))"
  start_median() { tr ' ' '\n' <<<"${START_MS[$1]}" | grep . | median; }
  for kind in fresh restart postgres; do
    echo "ready after start ($kind): ${START_MS[$kind]}ms -> median $(start_median "$kind") ms"
  done
  echo "embedded process idle (5 s after ready): ${START_IDLE_RSS} MB RSS"
  restart=$(start_median restart)
  verdict_line "ready after a restart (embedded) <= ${TARGET_RESTART_MS} ms" "${restart} ms" \
    "$(awk -v v="$restart" -v t="$TARGET_RESTART_MS" 'BEGIN {print (v <= t) ? 1 : 0}')"
else
  verdict_line "service peak RSS and restart" "the service is not in BENCH_SERVERS" ""
fi
echo
printf '%s\n' "${SUMMARY[@]}"
if [[ $ALL_OK == 1 ]]; then
  echo "VERDICT: PASS"
else
  echo "VERDICT: FAIL"
fi
