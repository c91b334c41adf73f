# Bisect the DP-FTS-DE noise multiplier z so that, accounted at the effective
# multiplier z*sqrt((N-c)/N) (N=10 members, c=1 colluder, as FBO-FedGP's ledger
# accounts at quorum-colluders = 9 unknown shares), T=50 rounds, q=1, delta=1e-6,
# the RDP accountant (dp-accounting's, as FBO-FedGP's PrivacyLedger) gives eps.
import json, subprocess, sys, math
def eps(z, q=1.0, T=50):
    o = subprocess.run(["/work/bin/fedhe-sim","privacy","--q",str(q),"--noise-multiplier",repr(z),
        "--steps",str(T),"--delta","1e-6","--accountant","rdp","--json"],capture_output=True,text=True).stdout
    return json.loads(o)["epsilon"]
f = math.sqrt(9/10)
T = int(sys.argv[1]) if len(sys.argv) > 1 else 50
for target in [1.0, 4.0, 16.0]:
    lo, hi = 0.1, 200.0
    for _ in range(50):
        mid = math.sqrt(lo*hi)
        if eps(mid*f, T=T) > target: lo = mid
        else: hi = mid
    z = hi*1.0001
    z = math.ceil(z*1e4)/1e4
    print(json.dumps({"target": target, "z": z, "z_eff": z*f, "eps_at_z_eff": eps(z*f, T=T), "eps_at_z_no_colluder": eps(z, T=T)}))
