-- One fixed JSON-RPC POST, repeated. Body and headers come from the environment:
--   WRK_BODY     the request body
--   WRK_HEADERS  "Name: value" lines
--   WRK_RESULT   the resultType every answer must have (default "complete")
-- Counts responses that are not HTTP 200 with that resultType and no error ("bad_responses").
wrk.method = "POST"
wrk.body = os.getenv("WRK_BODY")
for line in string.gmatch(os.getenv("WRK_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end

local result_type = '"resultType"%s*:%s*"' .. (os.getenv("WRK_RESULT") or "complete") .. '"'
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  bad = 0
end

function response(status, headers, body)
  if status ~= 200
    or not string.find(body, result_type)
    or string.find(body, '"isError"%s*:%s*true') then
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do
    total = total + (thread:get("bad") or 0)
  end
  io.write(string.format("bad_responses %d\n", total))
end
