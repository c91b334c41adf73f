#!/bin/bash
# usage: run.sh NAME   (expects NAME.toml; writes out-NAME/results.json, NAME.results.json)
cd /work/exp-table1
s=$(date +%s)
echo "start $(date -u +%FT%TZ) $(uptime)" > out-$1.log
nice -n 19 /work/bin/fedhe-sim simulate --config $1.toml --jobs 1 --channel plain --out out-$1 >> out-$1.log 2>&1 || { echo FAILED >> out-$1.log; exit 1; }
cp out-$1/results.json $1.results.json
echo "end $(date -u +%FT%TZ) took $(( $(date +%s)-s ))s $(uptime)" >> out-$1.log
