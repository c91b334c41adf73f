#!/usr/bin/env bash
# The signal ceiling of FBO-FedGP's private summaries (fbo_fedgp::private::
# signal_ceiling) on the Table 1 protocol (CEC-2005, D = 10, 50 rounds, 4
# initial points, seed 0's public schedule), as `fedhe simulate --check`
# prints it, for ε, members, support size and release schedule.
# Usage: scan.sh FEDHE_BIN > scan.txt
set -euo pipefail
bin=${1:?the fedhe binary}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
row() { # eps members support extra-settings label
  cat > "$dir/c.toml" <<TOML
name = "ceiling"
functions = ["f1"]
dim = 10
seeds = 1
[algorithm]
members = $2
rounds = 50
initial_points = 4
support_size = $3
[[runs]]
method = "fbo-fedgp"
label = "$5"
recipe = "private"
$4
privacy = { mode = "dp", epsilon = $1, delta = 1e-6, colluders = 1, clip = 2.0 }
TOML
  line=$("$bin" simulate --config "$dir/c.toml" --check | sed -n 2p)
  summaries=$(sed -E 's/.*its ([0-9]+) global summaries of ([0-9]+) values.*/\1 \2/' <<<"$line")
  ratio=$(sed -E 's/.*signal at most ([0-9.]+) times.*\(z = ([0-9.]+)\).*/\1 \2/' <<<"$line")
  need=$(sed -nE 's/.*alone \(([0-9]+) members.*/\1/p' <<<"$line")
  echo "| $1 | $2 | $3 | $5 | $summaries | $ratio | ${need:--} |"
}
echo "| ε | members | \|S\| | schedule | summaries, values | ratio, z | members for 1 |"
echo "|---|---|---|---|---|---|---|"
for eps in 1 4 16 64; do
  for m in 3 5 10 30 100; do
    for s in 16 4; do row "$eps" "$m" "$s" "" "recipe"; done
  done
done
for eps in 1 4 16 64; do
  row "$eps" 10 16 "refit_every = 0" "statistics once"
  row "$eps" 10 16 $'refit_every = 0\nschedule_exponent = 50.0' "statistics once, one summary"
done
