#!/usr/bin/env bash
# The scale note's measurement (issue 17, item 6; docs/performance.md, "Scale: instances against one
# PostgreSQL"): how throughput grows with k = 1, 2, 3 service processes against one PostgreSQL on this machine.
# Invoked by `npm run bench:scale`.
#
# 1. API: three `ROLE=api` instances (`bun src/main.ts`, the environment of bench/run.sh's start_server) on one
#    database, seeded as bench/run.sh seeds it. For each k the first k instances are driven at once, one wrk per
#    instance, the BENCH_CONNECTIONS connections split between them (50 → 50; 25 + 25; 17 + 17 + 16): req/s is
#    the sum, p99 is per instance. Cases `get` (GET /api/partners/registrations/{external_id}) and `create`
#    (POST /api/partners/reservations, bench/create.lua: a fresh external_id per request; reservation tables
#    emptied and CHECKPOINT before each create run, events = reservations checked after it).
# 2. Workers: for each k, k `ROLE=worker` instances drain the same backlog of BENCH_N stored deliveries
#    (reservation.created, ~1 KB) to one endpoint pointing at bench/webhooks/receiver.ts. Seeded by
#    bench/scale/seed.ts with the statement of Outbox.enqueue, one reservation per event (the ordering rule of
#    design §6.14 would otherwise let one delivery at a time through) and held (next_attempt_at far ahead) until
#    all k workers answer /readyz; then one UPDATE makes them due and NOTIFY wakes the loops. Deliveries/s from
#    the first to the last arrival at the receiver. Exactly once: N requests, N distinct ids, N rows delivered
#    after 1 attempt. Nothing here reads or sets the delivery engine's concurrency.
# 3. Per run: throughput, p99, CPU (utime+stime from /proc) of the service processes, of the PostgreSQL backends
#    of the bench database, of the load generator (wrk or the receiver), the machine's busy cores and its load
#    average. A table per part, then a verdict line: "scale: api ×1.00 / ×a / ×b; workers ×1.00 / ×c / ×d;
#    stops growing at k=… because …" (informational: no target), and the checks.
#
# Everything stays on this machine: PostgreSQL on 127.0.0.1, every process bound to 127.0.0.1, wrk against
# 127.0.0.1 only. The database BENCH_DB is dropped and recreated, and dropped again on exit (also on failure);
# every process started here is stopped on exit. Defaults take ~4–5 min on a loaded 2-vCPU machine, less on a
# quiet one.
#
# Knobs (environment): BENCH_KS (1,2,3: instance counts, ascending), BENCH_ROUNDS (1; every other round runs
#   the k in reverse order), BENCH_DURATION (8s), BENCH_WARMUP (2s), BENCH_PRIME (5s: every API instance, all at
#   once, before a case's first run), BENCH_CONNECTIONS (50, split across the instances), BENCH_POOL (10:
#   DB_POOL_SIZE of every instance), BENCH_N (10000 deliveries per worker run), BENCH_BATCH (500),
#   BENCH_SKIP_API=1, BENCH_SKIP_WORKERS=1, BENCH_ENTRY (dist: the production bundle `npm start` runs, built
#   first by scripts/build.ts; src: `bun src/main.ts`), BENCH_JSC_RAM (268435456: BUN_JSC_forceRAMSize of the
#   services, as `npm start` and bench/run.sh set it; "" for Bun's default), BENCH_DB (bench_scale), BENCH_PGHOST /
#   BENCH_PGPORT / BENCH_PGUSER (127.0.0.1 / 5432 / postgres), BENCH_QUIET_WAIT (5: seconds to wait, per run,
#   for other processes to leave the CPUs), BENCH_TIMEOUT (180: longest worker run, seconds), BENCH_KEEP=1
#   (keep the work directory: wrk outputs, logs).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUN="$ROOT/node_modules/.bin/bun"

KS_SEL=${BENCH_KS:-1,2,3}
ROUNDS=${BENCH_ROUNDS:-1}
DURATION=${BENCH_DURATION:-8s}
WARMUP=${BENCH_WARMUP:-2s}
PRIME=${BENCH_PRIME:-5s}
CONNECTIONS=${BENCH_CONNECTIONS:-50}
POOL=${BENCH_POOL:-10}
N=${BENCH_N:-10000}
BATCH=${BENCH_BATCH:-500}
DB=${BENCH_DB:-bench_scale}
PGHOST_=${BENCH_PGHOST:-127.0.0.1}
PGPORT_=${BENCH_PGPORT:-5432}
PGUSER_=${BENCH_PGUSER:-postgres}
QUIET_WAIT=${BENCH_QUIET_WAIT:-5}
TIMEOUT=${BENCH_TIMEOUT:-180}
SKIP_API=${BENCH_SKIP_API:-0}
SKIP_WORKERS=${BENCH_SKIP_WORKERS:-0}
ENTRY=${BENCH_ENTRY:-dist}
JSC_RAM=${BENCH_JSC_RAM-268435456}
GROWTH=1.10  # "still growing": k instances give at least 10 % more than k − 1

[[ "$DB" =~ ^bench_[a-z0-9_]*$ ]] ||
  { echo "BENCH_DB must be a plain lower-case identifier starting with bench_" >&2; exit 2; }
case "$PGHOST_" in 127.0.0.1|localhost|::1) ;; *) echo "BENCH_PGHOST must be local" >&2; exit 2 ;; esac
[[ "$KS_SEL" =~ ^[1-9](,[1-9])*$ ]] || { echo "BENCH_KS: instance counts 1-9, comma-separated" >&2; exit 2; }
IFS=, read -r -a KS <<<"$KS_SEL"
for ((i = 1; i < ${#KS[@]}; i++)); do
  (( KS[i] > KS[i - 1] )) || { echo "BENCH_KS must be ascending" >&2; exit 2; }
done
KMAX=${KS[-1]}
[[ "$DURATION" =~ ^[0-9]+s$ && "$WARMUP" =~ ^[0-9]+s$ && "$PRIME" =~ ^[0-9]+s$ ]] ||
  { echo "durations are whole seconds, e.g. 8s" >&2; exit 2; }
for v in ROUNDS CONNECTIONS POOL N BATCH QUIET_WAIT TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "BENCH_$v must be a whole number" >&2; exit 2; }
done
(( CONNECTIONS >= KMAX )) || { echo "BENCH_CONNECTIONS must be at least the largest k" >&2; exit 2; }
case "$ENTRY" in src) ENTRY_FILE=src/main.ts ;; dist) ENTRY_FILE=dist/main.js ;;
  *) echo "BENCH_ENTRY is src or dist" >&2; exit 2 ;; esac
[[ -z "$JSC_RAM" || "$JSC_RAM" =~ ^[0-9]+$ ]] ||
  { echo "BENCH_JSC_RAM must be a number of bytes or empty" >&2; exit 2; }

PUBLIC_BASE_URL=https://checkin.bench.invalid
DATABASE_URL="postgres://${PGUSER_}@${PGHOST_}:${PGPORT_}/${DB}"
export PGOPTIONS="-c client_min_messages=warning"
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_")

WORK=$(mktemp -d /tmp/bench-scale.XXXXXX)
declare -A PID=()
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
require_tools psql curl

BUN_VERSION=$("$BUN" --version)
PG_VERSION=$("${PSQL[@]}" -d postgres -Atc "SHOW server_version")
PG_MAX_CONN=$("${PSQL[@]}" -d postgres -Atc "SHOW max_connections")
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM_GB=$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
GIT_REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_DIRTY=$(git status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src" || true)
log "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB RAM; bun $BUN_VERSION; PostgreSQL $PG_VERSION" \
  "(max_connections $PG_MAX_CONN)"
log "service: working tree at $GIT_REV$GIT_DIRTY, run as $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset};" \
  "k = ${KS[*]}; pool $POOL per instance"
if [[ $ENTRY == dist ]]; then
  "$BUN" scripts/build.ts >&2 || die "building the bundle failed"
fi
(( KMAX * POOL + 10 <= PG_MAX_CONN )) ||
  log "WARNING: $KMAX instances × pool $POOL approach max_connections $PG_MAX_CONN"

# ---------------------------------------------------------------------------------------------- measuring
# utime + stime in clock ticks of the given pids (all threads); a pid gone counts 0.
# PostgreSQL backends of the bench database, by process title ("postgres: [cluster: ]user db host(port) state"),
# as bench/webhooks/receiver.ts finds them: every instance's pool, whichever instance holds the connection.
pg_backends() {
  grep -lzE "^postgres: (\S+: )?\S+ ${DB} " /proc/[0-9]*/cmdline 2>/dev/null | sed 's|^/proc/||; s|/cmdline$||' || true
}
# One line "<pid> <ticks>" per backend, to diff against a later snapshot (backends come and go with the pools).
pg_snapshot() { local b; for b in $(pg_backends); do echo "$b $(cpu_ticks "$b")"; done; }
pg_ticks_since() { # snapshot-file → ticks used by the backends since (a backend opened meanwhile counts from 0)
  local now; now=$(pg_snapshot)
  awk 'NR == FNR {t0[$1] = $2; next} {s += $2 - ($1 in t0 ? t0[$1] : 0)} END {print s + 0}' "$1" - <<<"$now"
}
cores() { awk -v t="$1" -v s="$2" -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", t / hz / s}'; }
us_per() { awk -v t="$1" -v n="$2" -v hz="$CLK_TCK" 'BEGIN {printf "%.0f", (n > 0 ? t / hz / n * 1e6 : 0)}'; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# Busy cores not accounted to the service, its backends or the load generator: PostgreSQL's own processes
# (WAL writer, checkpointer) and whatever else runs on the machine.
others_of() { awk -v m="$1" -v a="$2" -v b="$3" -v c="$4" 'BEGIN {o = m - a - b - c; printf "%.2f", (o < 0 ? 0 : o)}'; }
to_ms() { # wrk latency ("850.00us", "6.20ms", "1.02s", "1.10m") → ms
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.2f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.2f", v }
    else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.2f", v * 60000 }
    else { sub(/s$/, "", v); printf "%.2f", v * 1000 } }'
}
# The order of the k in a round: ascending, reversed every other round (as bench/run.sh alternates servers).
round_ks() { # round
  if (( $1 % 2 == 1 )); then echo "${KS[*]}"; else printf '%s\n' "${KS[@]}" | tac | tr '\n' ' '; fi
}

# ---------------------------------------------------------------------------------------------- processes
ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Required with DATABASE_URL (design §9): encrypts the stored TRA tokens and webhook secrets; one for all.
SECRETS_KEY=$(head -c 32 /dev/urandom | base64)
declare -A PORT=()
# bench/run.sh's start_server environment, plus WEBHOOK_ALLOW_PRIVATE_URLS for every instance: the endpoint (made
# through api1) and the deliveries go to the receiver on 127.0.0.1. It only widens the URL checks.
start_service() { # name role → PID[name], PORT[name]; does not wait
  local name=$1 role=$2
  PORT[$name]=$(free_port)
  mkdir -p "$WORK/$name.data"
  env DATABASE_URL="$DATABASE_URL" ROLE="$role" LOG_LEVEL=Warning LOG_FORMAT=json ADMIN_TOKEN="$ADMIN_TOKEN" \
    SECRETS_KEY="$SECRETS_KEY" PUBLIC_BASE_URL="$PUBLIC_BASE_URL" DB_POOL_SIZE="$POOL" PORT="${PORT[$name]}" \
    HOST=127.0.0.1 DATA_DIR="$WORK/$name.data" REDIS_URL= METRICS_PORT= OTEL_EXPORTER_OTLP_ENDPOINT= \
    WEBHOOK_ALLOW_PRIVATE_URLS=true ${JSC_RAM:+BUN_JSC_forceRAMSize=$JSC_RAM} "$BUN" "$ENTRY_FILE" \
    >>"$WORK/$name.log" 2>&1 &
  PID[$name]=$!
}
wait_ready() { # name
  local _
  for _ in $(seq 1 300); do
    kill -0 "${PID[$1]}" 2>/dev/null || { tail -20 "$WORK/$1.log" >&2; die "$1 exited during start-up"; }
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[$1]}/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  tail -20 "$WORK/$1.log" >&2
  die "$1 not ready after 30 s"
}

# ---------------------------------------------------------------------------------------------- setup
log "creating database $DB"
"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)" -c "CREATE DATABASE ${DB}" >/dev/null
start_service api1 api   # applies the migrations
wait_ready api1
cli() { "$BUN" src/cli.ts --url "http://127.0.0.1:${PORT[api1]}" --token "$ADMIN_TOKEN" "$@"; }

log "bench account, sandbox key and limits (ops CLI); 300 more accounts and 3,000 properties as bench/run.sh"
ACCOUNT_ID=$(cli accounts create --name "Bench Scale" --email bench-scale@example.com | json_get account_id)
API_KEY=$(cli sandbox create --account "$ACCOUNT_ID" | json_get api_key)
# The admin RPC caps every limit at 1,000,000 per minute; each instance counts its own (REDIS_URL unset).
cli accounts limits --account "$ACCOUNT_ID" --reads 1000000 --writes 1000000 --tests 1000000 >/dev/null
cli properties create --account "$ACCOUNT_ID" --name "Hotel Bench 1" --env test --external-id PMS-BENCH-1 >/dev/null
# bench/run.sh's other accounts, keys and properties, so that the key lookup and property reads see the same data.
"${PSQL[@]}" -d "$DB" -v account="$ACCOUNT_ID" -f "$ROOT/bench/other-accounts.sql" -c "ANALYZE" >/dev/null
AUTH="Authorization: Bearer ${API_KEY}"
create_body() { sed "s/__EXTERNAL_ID__/$1/" "$ROOT/bench/create-body.json"; }
post_reservation() { # external_id → reservation id
  local status
  create_body "$1" >"$WORK/$1.json"
  status=$(curl -sS --max-time 5 -o "$WORK/$1.out" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
    --data-binary "@$WORK/$1.json" "http://127.0.0.1:${PORT[api1]}/api/partners/reservations")
  [[ $status == 201 ]] || { cat "$WORK/$1.out" >&2; die "creating reservation $1 answered $status"; }
  json_get reservation_id <"$WORK/$1.out"
}

# ---------------------------------------------------------------------------------------------- 1. API
# round case k rps p99max p99s errors svc_us svc_cores pg_us pg_cores wrk_cores machine others load
API_RESULTS="$WORK/api.tsv"
: >"$API_RESULTS"
GET_PATH=/api/partners/registrations/BENCH-GET-1

# Connections of instance i (1-based) of k: CONNECTIONS split as evenly as possible.
conns_of() { echo $(( CONNECTIONS / $2 + ($1 <= CONNECTIONS % $2 ? 1 : 0) )); }

measure_api() { # case k round
  local case=$1 k=$2 round=$3 i script=() url pids=()
  url="$GET_PATH"
  if [[ $case == create ]]; then
    "${PSQL[@]}" -d "$DB" -c "TRUNCATE reservations CASCADE" -c "CHECKPOINT" >/dev/null
    script=(-s "$ROOT/bench/create.lua")
    url=/api/partners/reservations
  fi
  for ((i = 1; i <= k; i++)); do pids+=("${PID[api$i]}"); done
  wait_quiet
  # Warm-up: every instance of this k at once, as measured.
  local wrk_pids=() p
  for ((i = 1; i <= k; i++)); do
    local args=(); [[ $case == create ]] && args=(-- "k$k-r$round-i$i-warmup" "$ROOT/bench/create-body.json")
    wrk -t1 -c"$(conns_of "$i" "$k")" -d"$WARMUP" -H "$AUTH" "${script[@]}" "http://127.0.0.1:${PORT[api$i]}$url" \
      "${args[@]}" >"$WORK/$case-k$k-r$round-i$i-warmup.txt" 2>&1 &
    wrk_pids+=($!)
  done
  for p in "${wrk_pids[@]}"; do wait "$p" || die "$case k=$k: wrk (warm-up) failed"; done
  local load svc0 svc1 m0 m1 pg seconds
  load=$(loadavg)
  pg_snapshot >"$WORK/pg0"
  svc0=$(cpu_ticks "${pids[@]}"); m0=$(machine_ticks)
  wrk_pids=()
  for ((i = 1; i <= k; i++)); do
    local args=(); [[ $case == create ]] && args=(-- "k$k-r$round-i$i" "$ROOT/bench/create-body.json")
    # bash's `time` keyword gives each wrk's own CPU (user + system seconds).
    ( TIMEFORMAT='%U %S'
      { time wrk -t1 -c"$(conns_of "$i" "$k")" -d"$DURATION" --latency -H "$AUTH" "${script[@]}" \
          "http://127.0.0.1:${PORT[api$i]}$url" "${args[@]}" >"$WORK/$case-k$k-r$round-i$i.txt" 2>&1; } \
        2>"$WORK/$case-k$k-r$round-i$i.time" ) &
    wrk_pids+=($!)
  done
  for p in "${wrk_pids[@]}"; do wait "$p" || die "$case k=$k: wrk failed"; done
  svc1=$(cpu_ticks "${pids[@]}"); m1=$(machine_ticks)
  pg=$(pg_ticks_since "$WORK/pg0")
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || die "an API instance died during $case k=$k"; done
  local rps=0 requests=0 p99s=() errors=0 wrk_s=0 out r n p99 non2xx sockerr
  seconds=${DURATION%s}
  for ((i = 1; i <= k; i++)); do
    out="$WORK/$case-k$k-r$round-i$i.txt"
    r=$(awk '/^Requests\/sec:/ {print $2}' "$out")
    n=$(awk '/ requests in / {print $1}' "$out")
    [[ -n "$r" && -n "$n" ]] || { cat "$out" >&2; die "could not read wrk's output ($out)"; }
    (( n > 0 )) || die "$case k=$k: no request of instance $i completed in $DURATION (lengthen BENCH_DURATION)"
    p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$out")")
    non2xx=$(awk '/Non-2xx or 3xx responses:/ {print $NF}' "$out"); non2xx=${non2xx:-0}
    sockerr=$(awk '/Socket errors:/ {gsub(/,/, ""); print $4 + $6 + $8 + $10}' "$out"); sockerr=${sockerr:-0}
    rps=$(awk -v a="$rps" -v b="$r" 'BEGIN {print a + b}')
    requests=$((requests + n)); errors=$((errors + non2xx + sockerr)); p99s+=("$p99")
    wrk_s=$(awk -v a="$wrk_s" '{print a + $1 + $2}' "$WORK/$case-k$k-r$round-i$i.time")
  done
  local rows=""
  if [[ $case == create ]]; then
    # The outbox commits with the change: as many reservation.created events as reservations, every run.
    rows=$(sql "SELECT (SELECT count(*) FROM reservations) || ' ' || (SELECT count(*) FROM events)")
    [[ ${rows% *} == "${rows#* }" ]] || die "$case k=$k: reservations and events differ: $rows"
    rows="; ${rows% *} reservations, as many events"
  fi
  local p99max; p99max=$(printf '%s\n' "${p99s[@]}" | sort -g | tail -1)
  local svc_us svc_c pg_us pg_c wrk_c machine others
  svc_us=$(us_per $((svc1 - svc0)) "$requests"); svc_c=$(cores $((svc1 - svc0)) "$seconds")
  pg_us=$(us_per "$pg" "$requests"); pg_c=$(cores "$pg" "$seconds")
  wrk_c=$(awk -v w="$wrk_s" -v s="$seconds" 'BEGIN {printf "%.2f", w / s}')
  machine=$(cores $((m1 - m0)) "$seconds")
  others=$(others_of "$machine" "$svc_c" "$pg_c" "$wrk_c")
  printf '%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$case" "$k" "$rps" "$p99max" \
    "$(IFS=/; echo "${p99s[*]}")" "$errors" "$svc_us" "$svc_c" "$pg_us" "$pg_c" "$wrk_c" "$machine" "$others" "$load" \
    >>"$API_RESULTS"
  log "$case k=$k round $round: $(printf '%.0f' "$rps") req/s, p99 $(IFS=/; echo "${p99s[*]}") ms, errors $errors;" \
    "service ${svc_us} µs/req (${svc_c} cores), PG ${pg_us} µs/req (${pg_c} cores), wrk ${wrk_c} cores;" \
    "machine ${machine} of $(nproc) cores busy, ${others} by others, load $load$rows"
}

# Before a case's first run every instance gets PRIME of that case (all at once, not measured), so that k=2 and
# k=3 do not measure the JIT warm-up of instances the smaller k left idle.
prime_api() { # case
  local case=$1 i url=$GET_PATH script=() args=() pids=() p
  [[ $case == create ]] && { url=/api/partners/reservations; script=(-s "$ROOT/bench/create.lua"); }
  for ((i = 1; i <= KMAX; i++)); do
    [[ $case == create ]] && args=(-- "prime-i$i" "$ROOT/bench/create-body.json")
    wrk -t1 -c"$(conns_of "$i" "$KMAX")" -d"$PRIME" -H "$AUTH" "${script[@]}" "http://127.0.0.1:${PORT[api$i]}$url" \
      "${args[@]}" >"$WORK/$case-prime-i$i.txt" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || die "$case: wrk (prime) failed"; done
}

if [[ $SKIP_API != 1 ]]; then
  for ((i = 2; i <= KMAX; i++)); do start_service "api$i" api; done
  for ((i = 2; i <= KMAX; i++)); do wait_ready "api$i"; done
  log "API instances: $(for ((i = 1; i <= KMAX; i++)); do
    printf 'api%s pid %s port %s; ' "$i" "${PID[api$i]}" "${PORT[api$i]}"; done)"
  post_reservation BENCH-GET-1 >/dev/null
  for ((i = 1; i <= KMAX; i++)); do
    status=$(curl -sS -o /dev/null -w '%{http_code}' -H "$AUTH" "http://127.0.0.1:${PORT[api$i]}$GET_PATH")
    [[ $status == 200 ]] || die "api$i answered $status to the get case"
  done
  log "API: cases get and create, each primed ${PRIME} on every instance; per k a ${WARMUP} warm-up, then" \
    "${DURATION}, $CONNECTIONS connections split across the k instances (one wrk -t1 each); $ROUNDS round(s)"
  for case in get create; do
    prime_api "$case"
    for round in $(seq 1 "$ROUNDS"); do
      for k in $(round_ks "$round"); do measure_api "$case" "$k" "$round"; done
    done
  done
  # What the last create run left: on-disk bytes (heap, TOAST, indexes) per reservation and per event row.
  ROW_BYTES=$(sql "SELECT round(pg_total_relation_size('reservations') / greatest(count(*), 1)::numeric) || ' ' ||
    round(pg_total_relation_size('events') / greatest((SELECT count(*) FROM events), 1)::numeric) FROM reservations")
fi

# ---------------------------------------------------------------------------------------------- 2. workers
# round k rate seconds svc_us svc_cores pg_us pg_cores recv_cores machine others load
WORKER_RESULTS="$WORK/workers.tsv"
: >"$WORKER_RESULTS"
if [[ $SKIP_WORKERS != 1 ]]; then
  RPORT=$(free_port)
  RECEIVER="http://127.0.0.1:$RPORT"
  PORT=$RPORT "$BUN" bench/webhooks/receiver.ts >>"$WORK/receiver.log" 2>&1 &
  PID[receiver]=$!
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "$RECEIVER/__stats" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "$RECEIVER/__stats" || die "the receiver did not start"

  log "workers: webhook endpoint (partner API) -> $RECEIVER/hook; $N reservations, one per event"
  curl -fsS -H "$AUTH" -H 'content-type: application/json' -d "{\"url\":\"$RECEIVER/hook\"}" \
    "http://127.0.0.1:${PORT[api1]}/api/partners/webhooks" >"$WORK/endpoint.json" || die "creating the endpoint failed"
  SECRET=$(json_get secret <"$WORK/endpoint.json")
  TEMPLATE_ID=$(post_reservation BENCH-WEBHOOK-1)
  # Every API instance stops: no process but the workers under test touches the database during their runs.
  for ((i = 1; i <= KMAX; i++)); do stop "api$i"; done
  sql "SELECT body::text FROM events WHERE reservation_id = '$TEMPLATE_ID' AND type = 'reservation.created'" \
    >"$WORK/template.json"
  # N reservations, copies of the template with their own id, external_id and check-in token.
  "${PSQL[@]}" -d "$DB" -v tmpl="$TEMPLATE_ID" -v n="$N" >/dev/null <<'SQL'
INSERT INTO reservations
SELECT c.*
FROM reservations r CROSS JOIN generate_series(1, :n) AS g
CROSS JOIN LATERAL jsonb_populate_record(NULL::reservations, to_jsonb(r) || jsonb_build_object(
  'id', gen_random_uuid(), 'external_id', 'BENCH-SCALE-' || g, 'checkin_token', md5('scale-' || g || random()))) AS c
WHERE r.id = :'tmpl';
SQL
  sql "SELECT id FROM reservations WHERE external_id LIKE 'BENCH-SCALE-%' ORDER BY external_id" \
    >"$WORK/reservations.txt"
  [[ $(wc -l <"$WORK/reservations.txt") == "$N" ]] || die "expected $N bench reservations"
  export DATABASE_URL ACCOUNT_ID RESERVATION_ID="$TEMPLATE_ID" ENVIRONMENT=test TEMPLATE_FILE="$WORK/template.json"
  export RESERVATIONS_FILE="$WORK/reservations.txt"

  run_workers() { # k round
    local k=$1 round=$2 i seeded rows pids=()
    "${PSQL[@]}" -d "$DB" -c "TRUNCATE webhook_deliveries, events" >/dev/null
    seeded=$(N=$N BATCH=$BATCH HOLD_UNTIL=2100-01-01T00:00:00Z "$BUN" bench/scale/seed.ts)
    [[ $(json_get deliveries <<<"$seeded") == "$N" ]] ||
      die "seeding wrote $(json_get deliveries <<<"$seeded") deliveries"
    "${PSQL[@]}" -d "$DB" -c "VACUUM ANALYZE webhook_deliveries" -c "VACUUM ANALYZE events" -c "CHECKPOINT" >/dev/null
    for ((i = 1; i <= k; i++)); do start_service "worker$i" worker; done
    for ((i = 1; i <= k; i++)); do wait_ready "worker$i"; pids+=("${PID[worker$i]}"); done
    sleep 1   # LISTEN is set up after the loops start; an idle loop then sleeps until woken
    wait_quiet
    curl -fsS -o /dev/null -H 'content-type: application/json' \
      -d "{\"expected\":$N,\"pid\":${pids[0]},\"db\":\"$DB\",\"secret\":\"$SECRET\"}" "$RECEIVER/__arm"
    local load svc0 svc1 rc0 rc1 m0 m1 t0 t1 pg
    load=$(loadavg)
    pg_snapshot >"$WORK/pg0"
    svc0=$(cpu_ticks "${pids[@]}"); rc0=$(cpu_ticks "${PID[receiver]}"); m0=$(machine_ticks); t0=$(now_ms)
    # Release: the whole backlog falls due at once; NOTIFY (the channel of the deliveries' insert trigger) wakes
    # every idle loop.
    "${PSQL[@]}" -d "$DB" >/dev/null <<'SQL'
BEGIN;
UPDATE webhook_deliveries SET next_attempt_at = now() WHERE status = 'pending';
SELECT pg_notify('webhook_deliveries', '1');
COMMIT;
SQL
    curl -fsS --max-time $((TIMEOUT + 5)) "$RECEIVER/__wait?ms=$((TIMEOUT * 1000))" >"$WORK/w-k$k-r$round.json" ||
      die "workers k=$k: the receiver did not answer"
    svc1=$(cpu_ticks "${pids[@]}"); rc1=$(cpu_ticks "${PID[receiver]}"); m1=$(machine_ticks); t1=$(now_ms)
    pg=$(pg_ticks_since "$WORK/pg0")
    for i in "${pids[@]}"; do kill -0 "$i" 2>/dev/null || die "a worker died in the k=$k run"; done
    [[ $(json_get complete <"$WORK/w-k$k-r$round.json") == true ]] ||
      die "workers k=$k: only $(json_get distinct <"$WORK/w-k$k-r$round.json") of $N deliveries in ${TIMEOUT} s"
    for _ in $(seq 1 100); do
      rows=$(sql "SELECT count(*) FILTER (WHERE status = 'delivered' AND attempts = 1) || ' ' || count(*)
        FROM webhook_deliveries")
      [[ $rows == "$N $N" ]] && break
      sleep 0.1
    done
    [[ $rows == "$N $N" ]] || die "workers k=$k: rows delivered once / all = $rows, expected $N $N"
    sleep 0.5
    curl -fsS "$RECEIVER/__stats" >"$WORK/w-k$k-r$round.json"   # late duplicates would show here
    local distinct requests secs rate
    # On-disk bytes per delivery row (after its two updates, before any vacuum) and per ~1 KB event row.
    DLV_BYTES=$(sql "SELECT round(pg_total_relation_size('webhook_deliveries') / $N.0) || ' ' ||
      round(pg_total_relation_size('events') / $N.0)")
    distinct=$(json_get distinct <"$WORK/w-k$k-r$round.json"); requests=$(json_get requests <"$WORK/w-k$k-r$round.json")
    [[ $distinct == "$N" && $requests == "$N" ]] ||
      die "workers k=$k: the receiver saw $requests requests for $distinct distinct events, expected $N and $N"
    secs=$(json_get seconds <"$WORK/w-k$k-r$round.json")
    rate=$(awk -v n="$N" -v s="$secs" 'BEGIN {printf "%.0f", (n - 1) / s}')
    for ((i = 1; i <= k; i++)); do stop "worker$i"; done
    # CPU over release → completion (a few ms longer than first → last arrival): cores over that window.
    local window svc_us svc_c pg_us pg_c rc_c machine others
    window=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1000}')
    svc_us=$(us_per $((svc1 - svc0)) "$N"); svc_c=$(cores $((svc1 - svc0)) "$window")
    pg_us=$(us_per "$pg" "$N"); pg_c=$(cores "$pg" "$window")
    rc_c=$(cores $((rc1 - rc0)) "$window"); machine=$(cores $((m1 - m0)) "$window")
    others=$(others_of "$machine" "$svc_c" "$pg_c" "$rc_c")
    printf '%s\t%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$k" "$rate" "$secs" "$svc_us" "$svc_c" \
      "$pg_us" "$pg_c" "$rc_c" "$machine" "$others" "$load" >>"$WORKER_RESULTS"
    log "workers k=$k round $round: $rate deliveries/s ($N in ${secs} s, each once); service ${svc_us} µs/dlv" \
      "(${svc_c} cores), PG ${pg_us} µs/dlv (${pg_c} cores), receiver ${rc_c} cores; machine ${machine} of" \
      "$(nproc) cores busy, ${others} by others, load $load"
  }

  log "workers: $N held deliveries per run, released at once when the k workers are ready; $ROUNDS round(s)"
  for round in $(seq 1 "$ROUNDS"); do
    for k in $(round_ks "$round"); do run_workers "$k" "$round"; done
  done
fi

# ---------------------------------------------------------------------------------------------- report
median() {
  sort -g | awk '{v[NR] = $1}
    END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]
         else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# Median of column c over the rows of `file` whose columns match (awk conditions on $2, $3…).
med() { awk -F'\t' "$2 {print \$$3}" "$1" | median; }
amed() { med "$API_RESULTS" "\$2 == \"$1\" && \$3 == $2" "$3"; }  # case k column
wmed() { med "$WORKER_RESULTS" "\$2 == $1" "$2"; }                 # k column
NPROC=$(nproc)
# "×1.00 / ×a / ×b" for the medians in `values` (one per k, in KS order).
ratios_line() {
  awk -v v="$1" 'BEGIN {n = split(v, a, " ")
    for (i = 1; i <= n; i++) printf "%s×%.2f", (i > 1 ? " / " : ""), a[i] / a[1]}'
}
# The first k (after the first) that gives less than GROWTH × the previous k, or "-" if it still grows.
stop_k() { # "values"
  awk -v v="$1" -v ks="${KS[*]}" -v g="$GROWTH" 'BEGIN {n = split(v, a, " "); split(ks, k, " ")
    for (i = 2; i <= n; i++) if (a[i] < g * a[i - 1]) {print k[i]; exit} print "-"}'
}

echo
echo "scale: k instances of the service against one PostgreSQL (working tree ${GIT_REV}${GIT_DIRTY})"
echo "machine: $NPROC CPU ($CPU_MODEL), ${MEM_GB} GB; bun $BUN_VERSION; PostgreSQL $PG_VERSION;" \
  "pool $POOL per instance; $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset}"
echo "the service processes, PostgreSQL and the load generator share the $NPROC CPUs;" \
  "load = 1-min load average at the start of each run"
SCALE=()
WHY=()
declare -A CURVE=()
if [[ $SKIP_API != 1 ]]; then
  for case in get create; do
    echo
    echo "== api $case: wrk ${WARMUP} warm-up then ${DURATION}, $CONNECTIONS connections split across the k instances"
    ROW='| %-6s | %2s | %7s | %-23s | %6s | %9s | %9s | %8s | %8s | %9s | %7s | %6s | %5s |\n'
    printf "$ROW" round k 'req/s' 'p99 ms per instance' errors 'svc µs/rq' 'svc cores' 'PG µs/rq' 'PG cores' \
      'wrk cores' machine others load
    printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' -------- ---- --------- ------------------------- -------- \
      ----------- ----------- ---------- ---------- ----------- --------- -------- -------
    awk -F'\t' -v c="$case" '$2 == c' "$API_RESULTS" |
    while IFS=$'\t' read -r round _ k rps _ p99s err us sc pgus pgc wc m o l; do
      printf "$ROW" "$round" "$k" "$rps" "$p99s" "$err" "$us" "$sc" "$pgus" "$pgc" "$wc" "$m" "$o" "$l"
    done
    vals=""
    for k in "${KS[@]}"; do
      v=$(amed "$case" "$k" 4); vals+="$v "
      printf "$ROW" median "$k" "$v" "max $(amed "$case" "$k" 5)" "" "$(amed "$case" "$k" 8)" "$(amed "$case" "$k" 9)" \
        "$(amed "$case" "$k" 10)" "$(amed "$case" "$k" 11)" "$(amed "$case" "$k" 12)" "$(amed "$case" "$k" 13)" \
        "$(amed "$case" "$k" 14)" ""
    done
    CURVE[api-$case]=$vals
    echo "req/s: sum over the instances; svc: all k service processes; PG: the backends of the bench database;"
    echo "machine: busy cores of $NPROC; others: machine minus service, PG backends and wrk (PostgreSQL's own"
    echo "processes, anything else running)."
    [[ $case == create ]] &&
      echo "on disk (heap, TOAST, indexes): $(
        awk '{printf "%s bytes per reservation row, %s per event row", $1, $2}' <<<"$ROW_BYTES")"
  done
fi
if [[ $SKIP_WORKERS != 1 ]]; then
  echo
  echo "== workers: $N stored deliveries per run (one reservation each), first to last arrival at the receiver"
  ROW='| %-6s | %2s | %12s | %7s | %10s | %9s | %9s | %8s | %10s | %7s | %6s | %5s |\n'
  printf "$ROW" round k 'deliveries/s' seconds 'svc µs/dlv' 'svc cores' 'PG µs/dlv' 'PG cores' 'recv cores' machine \
    others load
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' -------- ---- -------------- --------- ------------ ----------- \
    ----------- ---------- ------------ --------- -------- -------
  while IFS=$'\t' read -r round k rate secs us sc pgus pgc rc m o l; do
    printf "$ROW" "$round" "$k" "$rate" "$secs" "$us" "$sc" "$pgus" "$pgc" "$rc" "$m" "$o" "$l"
  done <"$WORKER_RESULTS"
  vals=""
  for k in "${KS[@]}"; do
    v=$(wmed "$k" 3); vals+="$v "
    printf "$ROW" median "$k" "$v" "$(wmed "$k" 4)" "$(wmed "$k" 5)" "$(wmed "$k" 6)" "$(wmed "$k" 7)" \
      "$(wmed "$k" 8)" "$(wmed "$k" 9)" "$(wmed "$k" 10)" "$(wmed "$k" 11)" ""
  done
  CURVE[workers]=$vals
  echo "svc: all k workers; PG: the backends of the bench database; recv: the receiver; others: machine minus those."
  echo "every run: $N requests, $N distinct event ids at the receiver, $N rows delivered after 1 attempt."
  echo "on disk (heap, TOAST, indexes): $(
    awk '{printf "%s bytes per delivery row, %s per event row", $1, $2}' <<<"$DLV_BYTES")"
fi

# Why a curve stops: the machine's CPUs (busy ≥ 90 % of them at that k, split service / PG / load generator), or
# something else when they are not.
why() { # label file cond-prefix k k-column, then the columns of service, PG, generator, machine and others cores
  local label=$1 file=$2 cond=$3 k=$4 kcol=$5 svc pg gen machine others
  svc=$(med "$file" "$cond \$$kcol == $k" "$6"); pg=$(med "$file" "$cond \$$kcol == $k" "$7")
  gen=$(med "$file" "$cond \$$kcol == $k" "$8"); machine=$(med "$file" "$cond \$$kcol == $k" "$9")
  others=$(med "$file" "$cond \$$kcol == $k" "${10}")
  if awk -v m="$machine" -v n="$NPROC" 'BEGIN {exit !(m >= 0.9 * n)}'; then
    echo "$label at k=$k because the $NPROC CPUs are busy ($machine cores: service $svc, PostgreSQL $pg," \
      "load generator $gen, others $others)"
  else
    echo "$label at k=$k, not because of the CPUs ($machine of $NPROC cores busy: service $svc, PostgreSQL $pg)"
  fi
}
echo
LINE="scale:"
if [[ $SKIP_API != 1 ]]; then
  LINE+=" api get $(ratios_line "${CURVE[api-get]}"), create $(ratios_line "${CURVE[api-create]}");"
  for case in get create; do
    s=$(stop_k "${CURVE[api-$case]}")
    if [[ $s == - ]]; then WHY+=("api $case still grows at k=$KMAX")
    else WHY+=("$(why "api $case stops growing" "$API_RESULTS" "\$2 == \"$case\" &&" "$s" 3 9 11 12 13 14)"); fi
  done
fi
if [[ $SKIP_WORKERS != 1 ]]; then
  LINE+=" workers $(ratios_line "${CURVE[workers]}");"
  s=$(stop_k "${CURVE[workers]}")
  if [[ $s == - ]]; then WHY+=("workers still grow at k=$KMAX")
  else WHY+=("$(why "workers stop growing" "$WORKER_RESULTS" "" "$s" 2 6 8 9 10 11)"); fi
fi
LINE+=" $(IFS=';'; echo "${WHY[*]}" | sed 's/;/; /g')"
echo "$LINE"
echo "(growing = at least ×$GROWTH the previous k; load averages at the start of the runs: $(
  cut -f15 "$API_RESULTS" 2>/dev/null | tr '\n' ' ')$(cut -f12 "$WORKER_RESULTS" 2>/dev/null | tr '\n' ' '))"
[[ $SKIP_API == 1 ]] ||
  echo "check api: no non-2xx, no socket error, as many events as reservations after every create run: met"
[[ $SKIP_WORKERS == 1 ]] || echo "check workers: every event delivered exactly once at every k: met"
echo "VERDICT: PASS (informational: no throughput target; the checks above held in every run)"
