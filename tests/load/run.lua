-- wrk script: POST one hello-world py3 job per request and print the
-- percentiles the benchmark table needs (wrk's own --latency lacks p95).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = os.getenv("GOBOXD_LOAD_BODY") or
  '{"language":"py3","source":"print(\\"hello\\")\\n","tests":[{"stdin":"","expected_stdout":"hello\\n"}]}'

local bad = 0

response = function(status, headers, body)
  if status ~= 200 or not string.find(body, '"status":"accepted"', 1, true) then
    bad = bad + 1
  end
end

done = function(summary, latency, requests)
  local s = summary.duration / 1e6
  io.write(string.format(
    "RESULT requests=%d seconds=%.1f rps=%.1f p50_ms=%.1f p95_ms=%.1f p99_ms=%.1f max_ms=%.1f errors=%d non_accepted=%d\n",
    summary.requests, s, summary.requests / s,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write +
      summary.errors.status + summary.errors.timeout, bad))
end
