#!/usr/bin/env bash
# Report-run benchmark (issue 5, item 7; docs/performance.md, "Report runs"). Invoked by `npm run bench:reports`.
#
# A run of BENCH_N (2000) due live reservations, 3 guests each (2 Colombian, 1 foreign with passport and birth
# date), against the fake MinCIT TRA of the tests (test/support/fakeTra.ts, its own process:
# bench/reports/fake-tra.ts) answering every request after BENCH_DELAY_MS (20) ms. Per round:
#   1. fresh database BENCH_DB; the service (`bun src/main.ts`, ROLE=api so no periodic run interferes,
#      TRA_BASE_URL = the fake, TRA_CONCURRENCY = BENCH_TRA_CONCURRENCY (4), SIRE_MODE=manual);
#   2. through the ops CLI: an account, a live key, the account's write limit raised, a live property with the
#      fake's token, an RNT, SIRE hotel and city codes;
#   3. not timed: BENCH_N registrations through endpoint 7 with the live key (bench/reports/seed.ts),
#      check_in = today in Bogotá, so all are due; then VACUUM ANALYZE and CHECKPOINT;
#   4. timed (bench/reports/run.ts): `bun dist/cli.js … reports run` (what `npm run cli` runs; `src/cli.ts` with
#      BENCH_ENTRY=src), from the spawn to the CLI's exit (the admin
#      RPC answers when the whole run is done); also the fake's first-to-last request span, its exact in-flight
#      profile, the service's peak RSS (VmHWM, reset by clear_refs before the run) and CPU of the service, of
#      PostgreSQL and of the fake;
#   5. checks: the CLI's summary (N reservations, 3N TRA sent and accepted, N SIRE lines), the fake (exactly one
#      /one/ per reservation and one /two/ per companion, no duplicate, every answer 201, every main guest with
#      2 companions), the database (3N accepted tra_submissions with 1 attempt, N reservations with TRA success).
# Ideal = 3N × BENCH_DELAY_MS / BENCH_TRA_CONCURRENCY (30 s). Targets (issue 15): wall ≤ 1.1 × ideal, peak RSS ≤ 250 MB,
# in every round.
#
# Everything stays on this machine (PostgreSQL on 127.0.0.1, every process bound to 127.0.0.1). BENCH_DB is
# dropped and recreated every round, and dropped on exit (also on failure); every process started here is
# stopped on exit.
#
# Knobs (environment): BENCH_N (2000), BENCH_ROUNDS (2), BENCH_DELAY_MS (20), BENCH_TRA_CONCURRENCY (4),
#   BENCH_SEED_CONCURRENCY (8), BENCH_DB (bench_reports), BENCH_PGHOST / BENCH_PGPORT / BENCH_PGUSER
#   (127.0.0.1 / 5432 / postgres), BENCH_QUIET_WAIT (15: seconds to wait before the run for other processes to
#   leave the CPUs), BENCH_TIMEOUT (600: longest run, seconds), BENCH_BASELINE (1: after each round, the same
#   TRA traffic from a plain fetch loop without database, bench/reports/baseline.ts, for information; 0 skips
#   it), BENCH_KEEP=1 (keep the work directory), BENCH_BUN_FLAGS (flags for the service's bun, e.g. `--cpu-prof-md
#   --cpu-prof-dir=DIR` for a profile, `--smol`), BENCH_ENTRY (dist: the production bundles `npm start` and `npm run
#   cli` run, built first by scripts/build.ts; src: `bun src/main.ts` and `bun src/cli.ts`), BENCH_JSC_RAM (268435456: BUN_JSC_forceRAMSize of the
#   service, as `npm start` sets it; "" for Bun's default).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUN="$ROOT/node_modules/.bin/bun"

N=${BENCH_N:-2000}
ROUNDS=${BENCH_ROUNDS:-2}
DELAY_MS=${BENCH_DELAY_MS:-20}
TRA_CONCURRENCY=${BENCH_TRA_CONCURRENCY:-4}
SEED_CONCURRENCY=${BENCH_SEED_CONCURRENCY:-8}
DB=${BENCH_DB:-bench_reports}
PGHOST_=${BENCH_PGHOST:-127.0.0.1}
PGPORT_=${BENCH_PGPORT:-5432}
PGUSER_=${BENCH_PGUSER:-postgres}
QUIET_WAIT=${BENCH_QUIET_WAIT:-15}
TIMEOUT=${BENCH_TIMEOUT:-600}
BASELINE=${BENCH_BASELINE:-1}
ENTRY=${BENCH_ENTRY:-dist}
JSC_RAM=${BENCH_JSC_RAM-268435456}
TARGET_RATIO=1.1
TARGET_RSS_MB=250
case "$ENTRY" in dist) ENTRY_FILE=dist/main.js CLI_FILE=dist/cli.js ;; src) ENTRY_FILE=src/main.ts CLI_FILE=src/cli.ts ;;
  *) echo "BENCH_ENTRY is dist or src" >&2; exit 2 ;; esac

[[ "$DB" =~ ^bench_[a-z0-9_]*$ ]] || { echo "BENCH_DB must be a plain lower-case identifier starting with bench_" >&2; exit 2; }
case "$PGHOST_" in 127.0.0.1|localhost|::1) ;; *) echo "BENCH_PGHOST must be local" >&2; exit 2 ;; esac
for v in N ROUNDS DELAY_MS TRA_CONCURRENCY SEED_CONCURRENCY QUIET_WAIT TIMEOUT; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "BENCH_$v must be a whole number" >&2; exit 2; }
done
(( N > 0 && ROUNDS > 0 && TRA_CONCURRENCY > 0 )) || { echo "BENCH_N, BENCH_ROUNDS, BENCH_TRA_CONCURRENCY must be > 0" >&2; exit 2; }

DATABASE_URL="postgres://${PGUSER_}@${PGHOST_}:${PGPORT_}/${DB}"
export PGOPTIONS="-c client_min_messages=warning"
PSQL=(psql -X -q -v ON_ERROR_STOP=1 -h "$PGHOST_" -p "$PGPORT_" -U "$PGUSER_")

WORK=$(mktemp -d /tmp/bench-reports.XXXXXX)
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
RUN_CONCURRENCY=$(grep -oE 'concurrency: Math\.max\([^)]*\)' src/compliance/ReportRuns.ts | head -1 || true)
CLAIM_BATCH=$(sed -nE 's/^export const CLAIM_BATCH = ([0-9]+).*/\1/p' src/compliance/DueReports.ts)
REQUESTS=$((3 * N))
IDEAL_S=$(awk -v r="$REQUESTS" -v d="$DELAY_MS" -v c="$TRA_CONCURRENCY" 'BEGIN {printf "%.3f", r * d / c / 1000}')
log "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB RAM; bun $BUN_VERSION; PostgreSQL $PG_VERSION"
log "service: working tree at $GIT_REV$GIT_DIRTY, run as $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset};" \
  "run ${RUN_CONCURRENCY:-?}, CLAIM_BATCH ${CLAIM_BATCH:-?}"
if [[ $ENTRY == dist ]]; then
  "$BUN" scripts/build.ts >&2 || die "building the bundle failed"
fi
log "$N reservations × 3 guests = $REQUESTS TRA requests at ${DELAY_MS} ms, TRA_CONCURRENCY $TRA_CONCURRENCY: ideal ${IDEAL_S} s"

# ---------------------------------------------------------------------------------------------- fake TRA
DELAY_MS=$DELAY_MS "$BUN" bench/reports/fake-tra.ts >"$WORK/fake.out" 2>"$WORK/fake.log" &
PID[fake]=$!
for _ in $(seq 1 100); do [[ -s "$WORK/fake.out" ]] && break; sleep 0.1; done
[[ -s "$WORK/fake.out" ]] || { cat "$WORK/fake.log" >&2; die "the fake TRA did not start"; }
TRA_URL=$(json_get url <"$WORK/fake.out")
FAKE_CONTROL=$(json_get control <"$WORK/fake.out")
TRA_TOKEN=$(json_get token <"$WORK/fake.out")
log "fake TRA on $TRA_URL (pid ${PID[fake]}, ${DELAY_MS} ms per answer; control $FAKE_CONTROL)"

# ---------------------------------------------------------------------------------------------- service
ADMIN_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Required with DATABASE_URL (design §9): encrypts the stored TRA tokens and webhook secrets.
SECRETS_KEY=$(head -c 32 /dev/urandom | base64)
start_service() { # port → PID[service]; returns once /readyz answers
  local port=$1 _
  mkdir -p "$WORK/data"
  env DATABASE_URL="$DATABASE_URL" ROLE=api LOG_LEVEL=Warning ADMIN_TOKEN="$ADMIN_TOKEN" SECRETS_KEY="$SECRETS_KEY" PORT="$port" HOST=127.0.0.1 \
    TRA_BASE_URL="$TRA_URL" TRA_CONCURRENCY="$TRA_CONCURRENCY" SIRE_MODE=manual DATA_DIR="$WORK/data" REDIS_URL= \
    PUBLIC_BASE_URL=https://checkin.bench.invalid ${JSC_RAM:+BUN_JSC_forceRAMSize=$JSC_RAM} \
    "$BUN" ${BENCH_BUN_FLAGS:-} "$ENTRY_FILE" >>"$WORK/service.log" 2>&1 &
  PID[service]=$!
  for _ in $(seq 1 300); do
    kill -0 "${PID[service]}" 2>/dev/null || { tail -20 "$WORK/service.log" >&2; die "the service exited during start-up"; }
    curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/readyz" 2>/dev/null && return 0
    sleep 0.1
  done
  tail -20 "$WORK/service.log" >&2
  die "the service is not ready after 30 s"
}

RESULTS="$WORK/results.tsv"
: >"$RESULTS"

round() { # n
  local r=$1 port today checkout account key property seeded out summary
  log "round $r: fresh database $DB"
  "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)" -c "CREATE DATABASE ${DB}" >/dev/null
  port=$(free_port)
  start_service "$port"   # applies the migrations
  cli() { "$BUN" "$CLI_FILE" --url "http://127.0.0.1:$port" --token "$ADMIN_TOKEN" "$@"; }
  account=$(cli accounts create --name "Bench Reports" --email bench-reports@example.com | json_get account_id)
  key=$(cli keys create --account "$account" --env live | json_get api_key)
  cli accounts limits --account "$account" --writes 100000 >/dev/null
  property=$(cli properties create --account "$account" --name "Hotel Bench Reportes" --env live --rnt 98765 \
    --establishment-name "Hotel Bench Reportes SAS" --tra-token "$TRA_TOKEN" --sire-hotel-code 12345 \
    --sire-city-code 11001 | json_get property_id)
  [[ -n "$property" && "$property" != undefined ]] || die "creating the property failed"

  today=$(TZ=America/Bogota date +%F)
  checkout=$(date -d "$today + 2 days" +%F)
  seeded=$(BASE_URL="http://127.0.0.1:$port" API_KEY="$key" PROPERTY_ID="$property" CHECK_IN="$today" \
    CHECK_OUT="$checkout" N="$N" CONCURRENCY="$SEED_CONCURRENCY" PREFIX="BENCH-R$r" \
    "$BUN" bench/reports/seed.ts 2>>"$WORK/seed.log") || { cat "$WORK/seed.log" >&2; die "round $r: seeding failed"; }
  log "round $r: $(json_get created <<<"$seeded") registrations through endpoint 7 in $(json_get seconds <<<"$seeded") s" \
    "($(json_get per_second <<<"$seeded")/s, $SEED_CONCURRENCY at a time; not timed), check_in $today"
  local due
  due=$(sql "SELECT count(*) FROM reservations WHERE environment = 'live' AND tra->>'status' = 'pending'
    AND sire->>'status' = 'pending' AND check_in <= '$today'")
  [[ $due == "$N" ]] || die "round $r: $due reservations due, expected $N"
  [[ $(sql "SELECT count(*) FROM guests WHERE registered_at IS NOT NULL") == "$REQUESTS" ]] || die "round $r: guests missing"
  "${PSQL[@]}" -d "$DB" -c "VACUUM ANALYZE" -c "CHECKPOINT" >/dev/null

  wait_quiet
  log "round $r: timing \`cli reports run\`"
  out="$WORK/r$r.json"
  BUN="$BUN" SERVICE_PID="${PID[service]}" FAKE_PID="${PID[fake]}" FAKE_CONTROL="$FAKE_CONTROL" \
    ADMIN_URL="http://127.0.0.1:$port" ADMIN_TOKEN="$ADMIN_TOKEN" DB="$DB" TIMEOUT_S="$TIMEOUT" CLK_TCK="$CLK_TCK" \
    CLI_FILE="$CLI_FILE" "$BUN" bench/reports/run.ts >"$out" 2>>"$WORK/run.log" || { cat "$WORK/run.log" >&2; die "round $r: the driver failed"; }
  kill -0 "${PID[service]}" 2>/dev/null || { tail -20 "$WORK/service.log" >&2; die "round $r: the service died"; }
  [[ $(json_get cli.exit <"$out") == 0 ]] ||
    die "round $r: the CLI failed: $(json_get cli.stderr <"$out") $(json_get cli.stdout <"$out")"
  summary=$(json_get cli.summary <"$out")
  log "round $r: CLI answered $summary"

  # ----- checks: CLI summary, fake, database
  local problems=()
  [[ $(json_get reservations <<<"$summary") == "$N" ]] || problems+=("summary.reservations $(json_get reservations <<<"$summary")")
  [[ $(json_get tra <<<"$summary") == "{\"sent\":$REQUESTS,\"accepted\":$REQUESTS,\"rejected\":0}" ]] ||
    problems+=("summary.tra $(json_get tra <<<"$summary")")
  [[ $(json_get sire.sent <<<"$summary") == "$N" ]] || problems+=("summary.sire.sent $(json_get sire.sent <<<"$summary")")
  local f
  f=$(json_get fake <"$out")
  [[ $(json_get mains <<<"$f") == "$N" && $(json_get distinct_mains <<<"$f") == "$N" ]] ||
    problems+=("fake: /one/ $(json_get mains <<<"$f") requests, $(json_get distinct_mains <<<"$f") distinct")
  [[ $(json_get companions <<<"$f") == $((2 * N)) && $(json_get distinct_companions <<<"$f") == $((2 * N)) ]] ||
    problems+=("fake: /two/ $(json_get companions <<<"$f") requests, $(json_get distinct_companions <<<"$f") distinct")
  [[ $(json_get statuses <<<"$f") == "{\"201\":$REQUESTS}" ]] || problems+=("fake: statuses $(json_get statuses <<<"$f")")
  [[ $(json_get companions_per_main <<<"$f") == "{\"2\":$N}" ]] || problems+=("fake: companions per main $(json_get companions_per_main <<<"$f")")
  [[ $(json_get companions_with_unknown_padre <<<"$f") == 0 && $(json_get auth_not_valid <<<"$f") == 0 ]] ||
    problems+=("fake: unknown padre or invalid auth")
  local db_rows
  db_rows=$(sql "SELECT (SELECT count(*) FROM tra_submissions WHERE state = 'accepted' AND attempts = 1 AND NOT possible_duplicate)
    || ' ' || (SELECT count(*) FROM tra_submissions) || ' ' || (SELECT count(*) FROM reservations WHERE tra->>'status' = 'success')
    || ' ' || (SELECT count(*) FROM sire_movements WHERE state = 'in_file') || ' ' || (SELECT count(*) FROM reservations WHERE report_lease_until IS NOT NULL)")
  [[ $db_rows == "$REQUESTS $REQUESTS $N $N 0" ]] ||
    problems+=("database: accepted-once/all submissions, TRA success, SIRE in file, leased = $db_rows, expected $REQUESTS $REQUESTS $N $N 0")
  (( ${#problems[@]} == 0 )) || { printf '  %s\n' "${problems[@]}" >&2; die "round $r: the run was not exactly once"; }
  log "round $r: exactly once: $REQUESTS requests ($N /one/, $((2 * N)) /two/), all 201, no duplicate; database agrees"

  # round wall span lead tail mean_inflight max_inflight svc_s svc_cores pg_s pg_cores pgall_cores fake_cores machine others peak_mb hwm_reset
  OUT="$out" IDEAL="$IDEAL_S" R="$r" "$BUN" -e '
    const o = JSON.parse(await Bun.file(process.env.OUT).text()); const p = o.fake.profile
    console.log([process.env.R, o.wall_s.toFixed(2), (p.span_ms / 1000).toFixed(2), o.lead_s.toFixed(2), o.tail_s.toFixed(2),
      (o.wall_s / Number(process.env.IDEAL)).toFixed(3), p.mean_in_flight.toFixed(2), p.max_in_flight,
      o.cpu.service_s, o.cpu.service_cores, o.cpu.pg_backends_s, o.cpu.pg_backends_cores, o.cpu.pg_all_cores, o.cpu.fake_cores,
      o.cpu.machine_cores, o.cpu.others_cores, o.rss.peak_mb, o.rss.hwm_reset, o.rss.before_mb].join("\t"))' >>"$RESULTS"
  stop service
  [[ $BASELINE == 1 ]] && baseline "$r" "$today" "$checkout"
  return 0
}

# The informational baseline: the same TRA traffic from a plain fetch loop, no database (bench/reports/baseline.ts).
baseline() { # round check_in check_out
  local r=$1 out="$WORK/b$1.json" f
  curl -fsS -o /dev/null -X POST "$FAKE_CONTROL/__clear"
  wait_quiet
  TRA_URL="$TRA_URL" TOKEN="$TRA_TOKEN" N="$N" CONCURRENCY="$TRA_CONCURRENCY" CHECK_IN="$2" CHECK_OUT="$3" \
    "$BUN" bench/reports/baseline.ts >"$out" 2>>"$WORK/baseline.log" || { cat "$WORK/baseline.log" >&2; die "round $r: the baseline failed"; }
  f=$(curl -fsS "$FAKE_CONTROL/__stats")
  [[ $(json_get failures <"$out") == 0 && $(json_get mains <<<"$f") == "$N" && $(json_get companions <<<"$f") == $((2 * N)) ]] ||
    die "round $r: baseline: $(json_get failures <"$out") failures, $(json_get mains <<<"$f") /one/, $(json_get companions <<<"$f") /two/"
  STATS="$f" OUT="$out" R="$r" IDEAL="$IDEAL_S" "$BUN" -e '
    const f = JSON.parse(process.env.STATS); const o = JSON.parse(await Bun.file(process.env.OUT).text()); const p = f.profile
    const total = Object.values(p.ms_at_level).reduce((a, b) => a + b, 0)
    console.log([process.env.R, o.seconds.toFixed(2), (p.span_ms / 1000).toFixed(2), (p.span_ms / 1000 / Number(process.env.IDEAL)).toFixed(3),
      p.mean_in_flight.toFixed(2), p.max_in_flight, (100 * (p.ms_at_level["4"] ?? 0) / total).toFixed(1)].join("\t"))' >>"$WORK/baseline.tsv"
  log "round $r: baseline (plain fetch, no database): $(cut -f3 <(tail -1 "$WORK/baseline.tsv")) s span at the fake"
}

for r in $(seq 1 "$ROUNDS"); do round "$r"; done

# ---------------------------------------------------------------------------------------------- report
verdict() { [[ $1 == 1 ]] && echo met || echo MISSED; }
echo
echo "report run: $N due live reservations × 3 guests (1 foreign) = $REQUESTS TRA requests, fake TRA answering in ${DELAY_MS} ms"
echo "service: working tree ${GIT_REV}${GIT_DIRTY} as $ENTRY_FILE, BUN_JSC_forceRAMSize=${JSC_RAM:-unset}; ROLE=api, TRA_CONCURRENCY=$TRA_CONCURRENCY, SIRE_MODE=manual; run ${RUN_CONCURRENCY:-?}, CLAIM_BATCH ${CLAIM_BATCH:-?}"
echo "machine: $(nproc) CPU ($CPU_MODEL), ${MEM_GB} GB; bun $BUN_VERSION; PostgreSQL $PG_VERSION"
echo "ideal = $REQUESTS × ${DELAY_MS} ms / $TRA_CONCURRENCY = ${IDEAL_S} s"
echo
ROW='| %-5s | %7s | %7s | %6s | %6s | %6s | %9s | %6s | %13s | %13s | %7s | %7s | %7s | %6s | %8s | %8s |\n'
printf "$ROW" round 'wall s' 'span s' 'lead s' 'tail s' ratio 'in-flight' 'max' 'service s (c)' 'PG bk s (c)' 'PG all' 'fake c' machine others 'RSS MB' 'peak MB'
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------- --------- --------- -------- -------- -------- ----------- -------- --------------- --------------- --------- --------- --------- -------- ---------- ----------
while IFS=$'\t' read -r r wall span lead tail ratio mean max svc svcc pg pgc pgall fakec machine others peak reset before; do
  printf "$ROW" "$r" "$wall" "$span" "$lead" "$tail" "$ratio" "$mean" "$max" "$svc ($svcc)" "$pg ($pgc)" "$pgall" "$fakec" "$machine" "$others" "$before" "$peak"
done <"$RESULTS"
echo "wall: spawn of \`cli reports run\` → its exit. span: the fake's first request start → last answer. lead: spawn → first"
echo "request; tail: last answer → exit. in-flight: the fake's mean requests in flight over the span (exact, from each"
echo "request's handling interval); max: its maximum. CPU over the wall time: seconds (cores). PG bk: backends of $DB;"
echo "PG all: every PostgreSQL process (cores); others: machine minus service, PostgreSQL and fake (the CLI's own boot included)."
echo "RSS MB: the service's VmRSS just before the run (after boot, seeding, VACUUM). peak MB: its VmHWM over the run ($(awk -F'\t' 'NR == 1 {print ($18 == "true") ? "reset by clear_refs before it" : "NOT reset: includes boot and seeding"}' "$RESULTS"))."
for r in $(seq 1 "$ROUNDS"); do
  OUT="$WORK/r$r.json" R="$r" "$BUN" -e '
    const o = JSON.parse(await Bun.file(process.env.OUT).text()); const p = o.fake.profile
    const total = Object.values(p.ms_at_level).reduce((a, b) => a + b, 0)
    const levels = Object.entries(p.ms_at_level).map(([k, v]) => `${k}: ${(100 * v / total).toFixed(1)}%`).join(", ")
    console.log(`round ${process.env.R}: time at each in-flight level: ${levels}; longest idle ${p.longest_idle_ms.toFixed(0)} ms;` +
      ` handler p50 ${p.handler_ms.p50.toFixed(1)} ms, max ${p.handler_ms.max.toFixed(1)} ms`)
    console.log(`  in-flight per ${p.timeline.bucket_ms} ms: ${p.timeline.mean_in_flight.join(" ")}`)
    console.log(`  service RSS MB per second: ${o.rss.every_250ms.filter((_, i) => i % 4 === 0).join(" ")}`)'
done
if [[ $BASELINE == 1 && -s "$WORK/baseline.tsv" ]]; then
  echo
  echo "baseline (information): the same $REQUESTS requests from a plain fetch loop (bench/reports/baseline.ts): same fake,"
  echo "$TRA_CONCURRENCY in flight at most, $(( TRA_CONCURRENCY * 2 > 4 ? TRA_CONCURRENCY * 2 : 4 )) reservations at a time, /one/ then both /two/; no database."
  while IFS=$'\t' read -r r secs span ratio mean max full; do
    echo "round $r: span ${span} s = ${ratio} × ideal; mean in flight ${mean} (max ${max}), ${full}% of the time at ${TRA_CONCURRENCY}"
  done <"$WORK/baseline.tsv"
fi
WORST_RATIO=$(awk -F'\t' 'BEGIN {m = 0} $6 > m {m = $6} END {print m}' "$RESULTS")
WORST_RSS=$(awk -F'\t' 'BEGIN {m = 0} $17 > m {m = $17} END {print m}' "$RESULTS")
MAX_INFLIGHT=$(awk -F'\t' 'BEGIN {m = 0} $8 > m {m = $8} END {print m}' "$RESULTS")
DISTURBED=$(awk -F'\t' '$16 > 0.25 {printf "r%s (%s cores), ", $1, $16}' "$RESULTS")
[[ -z "$DISTURBED" ]] || echo "NOTE: 'others' above 0.25 cores during ${DISTURBED%, } (the CLI's boot is part of it)"
ratio_ok=$(awk -v r="$WORST_RATIO" -v t="$TARGET_RATIO" 'BEGIN {print (r <= t) ? 1 : 0}')
rss_ok=$(awk -v m="$WORST_RSS" -v t="$TARGET_RSS_MB" 'BEGIN {print (m <= t) ? 1 : 0}')
inflight_ok=$(( MAX_INFLIGHT <= TRA_CONCURRENCY ? 1 : 0 ))
echo
echo "TRA concurrency: max in flight at the fake ${MAX_INFLIGHT} (limit ${TRA_CONCURRENCY}) $(verdict "$inflight_ok")"
echo "target: wall ≤ ${TARGET_RATIO} × ideal in every round: worst $WORST_RATIO × ideal $(verdict "$ratio_ok")"
echo "target: peak RSS ≤ ${TARGET_RSS_MB} MB: worst ${WORST_RSS} MB $(verdict "$rss_ok")"
[[ $ratio_ok == 1 && $rss_ok == 1 && $inflight_ok == 1 ]] && echo "VERDICT: PASS" || echo "VERDICT: FAIL"
