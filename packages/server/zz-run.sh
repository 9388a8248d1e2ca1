#!/bin/bash
# usage: zz-run.sh PROFDIR [env...]
set -e
PROF=$1; shift
rm -rf $PROF /tmp/zzdata; mkdir -p $PROF /tmp/zzdata
env "$@" LEDGER_DATA_DIR=/tmp/zzdata PORT=7788 LOG_LEVEL=info LEDGER_BOOTSTRAP_EMAIL=b@example.com LEDGER_BOOTSTRAP_PASSWORD='bench password 123' node --cpu-prof --cpu-prof-dir $PROF dist/src/cli.js serve > /tmp/zzsvc.log 2>&1 &
PID=$!
for i in $(seq 1 50); do curl -s localhost:7788/api/v1/health >/dev/null && break; sleep 0.2; done
TOKEN=$(curl -s -XPOST localhost:7788/api/v1/auth/login -H 'content-type: application/json' -d '{"email":"b@example.com","password":"bench password 123"}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')
KEY=$(curl -s -XPOST localhost:7788/api/v1/auth/api_keys -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{"name":"b","rate_limit_per_minute":1000000}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).key')
BODY='{"event_type":"tool.called","source":"bench-agent","trace_id":"7d444840-9dc0-11d1-b245-5ffdce74fad2","data":{"tool":"search","query":"qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq","k":5,"user":"u-1","ok":true}}'
npx autocannon -j -c 64 -d 8 -m POST -H "x-api-key=$KEY" -H 'content-type=application/json' -b "$BODY" http://localhost:7788/api/v1/logs > /tmp/zzac.json 2>/dev/null
kill -TERM $PID; wait $PID || true
node -pe 'const r=JSON.parse(require("fs").readFileSync("/tmp/zzac.json"));`requests ${r.requests.total} non2xx ${r.non2xx} p99 ${r.latency.p99}`'
