-- Two-leg MRTR flow on `ask_color`, repeated: leg 1 gets an InputRequiredResult, leg 2 answers
-- its elicitation (color "blue") with the echoed requestState and must return "blue".
-- Run with one connection per thread (-c == -t) so each thread's legs strictly alternate.
--   WRK_META     the JSON `_meta` object sent with every request
--   WRK_HEADERS  "Name: value" lines (Mcp-Name: ask_color, ...)
-- Prints "flows N bad M duration_us D" at the end.
wrk.method = "POST"
for line in string.gmatch(os.getenv("WRK_HEADERS") or "", "[^\n]+") do
  local name, value = string.match(line, "^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end
local meta = os.getenv("WRK_META")
local leg1 = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
  .. '{"name":"ask_color","arguments":{},"_meta":' .. meta .. '}}'

local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  flows, bad = 0, 0
  key, state = nil, nil
end

function request()
  if key == nil then
    return wrk.format(nil, nil, nil, leg1)
  end
  local body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_color",'
    .. '"arguments":{},"inputResponses":{"' .. key
    .. '":{"action":"accept","content":{"color":"blue"}}},'
  if state then
    body = body .. '"requestState":"' .. state .. '",'
  end
  return wrk.format(nil, nil, nil, body .. '"_meta":' .. meta .. '}}')
end

-- The text of the JSON string that starts right after `pattern`, escapes kept as they are (it
-- goes back into a JSON body unchanged); nil if there is none. A state may hold escaped quotes.
local function string_after(body, pattern)
  local _, open = string.find(body, pattern)
  if open == nil then return nil end
  local i = open + 1
  while true do
    local at = string.find(body, '["\\]', i)
    if at == nil then return nil end
    if string.sub(body, at, at) == '"' then return string.sub(body, open + 1, at - 1) end
    i = at + 2 -- a backslash and the character it escapes
  end
end

function response(status, headers, body)
  if key == nil then
    key = string.match(body, '"inputRequests"%s*:%s*{%s*"([^"]+)"')
    state = string_after(body, '"requestState"%s*:%s*"')
    if status ~= 200 or key == nil then bad = bad + 1 end
  else
    if status == 200 and string.find(body, '"resultType"%s*:%s*"complete"')
        and string.find(body, '"blue"') then
      flows = flows + 1
    else
      bad = bad + 1
    end
    key, state = nil, nil
  end
end

function done(summary, latency, requests)
  local f, b = 0, 0
  for _, thread in ipairs(threads) do
    f = f + (thread:get("flows") or 0)
    b = b + (thread:get("bad") or 0)
  end
  io.write(string.format("flows %d bad %d duration_us %d\n", f, b, summary.duration))
end
