//! The channel issue's acceptance numbers at the default (secure) parameter set,
//! through the facade crate: 10 members, 2144 values (a |S| = 64 dPITC summary),
//! 3 rounds.

use fedhe::crypto::wire::WireObject;
use fedhe::crypto::*;
use fedhe::ring::Csprng;

#[test]
fn default_set_meets_the_acceptance_numbers() {
    let params = ParameterSet::DEFAULT
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    assert!(params.set().security_bits() >= 128);
    let members: Vec<MemberId> = (1..=10)
        .map(|i| MemberId::new(format!("member-{i:02}")).unwrap())
        .collect();
    let mut channel = HeSum::new(
        params.clone(),
        &CeremonyId::new("acceptance").unwrap(),
        members.clone(),
        1000.0,
        Csprng::from_u128_seed(2026),
    )
    .unwrap();
    let mut inputs = Csprng::from_u128_seed(7);
    let mut max_err = 0f64;
    let mut last = None;
    for round in 1..=3 {
        let vectors: Vec<Vec<f64>> = members
            .iter()
            .map(|_| {
                (0..2144)
                    .map(|_| {
                        ((inputs.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0)
                            * 1000.0
                    })
                    .collect()
            })
            .collect();
        let t = channel
            .run_round(
                RoundId(round),
                members.iter().cloned().zip(vectors.clone()).collect(),
            )
            .unwrap();
        for (j, s) in t.sum.iter().enumerate() {
            max_err = max_err.max((s - vectors.iter().map(|v| v[j]).sum::<f64>()).abs());
        }
        last = Some(t);
    }
    let t = last.unwrap();
    assert!(
        max_err <= 1e-9 && max_err <= t.codec.error_bound(),
        "max error {max_err}"
    );
    assert!(t.contributions[0].1.to_bytes(&params).len() <= 270_000);
    let median = t.median_deviation_without(&members[0]).unwrap();
    assert!(
        median >= 1e6,
        "median deviation without one share: {median}"
    );
}
