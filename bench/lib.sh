# Shared helpers of the benchmark scripts (bench/run.sh, bench/webhooks.sh, bench/reports.sh). Source it after
# setting WORK, DB, PSQL, BUN, QUIET_WAIT and declaring the associative array PID (processes to stop on exit):
#   declare -A PID=(); CLEANED=0; source "$(dirname "$0")/lib.sh"
# It installs the EXIT/INT/TERM traps: every process in PID is stopped, the bench database dropped, and WORK
# removed (kept with BENCH_KEEP=1 or on failure).

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

stop_pid() {
  local pid=$1
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
stop() { # name
  stop_pid "${PID[$1]:-}"
  unset "PID[$1]"
}

cleanup() {
  local rc=$?
  [[ $CLEANED == 1 ]] && return
  CLEANED=1
  set +e
  local name
  for name in "${!PID[@]}"; do stop_pid "${PID[$name]}"; done
  "${PSQL[@]}" -d postgres -c "DROP DATABASE IF EXISTS ${DB} WITH (FORCE)" >/dev/null 2>&1
  if [[ "${BENCH_KEEP:-0}" == 1 || $rc -ne 0 ]]; then
    log "work directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


CLK_TCK=$(getconf CLK_TCK)
free_port() { "$BUN" -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)'; }
# json_get path: one field of a JSON document (stdin), dotted path; objects are printed as JSON.
json_get() { FIELD="$1" "$BUN" -e 'const v = JSON.parse(await Bun.stdin.text()); const r = process.env.FIELD.split(".").reduce((o, k) => o?.[k], v); console.log(typeof r === "object" ? JSON.stringify(r) : r)'; }
# CPU ticks (user + system, all threads) of the given pids.
cpu_ticks() {
  local total=0 pid f
  for pid in "$@"; do
    [[ -r /proc/$pid/stat ]] || continue
    # After "pid (comm) " the fields start at field 3 (state): utime is field 14, stime field 15.
    read -r -a f < <(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
    total=$((total + f[11] + f[12]))
  done
  echo "$total"
}
machine_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat; }
wait_quiet() {
  local deadline=$((SECONDS + QUIET_WAIT)) t0 t1 busy
  while :; do
    t0=$(machine_ticks); sleep 1; t1=$(machine_ticks)
    busy=$(awk -v d=$((t1 - t0)) -v hz="$CLK_TCK" 'BEGIN {printf "%.2f", d / hz}')
    awk -v b="$busy" 'BEGIN {exit !(b < 0.25)}' && return 0
    if (( SECONDS >= deadline )); then
      log "WARNING: other processes keep ${busy} cores busy; measuring anyway"
      return 0
    fi
  done
}
now_ms() { date +%s%3N; }
sql() { "${PSQL[@]}" -d "$DB" -Atc "$1"; }

# require_tools tool...: the commands the bench needs, the bun binary, and a reachable PostgreSQL.
require_tools() {
  local tool
  for tool in "$@"; do command -v "$tool" >/dev/null || die "$tool is required"; done
  [[ -x "$BUN" ]] || die "$BUN missing: run npm ci first"
  "${PSQL[@]}" -d postgres -c "SELECT 1" >/dev/null || die "PostgreSQL is not reachable at ${PGHOST_}:${PGPORT_}"
}

