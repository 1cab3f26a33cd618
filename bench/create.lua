-- wrk script for `POST /api/partners/reservations` (bench/run.sh): every request creates a new reservation.
--   wrk ... -s bench/create.lua -- PREFIX BODY_FILE
-- BODY_FILE is bench/create-body.json: a test key's reservation on a sandbox property, in COP (no TRM call).
-- Its __EXTERNAL_ID__ becomes PREFIX-t<wrk thread>-<counter>, so every request of a run has a fresh external_id;
-- PREFIX must be unique per run (bench/run.sh passes server, round and phase).
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

local prefix, before, after, counter = "wrk-", nil, nil, 0
function init(args)
  prefix = (args[1] or "wrk") .. "-t" .. tostring(tid) .. "-"
  local file = assert(io.open(args[2] or "bench/create-body.json", "r"))
  local body = file:read("*a"):gsub("%s+$", "")
  file:close()
  local i, j = body:find("__EXTERNAL_ID__", 1, true)
  before, after = body:sub(1, i - 1), body:sub(j + 1)
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil, before .. prefix .. counter .. after)
end
