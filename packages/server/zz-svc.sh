rm -rf /tmp/zzd2 && mkdir /tmp/zzd2
LEDGER_DATA_DIR=/tmp/zzd2 PORT=7790 node dist/src/cli.js serve > /tmp/zzo.log 2>&1 &
P=$!
sleep 3; curl -s localhost:7790/api/v1/health >/dev/null; sleep 1.5; echo "before kill: $(wc -l < /tmp/zzo.log)"; kill $P; wait $P; echo "after: $(wc -l < /tmp/zzo.log)"
