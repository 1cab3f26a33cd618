#!/usr/bin/env bash
# Webhook delivery benchmark (issue 4, item 6, and issue 17, item 2; docs/performance.md, "Webhook deliveries"
# and "Batched deliveries"). Invoked by `npm run bench:webhooks`.
#
# 1. Throughput: BENCH_N stored deliveries (reservation.created events, ~1 KB bodies, written by the statement
#    of Outbox.enqueue in batches, BENCH_PER_RESERVATION consecutive events per reservation over
#    ceil(N / BENCH_PER_RESERVATION) reservations, so that the ordering rule does not send them one at a time)
#    to one active endpoint pointing at a local receiver (bench/webhooks/
#    receiver.ts, its own process). The service (`dist/main.js`, ROLE=worker) is started on them and timed
#    from the first to the last arrival at the receiver (its boot is excluded); the baseline
#    (bench/webhooks/baseline.ts: plain fetch, same concurrency, same headers and HMAC, no database while
#    sending) POSTs the same stored bodies. BENCH_ROUNDS rounds, order reversed every other round, fresh rows
#    every round. Every run must deliver every event exactly once (receiver: N distinct ids, N requests;
#    service: N rows delivered with 1 attempt each). Ratio = service / baseline deliveries/s, median of rounds.
#    Informational third sender, last in every round on freshly seeded rows (BENCH_SQL_BASELINE=0 skips it):
#    bench/webhooks/baseline-sql.ts, the same plain fetch loop with the service's claim and record SQL.
# 2. Latency: one ROLE=worker service (LISTEN/NOTIFY on), bench/webhooks/driver.ts commits events at a steady
#    BENCH_RATE/s for BENCH_LAT_DURATION s, one transaction each; latency = first arrival − commit.
# 3. A slow receiver beside (BENCH_SLOW=0 skips it): a second endpoint of the account, on a receiver answering
#    after BENCH_SLOW_DELAY_MS (5000), is switched on. The throughput run (N events, now N deliveries to each
#    endpoint) is timed at the fast receiver until it saw all N; the latency run is repeated. The fast
#    endpoint's figures with the slow one beside are compared with those without it.
# Verdict lines: throughput >= 5,000 deliveries/s (service, median of the rounds); p99 <= 50 ms at BENCH_RATE;
# the slow receiver does not starve the fast one (fast rate with it >= 80 % of without, p99 with it <= 50 ms).
#
# Everything stays on this machine (PostgreSQL on 127.0.0.1, every process bound to 127.0.0.1). The database
# BENCH_DB is dropped and recreated, and dropped again on exit (also on failure); every process started here
# is stopped on exit.
#
# Knobs (environment): BENCH_N (20000), BENCH_BATCH (500 events per seed statement), BENCH_ROUNDS (3),
#   BENCH_RATE (200), BENCH_LAT_DURATION (30), BENCH_LAT_WARMUP (3), BENCH_DB (bench_webhooks),
#   BENCH_PGHOST / BENCH_PGPORT / BENCH_PGUSER (127.0.0.1 / 5432 / postgres), BENCH_QUIET_WAIT (15: seconds to
#   wait, per run, for other processes to leave the CPUs), BENCH_TIMEOUT (240: longest run, seconds),
#   BENCH_SQL_BASELINE (1), BENCH_SKIP_LATENCY=1, BENCH_SKIP_THROUGHPUT=1, BENCH_KEEP=1 (keep the work
#   directory with the logs), BENCH_BUN_FLAGS (flags of the services' bun, e.g. `--cpu-prof-md --cpu-prof-dir=DIR`),
#   BENCH_PER_RESERVATION (10), BENCH_SLOW (1), BENCH_SLOW_DELAY_MS (5000), BENCH_ENTRY (dist: the production
#   bundle `npm start` runs, built first by scripts/build.ts; src: `bun src/main.ts`), BENCH_JSC_RAM (268435456:
#   BUN_JSC_forceRAMSize of the service, as `npm start` sets it; "" for Bun's default).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUN="$ROOT/node_modules/.bin/bun"

N=${BENCH_N:-20000}
BATCH=${BENCH_BATCH:-500}
ROUNDS=${BENCH_ROUNDS:-3}
RATE=${BENCH_RATE:-200}
LAT_DURATION=${BENCH_LAT_DURATION:-30}
LAT_WARMUP=${BENCH_LAT_WARMUP:-3}
DB=${BENCH_DB:-bench_webhooks}
PGHOST_=${BENCH_PGHOST:-127.0.0.1}
PGPORT_=${BENCH_PGPORT:-5432}
PGUSER_=${BENCH_PGUSER:-postgres}
QUIET_WAIT=${BENCH_QUIET_WAIT:-15}
TIMEOUT=${BENCH_TIMEOUT:-240}
SQL_BASELINE=${BENCH_SQL_BASELINE:-1}
ENTRY=${BENCH_ENTRY:-dist}
JSC_RAM=${BENCH_JSC_RAM-268435456}
case "$ENTRY" in dist) ENTRY_FILE=dist/main.js ;; src) ENTRY_FILE=src/main.ts ;;
  *) echo "BENCH_ENTRY is dist or src" >&2; exit 2 ;; esac
PER_RES=${BENCH_PER_RESERVATION:-10}
SLOW=${BENCH_SLOW:-1}
SLOW_DELAY_MS=${BENCH_SLOW_DELAY_MS:-5000}
TARGET_RATIO=0.5        # issue 4's, for information since issue 17
TARGET_RATE=5000        # issue 17, item 2: deliveries/s with one worker
TARGET_P99_MS=50        # issue 17, item 2: commit -> first attempt at BENCH_RATE
TARGET_SLOW_SHARE=0.8   # the fast endpoint keeps this share of its rate with a slow receiver beside

[[ "$DB" =~ ^bench_[a-z0-9_]*$ ]] || { echo "BENCH_DB must be a plain lower-case identifier starting with bench_" >&2; exit 2; }
case "$PGHOST_" in 127.0.0.1|localhost|::1) ;; *) echo "BENCH_PGHOST must be local" >&2; exit 2 ;; esac
for v in N BATCH ROUNDS RATE LAT_DURATION LAT_WARMUP QUIET_WAIT TIMEOUT PER_RES SLOW_DELAY_MS; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "BENCH_$v must be a whole number" >&2; exit 2; }
done

DATABASE_URL="postgres://${PGUSER_}@${PGHOST_}:${PGPORT_}/${DB}"
export PGOPTIONS="-c client_min_messages=warning"
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_")
# The service's concurrency toward one endpoint (the bench's), read from the source so that the baselines always
# use the same: the per-endpoint bound, within the instance's total.
PER_ENDPOINT=$(sed -nE 's/^export const ENDPOINT_CONCURRENCY = ([0-9]+).*/\1/p' src/webhooks/DeliveryLoop.ts)
TOTAL=$(sed -nE 's/^export const DELIVERY_CONCURRENCY = ([0-9]+).*/\1/p' src/webhooks/DeliveryLoop.ts)
[[ -n "$PER_ENDPOINT" && -n "$TOTAL" ]] ||
  { echo "ENDPOINT_CONCURRENCY or DELIVERY_CONCURRENCY not found in src/webhooks/DeliveryLoop.ts" >&2; exit 2; }
CONCURRENCY=$(( PER_ENDPOINT < TOTAL ? PER_ENDPOINT : TOTAL ))

WORK=$(mktemp -d /tmp/bench-webhooks.XXXXXX)
declare -A PID=()
CLEANED=0

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_tools psql curl

BUN_VERSION=$("$BUN" --version)
PG_VERSION=$("${PSQL[@]}" -d postgres -Atc "SHOW server_version")
CPU_MODEL=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM_GB=$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)
GIT_REV=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_DIRTY=$(git status --porcelain -- src 2>/dev/null | grep -q . && echo " + uncommitted changes in src" || true)
log "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB RAM; bun $BUN_VERSION; PostgreSQL $PG_VERSION"
log "service: working tree at $GIT_REV$GIT_DIRTY as $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset};" \
  "ENDPOINT_CONCURRENCY $PER_ENDPOINT, DELIVERY_CONCURRENCY $TOTAL"
if [[ $ENTRY == dist ]]; then
  "$BUN" scripts/build.ts >&2 || die "building the bundle failed"
fi

# ---------------------------------------------------------------------------------------------- processes
ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Required with DATABASE_URL (design §9): encrypts the stored TRA tokens and webhook secrets.
SECRETS_KEY=$(head -c 32 /dev/urandom | base64)
start_service() { # name role port → PID[name]; returns once /readyz answers
  local name=$1 role=$2 port=$3
  mkdir -p "$WORK/$name.data"
  env DATABASE_URL="$DATABASE_URL" ROLE="$role" LOG_LEVEL=Warning ADMIN_TOKEN="$ADMIN_TOKEN" SECRETS_KEY="$SECRETS_KEY" PORT="$port" HOST=127.0.0.1 \
    WEBHOOK_ALLOW_PRIVATE_URLS=true DATA_DIR="$WORK/$name.data" REDIS_URL= PUBLIC_BASE_URL=https://checkin.bench.invalid \
    ${JSC_RAM:+BUN_JSC_forceRAMSize=$JSC_RAM} "$BUN" ${BENCH_BUN_FLAGS:-} "$ENTRY_FILE" >>"$WORK/$name.log" 2>&1 &
  PID[$name]=$!
}
wait_ready() { # name port
  local _
  for _ in $(seq 1 300); do
    kill -0 "${PID[$1]}" 2>/dev/null || { tail -20 "$WORK/$1.log" >&2; die "$1 exited during start-up"; }
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$2/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  tail -20 "$WORK/$1.log" >&2
  die "$1 not ready after 30 s"
}

RPORT=$(free_port)
RECEIVER="http://127.0.0.1:$RPORT"
PORT=$RPORT "$BUN" bench/webhooks/receiver.ts >>"$WORK/receiver.log" 2>&1 &
PID[receiver]=$!
for _ in $(seq 1 100); do curl -fsS -o /dev/null "$RECEIVER/__stats" 2>/dev/null && break; sleep 0.1; done
curl -fsS -o /dev/null "$RECEIVER/__stats" || die "the receiver did not start"
log "receiver on $RECEIVER (pid ${PID[receiver]})"
if [[ $SLOW == 1 ]]; then
  SPORT=$(free_port)
  SLOW_RECEIVER="http://127.0.0.1:$SPORT"
  PORT=$SPORT DELAY_MS=$SLOW_DELAY_MS "$BUN" bench/webhooks/receiver.ts >>"$WORK/slow-receiver.log" 2>&1 &
  PID[slow_receiver]=$!
  for _ in $(seq 1 100); do curl -fsS -o /dev/null "$SLOW_RECEIVER/__stats" 2>/dev/null && break; sleep 0.1; done
  curl -fsS -o /dev/null "$SLOW_RECEIVER/__stats" || die "the slow receiver did not start"
  log "slow receiver on $SLOW_RECEIVER (answers after $SLOW_DELAY_MS ms; pid ${PID[slow_receiver]})"
fi
arm() { # expected pid db
  curl -fsS -o /dev/null -H 'content-type: application/json' \
    -d "{\"expected\":$1,\"pid\":$2,\"db\":\"$3\",\"secret\":\"$SECRET\"}" "$RECEIVER/__arm"
}

# ---------------------------------------------------------------------------------------------- setup
log "creating database $DB"
"${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)" -c "CREATE DATABASE ${DB}" >/dev/null
APORT=$(free_port)
start_service api api "$APORT"   # applies the migrations
wait_ready api "$APORT"
cli() { "$BUN" src/cli.ts --url "http://127.0.0.1:$APORT" --token "$ADMIN_TOKEN" "$@"; }
log "bench account, sandbox key, property (ops CLI), webhook endpoint and one reservation (partner API)"
ACCOUNT_ID=$(cli accounts create --name "Bench Webhooks" --email bench-webhooks@example.com | json_get account_id)
API_KEY=$(cli sandbox create --account "$ACCOUNT_ID" | json_get api_key)
cli properties create --account "$ACCOUNT_ID" --name "Hotel Bench 1" --env test --external-id PMS-BENCH-1 >/dev/null
AUTH="Authorization: Bearer $API_KEY"
curl -fsS -H "$AUTH" -H 'content-type: application/json' -d "{\"url\":\"$RECEIVER/hook\"}" \
  "http://127.0.0.1:$APORT/api/partners/webhooks" >"$WORK/endpoint.json" || die "creating the webhook endpoint failed"
SECRET=$(json_get secret <"$WORK/endpoint.json")
ENDPOINT_ID=$(json_get id <"$WORK/endpoint.json")
sed "s/__EXTERNAL_ID__/BENCH-WEBHOOK-1/" bench/create-body.json >"$WORK/reservation.json"
status=$(curl -sS -o "$WORK/reservation.out" -w '%{http_code}' -H "$AUTH" -H 'content-type: application/json' \
  --data-binary "@$WORK/reservation.json" "http://127.0.0.1:$APORT/api/partners/reservations")
[[ $status == 201 ]] || { cat "$WORK/reservation.out" >&2; die "creating the reservation answered $status"; }
stop api
RESERVATION_ID=$(json_get reservation_id <"$WORK/reservation.out")
# The reservation.created event the service wrote is the template of every bench event.
sql "SELECT body::text FROM events WHERE reservation_id = '$RESERVATION_ID' AND type = 'reservation.created'" >"$WORK/template.json"
BODY_BYTES=$(wc -c <"$WORK/template.json"); BODY_BYTES=$((BODY_BYTES - 1))
[[ $(sql "SELECT count(*) FROM webhook_deliveries") == 1 ]] || die "expected the reservation's one pending delivery"
if [[ $SLOW == 1 ]]; then
  # The slow endpoint is made through the API like the other, then switched off until its scenario.
  start_service api api "$APORT"
  wait_ready api "$APORT"
  curl -fsS -H "$AUTH" -H 'content-type: application/json' -d "{\"url\":\"$SLOW_RECEIVER/hook\"}" \
    "http://127.0.0.1:$APORT/api/partners/webhooks" >"$WORK/slow-endpoint.json" || die "creating the slow endpoint failed"
  stop api
  SLOW_ENDPOINT_ID=$(json_get id <"$WORK/slow-endpoint.json")
  sql "UPDATE webhook_endpoints SET is_active = false WHERE id = '$SLOW_ENDPOINT_ID'" >/dev/null
fi
# Copies of the reservation (new id and external id, no check-in token), for events to spread over.
RESERVATIONS=$(( (N + PER_RES - 1) / PER_RES ))
COLS=$(sql "SELECT string_agg(quote_ident(column_name), ',' ORDER BY ordinal_position) FROM information_schema.columns
  WHERE table_name = 'reservations' AND column_name NOT IN ('id', 'external_id', 'checkin_token')")
sql "INSERT INTO reservations (id, external_id, checkin_token, $COLS)
  SELECT gen_random_uuid(), r.external_id || '-' || g, NULL, $(sed 's/\([^,]*\)/r.\1/g' <<<"$COLS")
  FROM reservations r, generate_series(2, $RESERVATIONS) g WHERE r.id = '$RESERVATION_ID'" >/dev/null
sql "SELECT id FROM reservations WHERE account_id = '$ACCOUNT_ID' ORDER BY id" >"$WORK/reservations.txt"
[[ $(wc -l <"$WORK/reservations.txt") == "$RESERVATIONS" ]] || die "expected $RESERVATIONS reservations"
ENDPOINTS=$(sql "SELECT count(*) FROM webhook_endpoints WHERE is_active")
log "endpoint $ENDPOINT_ID -> $RECEIVER/hook ($ENDPOINTS active); reservation.created body $BODY_BYTES bytes"
log "$RESERVATIONS reservations, $PER_RES consecutive events on each"
export DATABASE_URL ACCOUNT_ID RESERVATION_ID ENVIRONMENT=test TEMPLATE_FILE="$WORK/template.json" \
  RESERVATIONS_FILE="$WORK/reservations.txt" PER_RESERVATION="$PER_RES"

reset_tables() {
  "${PSQL[@]}" -d "$DB" -c "TRUNCATE webhook_deliveries, events" >/dev/null
}
settle_tables() {
  "${PSQL[@]}" -d "$DB" -c "VACUUM ANALYZE webhook_deliveries" -c "VACUUM ANALYZE events" -c "CHECKPOINT" >/dev/null
}

# ---------------------------------------------------------------------------------------------- throughput
RESULTS="$WORK/throughput.tsv"
: >"$RESULTS"

# Reads the receiver's stats into globals and checks exactly-once delivery at the receiver.
record() { # round name stats-file extra(boot s)  extra(peak MB)
  local round=$1 name=$2 f=$3 boot=$4 hwm=$5
  local line
  line=$(STATS="$f" HZ="$CLK_TCK" NAME="$name" "$BUN" -e '
    const s = JSON.parse(await Bun.file(process.env.STATS).text()); const hz = Number(process.env.HZ)
    const c = s.cpu ?? {}
    const n = c.sampled_deliveries || 1, secs = c.seconds || 1
    const us = (t) => (t / hz / n * 1e6).toFixed(0), cores = (t) => (t / hz / secs).toFixed(2)
    const others = Math.max(0, (c.machine_ticks - c.proc_ticks - c.pg_ticks) / hz / secs - c.receiver_s / secs)
    console.log([s.distinct, s.requests, s.seconds.toFixed(2), ((s.distinct - 1) / s.seconds).toFixed(0),
      us(c.proc_ticks), cores(c.proc_ticks), c.pg_backends > 0 ? us(c.pg_ticks) : "-", c.pg_backends,
      (c.receiver_s / n * 1e6).toFixed(0), cores(c.machine_ticks), others.toFixed(2),
      s.signature_ok, s.header_names.join(","), s.user_agent].join("\t"))')
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$line" "$boot" "$hwm" "$(json_get sockets <"$f")" >>"$RESULTS"
  local distinct requests rate us cores pgus
  IFS=$'\t' read -r distinct requests _ rate us cores pgus _ <<<"$line"
  [[ $distinct == "$N" && $requests == "$N" ]] ||
    die "round $round $name: the receiver saw $requests requests for $distinct distinct events, expected $N and $N"
  log "round $round $name: $rate deliveries/s; ${us} µs CPU/delivery (${cores} cores), PG ${pgus} µs/delivery;" \
    "$requests requests, $distinct distinct event ids"
}

# Every row (of the fast endpoint) recorded as delivered after exactly one attempt (the last UPDATEs may still be
# running).
check_rows() { # label
  local rows
  for _ in $(seq 1 100); do
    rows=$(sql "SELECT count(*) FILTER (WHERE status = 'delivered' AND attempts = 1) || ' ' || count(*)
      FROM webhook_deliveries WHERE endpoint_id = '$ENDPOINT_ID'")
    [[ $rows == "$N $N" ]] && return 0
    sleep 0.1
  done
  die "$1: rows delivered once / all = $rows, expected $N $N"
}
seed() { # round [expected deliveries]
  local seeded expected=${2:-$N}
  reset_tables
  seeded=$(N=$N BATCH=$BATCH "$BUN" bench/webhooks/seed.ts)
  [[ $(json_get deliveries <<<"$seeded") == "$expected" ]] ||
    die "seeding wrote $(json_get deliveries <<<"$seeded") deliveries, expected $expected"
  settle_tables
  log "round $1: seeded $N events and their deliveries in $(json_get seconds <<<"$seeded" | cut -c1-5) s" \
    "($BATCH per Outbox.enqueue statement; body $(json_get body_bytes <<<"$seeded") bytes)"
}

run_service() { # round
  local round=$1 port t0 boot hwm
  port=$(free_port)
  wait_quiet
  t0=$(now_ms)
  start_service worker worker "$port"
  arm "$N" "${PID[worker]}" "$DB"
  curl -fsS --max-time $((TIMEOUT + 5)) "$RECEIVER/__wait?ms=$((TIMEOUT * 1000))" >"$WORK/r$round-service.json" ||
    die "round $round service: the receiver did not answer"
  kill -0 "${PID[worker]}" 2>/dev/null || { tail -20 "$WORK/worker.log" >&2; die "the worker died in round $round"; }
  [[ $(json_get complete <"$WORK/r$round-service.json") == true ]] ||
    die "round $round service: only $(json_get distinct <"$WORK/r$round-service.json") of $N deliveries in ${TIMEOUT} s"
  check_rows "round $round service"
  sleep 0.5
  curl -fsS "$RECEIVER/__stats" >"$WORK/r$round-service.json"   # late duplicates would show here
  boot=$(awk -v f="$(json_get first_arrival <"$WORK/r$round-service.json")" -v t="$t0" 'BEGIN {printf "%.2f", (f - t) / 1000}')
  hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[worker]}/status")
  stop worker
  record "$round" service "$WORK/r$round-service.json" "$boot" "$hwm"
}

# The service on N events with the slow endpoint switched on (N deliveries to each endpoint), timed at the fast
# receiver until it saw all N; the slow receiver's requests, connections and concurrency are noted.
run_service_slow() {
  local port t0 hwm
  port=$(free_port)
  wait_quiet
  t0=$(now_ms)
  start_service worker worker "$port"
  arm "$N" "${PID[worker]}" "$DB"
  curl -fsS -o /dev/null -H 'content-type: application/json' -d '{"expected":0}' "$SLOW_RECEIVER/__arm"
  curl -fsS --max-time $((TIMEOUT + 5)) "$RECEIVER/__wait?ms=$((TIMEOUT * 1000))" >"$WORK/slow-service.json" ||
    die "slow scenario: the receiver did not answer"
  [[ $(json_get complete <"$WORK/slow-service.json") == true ]] ||
    die "slow scenario: only $(json_get distinct <"$WORK/slow-service.json") of $N fast deliveries in ${TIMEOUT} s"
  check_rows "slow scenario, fast endpoint"
  sleep 0.5
  curl -fsS "$RECEIVER/__stats" >"$WORK/slow-service.json"
  curl -fsS "$SLOW_RECEIVER/__stats" >"$WORK/slow-receiver.json"
  hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[worker]}/status")
  stop worker
  record slow "service+slow" "$WORK/slow-service.json" \
    "$(awk -v f="$(json_get first_arrival <"$WORK/slow-service.json")" -v t="$t0" 'BEGIN {printf "%.2f", (f - t) / 1000}')" "$hwm"
  log "slow receiver meanwhile: $(json_get requests <"$WORK/slow-receiver.json") requests," \
    "at most $(json_get max_concurrent <"$WORK/slow-receiver.json") at once, $(json_get sockets <"$WORK/slow-receiver.json") connections"
}

run_baseline() { # round
  local round=$1 out="$WORK/r$round-baseline.out" hwm
  wait_quiet
  CONCURRENCY=$CONCURRENCY "$BUN" bench/webhooks/baseline.ts >"$out" 2>>"$WORK/baseline.log" &
  PID[baseline]=$!
  arm "$N" "${PID[baseline]}" "$DB"
  curl -fsS --max-time $((TIMEOUT + 5)) "$RECEIVER/__wait?ms=$((TIMEOUT * 1000))" >"$WORK/r$round-baseline.json" ||
    die "round $round baseline: the receiver did not answer"
  hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[baseline]}/status" 2>/dev/null || echo -)
  wait "${PID[baseline]}" || { cat "$WORK/baseline.log" >&2; die "the baseline failed in round $round"; }
  unset "PID[baseline]"
  [[ $(json_get failures <"$out") == 0 ]] || die "round $round baseline: $(json_get failures <"$out") failed POSTs"
  sleep 0.2
  curl -fsS "$RECEIVER/__stats" >"$WORK/r$round-baseline.json"
  record "$round" baseline "$WORK/r$round-baseline.json" - "$hwm"
}

run_baseline_sql() { # round
  local round=$1 out="$WORK/r$round-baseline-sql.out" hwm
  wait_quiet
  CONCURRENCY=$CONCURRENCY DB_POOL_SIZE=10 "$BUN" bench/webhooks/baseline-sql.ts >"$out" 2>>"$WORK/baseline-sql.log" &
  PID[baseline_sql]=$!
  arm "$N" "${PID[baseline_sql]}" "$DB"
  curl -fsS --max-time $((TIMEOUT + 5)) "$RECEIVER/__wait?ms=$((TIMEOUT * 1000))" >"$WORK/r$round-baseline-sql.json" ||
    die "round $round baseline-sql: the receiver did not answer"
  hwm=$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[baseline_sql]}/status" 2>/dev/null || echo -)
  wait "${PID[baseline_sql]}" || { cat "$WORK/baseline-sql.log" >&2; die "baseline-sql failed in round $round"; }
  unset "PID[baseline_sql]"
  [[ $(json_get failures <"$out") == 0 ]] || die "round $round baseline-sql: $(json_get failures <"$out") failed POSTs"
  check_rows "round $round baseline-sql"
  sleep 0.2
  curl -fsS "$RECEIVER/__stats" >"$WORK/r$round-baseline-sql.json"
  record "$round" baseline-sql "$WORK/r$round-baseline-sql.json" - "$hwm"
}

SENDERS=(service baseline)
[[ $SQL_BASELINE == 1 ]] && SENDERS+=(baseline-sql)
if [[ "${BENCH_SKIP_THROUGHPUT:-0}" != 1 ]]; then
  log "throughput: $N deliveries per run, $ROUNDS rounds, service then baseline (reversed every other round)," \
    "concurrency $CONCURRENCY each$([[ $SQL_BASELINE == 1 ]] && echo "; then baseline-sql on freshly seeded rows")"
  for round in $(seq 1 "$ROUNDS"); do
    seed "$round"
    if (( round % 2 == 1 )); then run_service "$round"; run_baseline "$round"
    else run_baseline "$round"; run_service "$round"; fi
    if [[ $SQL_BASELINE == 1 ]]; then seed "$round"; run_baseline_sql "$round"; fi
  done
  if [[ $SLOW == 1 ]]; then
    sql "UPDATE webhook_endpoints SET is_active = true WHERE id = '$SLOW_ENDPOINT_ID'" >/dev/null
    seed slow $((2 * N))
    run_service_slow
    sql "UPDATE webhook_endpoints SET is_active = false WHERE id = '$SLOW_ENDPOINT_ID'" >/dev/null
  fi
fi

# ---------------------------------------------------------------------------------------------- latency
run_latency() { # label (files latency-<label>.json); sets LAT_CPU_<label>, LAT_HWM_<label>, LAT_ROWS_<label>
  local label=$1 port total rows
  reset_tables
  settle_tables
  port=$(free_port)
  wait_quiet
  start_service worker worker "$port"
  wait_ready worker "$port"
  sleep 1   # LISTEN is set up after the loops start
  total=$(( (LAT_WARMUP + LAT_DURATION) * RATE ))
  arm "$total" "${PID[worker]}" "$DB"
  [[ $label == slow ]] && curl -fsS -o /dev/null -H 'content-type: application/json' -d '{"expected":0}' "$SLOW_RECEIVER/__arm"
  log "latency ($label): $RATE events/s for ${LAT_DURATION} s (after ${LAT_WARMUP} s of warm-up), one transaction each"
  # One event per reservation in turn (PER_RESERVATION=1): a reservation gets an event every RESERVATIONS / RATE
  # seconds, not ten in 50 ms, whose ordering would make each wait for the one before it to be recorded.
  PER_RESERVATION=1 RECEIVER=$RECEIVER RATE=$RATE DURATION=$LAT_DURATION WARMUP=$LAT_WARMUP "$BUN" bench/webhooks/driver.ts \
    >"$WORK/latency-$label.json" 2>>"$WORK/driver.log" || { cat "$WORK/driver.log" >&2; die "the latency driver failed"; }
  curl -fsS "$RECEIVER/__stats" >"$WORK/latency-$label-receiver.json"
  printf -v "LAT_HWM_$label" '%s' "$(awk '/^VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/${PID[worker]}/status")"
  kill -0 "${PID[worker]}" 2>/dev/null || die "the worker died during the latency run"
  for _ in $(seq 1 50); do
    rows=$(sql "SELECT count(*) FILTER (WHERE status = 'delivered' AND attempts = 1) || ' ' || count(*)
      FROM webhook_deliveries WHERE endpoint_id = '$ENDPOINT_ID'")
    [[ ${rows% *} == "${rows#* }" ]] && break
    sleep 0.1
  done
  [[ $label == slow ]] && curl -fsS "$SLOW_RECEIVER/__stats" >"$WORK/latency-slow-receiver-slow.json"
  stop worker
  printf -v "LAT_ROWS_$label" '%s' "$rows"
  printf -v "LAT_CPU_$label" '%s' "$(STATS="$WORK/latency-$label-receiver.json" HZ="$CLK_TCK" "$BUN" -e '
    const s = JSON.parse(await Bun.file(process.env.STATS).text()); const c = s.cpu ?? {}; const hz = Number(process.env.HZ)
    const n = c.sampled_deliveries || 1
    console.log(`${(c.proc_ticks / hz / n * 1e6).toFixed(0)} µs CPU/delivery (${(c.proc_ticks / hz / c.seconds).toFixed(2)} cores),` +
      ` PG ${(c.pg_ticks / hz / n * 1e6).toFixed(0)} µs/delivery (incl. the inserts of the driver);` +
      ` machine ${(c.machine_ticks / hz / c.seconds).toFixed(2)} cores busy; receiver: ${s.requests} requests, ${s.distinct} distinct,` +
      ` ${s.sockets} connections`)')"
}

if [[ "${BENCH_SKIP_LATENCY:-0}" != 1 ]]; then
  run_latency plain
  if [[ $SLOW == 1 ]]; then
    sql "UPDATE webhook_endpoints SET is_active = true WHERE id = '$SLOW_ENDPOINT_ID'" >/dev/null
    run_latency slow
    sql "UPDATE webhook_endpoints SET is_active = false WHERE id = '$SLOW_ENDPOINT_ID'" >/dev/null
  fi
fi

# ---------------------------------------------------------------------------------------------- report
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -F'\t' -v n="$1" -v c="$2" '$2 == n {print $c}' "$RESULTS"; }
verdict() { [[ $1 == 1 ]] && echo met || echo MISSED; }

echo
echo "webhook deliveries: service (working tree ${GIT_REV}${GIT_DIRTY}) vs baseline (plain fetch, same concurrency)"
echo "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB; bun $BUN_VERSION; PostgreSQL $PG_VERSION"
echo "one active endpoint -> local receiver (own process, empty 200); reservation.created body ${BODY_BYTES} bytes; concurrency ${CONCURRENCY}"
ALL_OK=1
SUMMARY=()
VERDICTS=()
if [[ "${BENCH_SKIP_THROUGHPUT:-0}" != 1 ]]; then
  echo
  echo "== throughput: $N stored deliveries per run, timed first to last arrival at the receiver; $ROUNDS rounds"
  ROW='| %-6s | %-12s | %12s | %8s | %11s | %9s | %15s | %11s | %8s | %7s | %6s | %8s | %7s |\n'
  printf "$ROW" round sender 'deliveries/s' 'seconds' 'CPU µs/dlv' 'cores' 'PG µs/dlv (bk)' 'recv µs/dlv' machine others 'boot s' 'peak MB' 'sig ok'
  printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' -------- -------------- -------------- ---------- ------------- ----------- ----------------- ------------- ---------- --------- -------- ---------- ---------
  while IFS=$'\t' read -r round name distinct requests secs rate us cores pgus bk recv machine others sig headers ua boot hwm _; do
    printf "$ROW" "$round" "$name" "$rate" "$secs" "$us" "$cores" "$pgus ($bk)" "$recv" "$machine" "$others" "$boot" "$hwm" "$sig"
  done <"$RESULTS"
  for name in "${SENDERS[@]}"; do
    printf "$ROW" median "$name" "$(col "$name" 6 | median)" "$(col "$name" 5 | median)" "$(col "$name" 7 | median)" \
      "$(col "$name" 8 | median)" "$(col "$name" 9 | median)" "$(col "$name" 11 | median)" "$(col "$name" 12 | median)" \
      "$(col "$name" 13 | median)" "" "$(col "$name" 18 | sort -g | tail -1)" ""
  done
  echo "CPU µs/dlv, cores: the sender process (all threads) between the first and the last arrival. PG: its backends (count)."
  echo "recv: the receiver's CPU. machine: busy cores of $(nproc); others: machine minus sender, its backends and the receiver."
  echo "peak MB: VmHWM of the process over its life (the service's includes its boot). Every run: N requests, N distinct ids."
  HEADERS_S=$(col service 15 | sort -u); HEADERS_B=$(awk -F'\t' '$2 != "service" {print $15}' "$RESULTS" | sort -u)
  UA=$(awk -F'\t' '{print $16}' "$RESULTS" | sort -u)
  [[ "$HEADERS_S" == "$HEADERS_B" && $(wc -l <<<"$UA") == 1 ]] &&
    echo "same request headers from every sender: $HEADERS_S (user-agent $UA)" ||
    echo "WARNING: request headers differ: service [$HEADERS_S] others [$HEADERS_B] user agents [$UA]"
  RATIOS=$(awk -F'\t' '$2 == "service" {s[$1] = $6} $2 == "baseline" {b[$1] = $6}
    END {for (r in s) if (b[r] > 0) printf "%s %.3f\n", r, s[r] / b[r]}' "$RESULTS" | sort -n)
  RATIO=$(awk '{print $2}' <<<"$RATIOS" | median)
  RATIO=$(awk -v r="$RATIO" 'BEGIN {printf "%.3f", r}')
  printf 'service / baseline deliveries/s: %s-> median %s\n' "$(awk '{printf "r%s %.3f, ", $1, $2}' <<<"$RATIOS")" "$RATIO"
  if [[ $SQL_BASELINE == 1 ]]; then
    for pair in "service baseline-sql" "baseline-sql baseline"; do
      read -r a b <<<"$pair"
      r=$(awk -F'\t' -v a="$a" -v b="$b" '$2 == a {s[$1] = $6} $2 == b {t[$1] = $6}
        END {for (r in s) if (t[r] > 0) printf "%.3f\n", s[r] / t[r]}' "$RESULTS" | median)
      printf '(information) %s / %s deliveries/s: median %.3f\n' "$a" "$b" "$r"
    done
  fi
  DISTURBED=$(awk -F'\t' '$13 > 0.25 {printf "r%s %s (%s cores), ", $1, $2, $13}' "$RESULTS")
  [[ -z "$DISTURBED" ]] || echo "WARNING: other processes used the CPUs during ${DISTURBED%, }"
  ratio_ok=$(awk -v r="$RATIO" -v t="$TARGET_RATIO" 'BEGIN {print (r >= t) ? 1 : 0}')
  echo "(information, issue 4's target) deliveries/s ratio >= ${TARGET_RATIO}: ${RATIO} $(verdict "$ratio_ok")"
  SERVICE_RATE=$(col service 6 | median)
  SOCKETS=$(col service 19 | sort -g | tail -1)
  echo "connections the service opened to the receiver per run: $(col service 19 | tr '\n' ' ')(keep-alive: at most $CONCURRENCY expected)"
  rate_ok=$(awk -v r="$SERVICE_RATE" -v t="$TARGET_RATE" 'BEGIN {print (r >= t) ? 1 : 0}')
  VERDICTS+=("target: throughput >= ${TARGET_RATE} deliveries/s with one worker: ${SERVICE_RATE}/s (median of $ROUNDS) $(verdict "$rate_ok")")
  SUMMARY+=("throughput: service ${SERVICE_RATE}/s, baseline $(col baseline 6 | median)/s, ratio ${RATIO}; at most ${SOCKETS} connections")
  [[ $rate_ok == 1 ]] || ALL_OK=0
  if [[ $SLOW == 1 ]]; then
    SLOW_RATE=$(col service+slow 6)
    SHARE=$(awk -v a="$SLOW_RATE" -v b="$SERVICE_RATE" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}')
    echo "slow receiver beside (answers after ${SLOW_DELAY_MS} ms): the fast endpoint got ${SLOW_RATE}/s, ${SHARE} of ${SERVICE_RATE}/s" \
      "without it; the slow one got $(json_get requests <"$WORK/slow-receiver.json") requests," \
      "at most $(json_get max_concurrent <"$WORK/slow-receiver.json") at once (ENDPOINT_CONCURRENCY $PER_ENDPOINT)"
    share_ok=$(awk -v r="$SHARE" -v t="$TARGET_SLOW_SHARE" 'BEGIN {print (r >= t) ? 1 : 0}')
    conc_ok=$(awk -v m="$(json_get max_concurrent <"$WORK/slow-receiver.json")" -v k="$PER_ENDPOINT" 'BEGIN {print (m <= k) ? 1 : 0}')
    SUMMARY+=("with a slow receiver beside: fast endpoint ${SLOW_RATE}/s (${SHARE} of without)")
  fi
fi
if [[ "${BENCH_SKIP_LATENCY:-0}" != 1 ]]; then
  for label in plain $([[ $SLOW == 1 ]] && echo slow); do
    f="$WORK/latency-$label.json"
    echo
    echo "== latency ($label$([[ $label == slow ]] && echo ": the slow endpoint on too, figures of the fast one")):" \
      "commit -> first arrival at the receiver, one ROLE=worker service, LISTEN/NOTIFY"
    cat "$f"
    cpu="LAT_CPU_$label"; hwm="LAT_HWM_$label"; rows="LAT_ROWS_$label"
    echo "service during it: ${!cpu}; peak RSS ${!hwm} MB; fast endpoint's rows delivered once / all: ${!rows}"
    [[ $label == slow ]] && echo "slow receiver meanwhile: $(json_get requests <"$WORK/latency-slow-receiver-slow.json") requests," \
      "at most $(json_get max_concurrent <"$WORK/latency-slow-receiver-slow.json") at once"
    P50=$(json_get latency_ms.p50 <"$f"); P99=$(json_get latency_ms.p99 <"$f")
    ACH=$(json_get achieved_rate <"$f"); MISSING=$(json_get missing <"$f")
    ok=$(awk -v p="$P99" -v t="$TARGET_P99_MS" -v m="$MISSING" 'BEGIN {print (p <= t && m == 0) ? 1 : 0}')
    SUMMARY+=("latency ($label) at ${ACH}/s: p50 ${P50} ms, p95 $(json_get latency_ms.p95 <"$f") ms, p99 ${P99} ms, ${MISSING} missing")
    if [[ $label == plain ]]; then
      VERDICTS+=("target: commit -> first attempt p99 <= ${TARGET_P99_MS} ms at ${RATE}/s: ${P99} ms (achieved ${ACH}/s, ${MISSING} missing) $(verdict "$ok")")
      [[ $ok == 1 ]] || ALL_OK=0
    else
      SLOW_P99=$P99; slow_p99_ok=$ok
    fi
  done
fi
if [[ $SLOW == 1 ]]; then
  parts=(); slow_ok=1
  if [[ -n "${SHARE:-}" ]]; then
    parts+=("fast endpoint ${SLOW_RATE}/s beside it = ${SHARE} of ${SERVICE_RATE}/s without (>= ${TARGET_SLOW_SHARE})")
    parts+=("slow one at most $(json_get max_concurrent <"$WORK/slow-receiver.json") requests at once (<= ${PER_ENDPOINT})")
    [[ $share_ok == 1 && $conc_ok == 1 ]] || slow_ok=0
  fi
  if [[ -n "${SLOW_P99:-}" ]]; then
    parts+=("fast endpoint's p99 at ${RATE}/s beside it ${SLOW_P99} ms (<= ${TARGET_P99_MS})")
    [[ $slow_p99_ok == 1 ]] || slow_ok=0
  fi
  if (( ${#parts[@]} > 0 )); then
    VERDICTS+=("target: a receiver answering in $((SLOW_DELAY_MS / 1000)) s does not starve a fast one: $(IFS=';'; echo "${parts[*]}" | sed 's/;/; /g') $(verdict "$slow_ok")")
    [[ $slow_ok == 1 ]] || ALL_OK=0
  fi
fi

echo
printf '%s\n' "${SUMMARY[@]}"
printf '%s\n' "${VERDICTS[@]}"
[[ $ALL_OK == 1 ]] && echo "VERDICT: PASS" || echo "VERDICT: FAIL"
