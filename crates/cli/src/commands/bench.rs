//! `fedhe bench channel --json`: fedhe against `fhe` 0.1's multiparty BFV
//! (`mbfv`) at the same N and modulus, interleaved in one process; `fedhe
//! bench service --json`: a round of a real server ([`super::bench_service`]).

use crate::error::CliError;
use clap::{Args, Subcommand};

/// Benchmark subcommands.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Time the channel's operations, fedhe vs fhe (needs the `peers` feature).
    Channel(ChannelBenchArgs),
    /// Time one round of a real server process with N members, per phase.
    Service(super::bench_service::ServiceBenchArgs),
}

/// Arguments of `fedhe bench channel`.
#[derive(Args, Debug)]
pub struct ChannelBenchArgs {
    /// Repetitions per operation (medians are reported).
    #[arg(long, default_value_t = 15)]
    reps: usize,
    /// Members in the decryption (shares combined).
    #[arg(long, default_value_t = 10)]
    members: usize,
    /// Print JSON (the only output format).
    #[arg(long)]
    json: bool,
}

/// Runs a benchmark subcommand.
pub fn run(cmd: BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Channel(args) => channel(args),
        BenchCommand::Service(args) => super::bench_service::run(args),
    }
}

#[cfg(not(feature = "peers"))]
fn channel(_args: ChannelBenchArgs) -> Result<(), CliError> {
    Err(CliError::Usage(
        "this fedhe was built without the `peers` feature; run \
         `cargo run --release -p fedhe-cli --features peers -- bench channel --json`"
            .into(),
    ))
}

#[cfg(feature = "peers")]
fn channel(args: ChannelBenchArgs) -> Result<(), CliError> {
    peers::channel(args)
}

#[cfg(feature = "peers")]
mod peers {
    use super::ChannelBenchArgs;
    use crate::commands::{median_ms, member_names, say, uniform_values};
    use crate::error::CliError;
    use fedhe_crypto::decryption::combine;
    use fedhe_crypto::*;
    use fedhe_ring::Csprng;
    use fhe::bfv;
    use fhe::mbfv::{self, AggregateIter};
    use fhe_traits::{FheDecoder, FheEncoder, FheEncrypter};
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    const OPS: [&str; 5] = ["key_share", "encrypt", "add", "decryption_share", "combine"];

    fn timed<T>(times: &mut Vec<Duration>, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        out
    }

    fn op<'m>(
        m: &'m mut BTreeMap<&'static str, Vec<Duration>>,
        name: &'static str,
    ) -> &'m mut Vec<Duration> {
        m.entry(name).or_default()
    }

    fn fhe_err(e: impl std::fmt::Display) -> CliError {
        CliError::Usage(format!("fhe: {e}"))
    }

    pub fn channel(args: ChannelBenchArgs) -> Result<(), CliError> {
        let _ = args.json;
        let n = args.members.max(1);
        let params = ParameterSet::DEFAULT.validate(InsecurePolicy::Refuse)?;
        let members = member_names(n)?;
        let mut rng = Csprng::from_entropy();
        let crs = CommonRandomPoly::for_ceremony(&params, &CeremonyId::new("bench")?, &members)?;
        let secrets: Vec<SecretKeyShare> = members
            .iter()
            .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
            .collect();
        let pk_shares = secrets
            .iter()
            .map(|s| PublicKeyShare::generate(&params, s, &crs, &mut rng))
            .collect::<Result<Vec<_>, _>>()?;
        let pk = CollectivePublicKey::aggregate(&crs, &members, &pk_shares)?;
        let codec = FixedPointCodec::new(&params, n, 1000.0)?;
        let values = uniform_values(&mut rng, params.degree(), 1000.0);
        // The t-of-n ceremony at the default threshold; the first T members decrypt.
        let ceremony = CeremonyId::new("bench")?;
        let access = AccessStructure::new(&members, AccessStructure::default_threshold(n))?;
        let tsks = Thresholdizer::in_process(
            &params, &ceremony, &access, &secrets, &crs, &pk_shares, &mut rng,
        )?
        .secrets;
        let active: Vec<MemberId> = members[..access.threshold()].to_vec();
        let mut threshold_share_times = Vec::new();

        // fhe at the same N and the same two primes; plaintext modulus 65537.
        let fpar: Arc<bfv::BfvParameters> = bfv::BfvParametersBuilder::new()
            .set_degree(params.degree())
            .set_plaintext_modulus(65537)
            .set_moduli(params.set().moduli)
            .build_arc()
            .map_err(fhe_err)?;
        let mut frng = rand09::rng();
        let fcrp = mbfv::CommonRandomPoly::new(&fpar, &mut frng).map_err(fhe_err)?;
        let fsks: Vec<bfv::SecretKey> = (0..n)
            .map(|_| bfv::SecretKey::random(&fpar, &mut frng))
            .collect();
        let fpk: bfv::PublicKey = fsks
            .iter()
            .map(|s| mbfv::PublicKeyShare::new(s, fcrp.clone(), &mut frng))
            .collect::<Result<Vec<_>, _>>()
            .map_err(fhe_err)?
            .into_iter()
            .aggregate()
            .map_err(fhe_err)?;
        let fvalues: Vec<u64> = (0..params.degree() as u64).map(|i| i % 65537).collect();

        let mut ours: BTreeMap<&'static str, Vec<Duration>> =
            OPS.iter().map(|o| (*o, Vec::new())).collect();
        let mut theirs = ours.clone();
        for _ in 0..args.reps.max(1) {
            // fedhe
            timed(op(&mut ours, "key_share"), || {
                let sk = SecretKeyShare::generate(&params, members[0].clone(), &mut rng);
                PublicKeyShare::generate(&params, &sk, &crs, &mut rng)
            })?;
            let vector = timed(op(&mut ours, "encrypt"), || {
                EncryptedVector::encrypt(&params, &pk, &codec, &values, &mut rng)
            })?;
            let mut sum = vector.clone();
            timed(op(&mut ours, "add"), || sum.add_assign(&vector))?;
            let mut shares = Vec::with_capacity(n);
            for sk in &secrets {
                shares.push(timed(op(&mut ours, "decryption_share"), || {
                    DecryptionShare::generate(&params, sk, &vector, &mut rng)
                })?);
            }
            let nn_sum = timed(op(&mut ours, "combine"), || {
                codec
                    .decode(&combine(&members, &vector, &shares)?, values.len())
                    .map_err(ChannelError::from)
            })?;
            let mut tshares = Vec::with_capacity(active.len());
            for tsk in &tsks[..active.len()] {
                tshares.push(timed(&mut threshold_share_times, || {
                    ThresholdDecryptionShare::generate(&params, tsk, &active, &vector, &mut rng)
                })?);
            }
            let t_sum = codec
                .decode(
                    &fedhe_crypto::threshold::combine_threshold(&access, &vector, &tshares)?,
                    values.len(),
                )
                .map_err(ChannelError::from)?;
            if t_sum != nn_sum {
                return Err(CliError::Usage(
                    "threshold decryption differs from n-of-n".into(),
                ));
            }

            // fhe
            timed(op(&mut theirs, "key_share"), || {
                let sk = bfv::SecretKey::random(&fpar, &mut frng);
                mbfv::PublicKeyShare::new(&sk, fcrp.clone(), &mut frng)
            })
            .map_err(fhe_err)?;
            let fct = timed(op(&mut theirs, "encrypt"), || {
                let pt = bfv::Plaintext::try_encode(&fvalues, bfv::Encoding::poly(), &fpar)?;
                fpk.try_encrypt(&pt, &mut frng)
            })
            .map_err(fhe_err)?;
            let mut fsum = fct.clone();
            timed(op(&mut theirs, "add"), || fsum += &fct);
            let fct = Arc::new(fct);
            let mut fshares = Vec::with_capacity(n);
            for sk in &fsks {
                fshares.push(
                    timed(op(&mut theirs, "decryption_share"), || {
                        mbfv::DecryptionShare::new(sk, &fct, &mut frng)
                    })
                    .map_err(fhe_err)?,
                );
            }
            let decoded = timed(op(&mut theirs, "combine"), || {
                let pt: bfv::Plaintext = fshares.into_iter().aggregate()?;
                Vec::<u64>::try_decode(&pt, bfv::Encoding::poly())
            })
            .map_err(fhe_err)?;
            if decoded != fvalues {
                return Err(CliError::Usage("fhe decrypted a wrong value".into()));
            }
        }
        let med = |m: &BTreeMap<&'static str, Vec<Duration>>| -> BTreeMap<String, f64> {
            m.iter()
                .map(|(k, v)| (k.to_string(), median_ms(v)))
                .collect()
        };
        let (a, b) = (med(&ours), med(&theirs));
        let ratio: BTreeMap<String, f64> = a.iter().map(|(k, v)| (k.clone(), v / b[k])).collect();
        let t_ms = median_ms(&threshold_share_times);
        let report = json!({
            "fedhe": a,
            "fhe": b,
            "ratio": ratio,
            "threshold": {
                "threshold": access.threshold(),
                "decryption_share": t_ms,
                "ratio_to_n_of_n_share": t_ms / a["decryption_share"],
            },
            "reps": args.reps.max(1),
            "members": n,
            "note": format!(
                "medians in ms over {} interleaved repetitions at N = {} with the same two 62-bit primes \
                 (fedhe n8192-q124; fhe 0.1.1 mbfv, plaintext modulus 65537). fedhe floods each decryption \
                 share with uniform noise in [-2^b, 2^b), b = {} at {} members; fhe 0.1 adds no noise \
                 flooding. threshold: the t-of-n share (Lagrange-weighted Shamir share, same flooding) \
                 of T = {} members, timed in the same repetitions. encrypt includes \
                 encoding {} values; combine includes decoding.",
                args.reps.max(1), params.degree(), params.set().flooding_bits_for(n), n,
                access.threshold(), params.degree()
            ),
        });
        say!("{report}")?;
        Ok(())
    }
}
