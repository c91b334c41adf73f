//! Attack (a) on FBO-FedGP's releases as the product computes them
//! (`fedhe_algorithms::fbo_fedgp::Client`, `fbo_fedgp::private`): the
//! noise-free summary (PITC blocks) and the private release's format without
//! noise (each member's summary clipped as the product clips it) give the
//! others' points away; the private release at ε = 4 per member (δ = 1e-6)
//! spent on one summary, attacked the same way, does not. A per-point
//! release clipped hard shows what the attack's unknown-scale option is for.
//!
//! The attacker is member 0 of 3 (10-D, 4 points each, |S| = 16, CEC-2005 F1
//! values, the signed-log warping standardised): it subtracts its own
//! contribution (for the private release, its own noisy share, which it drew)
//! and attacks the others' part.

use fedhe_algorithms::fbo_fedgp::private::{
    plan, summary_clip, STATISTICS_BOUND, STATISTICS_SENSITIVITY,
};
use fedhe_algorithms::fbo_fedgp::{
    Client, FboFedGpParams, Hyperparameters, OutputScaling, OutputWarping, Server, SummaryScaling,
};
use fedhe_algorithms::privacy::{PrivateReleases, ValidDp};
use fedhe_algorithms::AlgorithmError;
use fedhe_attacks::{
    difference_attack, reconstruction_attack, subspace_attack, AttackOptions, BlockScales,
    ConsecutiveView, DifferenceOptions, Federation, MemberView, MomentRelease, NoiseScales,
    ReconstructionOptions, Recovery, RunView, ValueMethod,
};
use fedhe_crypto::{MemberId, PlainSum};
use fedhe_dp::distributed::ReleaseShape;
use fedhe_dp::ClipParams;
use fedhe_gp::sparse::{Dpitc, LocalSummary};
use fedhe_gp::{KernelParams, Matern52};
use fedhe_tasks::Task;
use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

/// The shape of a federation under attack.
#[derive(Debug, Clone, Copy)]
struct Shape {
    dim: usize,
    members: usize,
    points: usize,
    support: usize,
}

/// The demo's: 3 members in 10-D, 4 points each, |S| = 16.
const DEMO: Shape = Shape {
    dim: 10,
    members: 3,
    points: 4,
    support: 16,
};
/// The demo's cap on one member's evaluations: 4 initial points + 15 rounds.
const N_MAX: f64 = 19.0;

struct Setup {
    shape: Shape,
    task: Task,
    clients: Vec<Client>,
    scaling: OutputScaling,
    hyper: Hyperparameters,
    model: Dpitc<Matern52>,
    channel: SummaryScaling,
    support: DMatrix<f64>,
}

fn setup() -> Setup {
    setup_for(DEMO)
}

/// The federation of `shape` (the synthetic points of seed 7, CEC-2005 F1
/// values), its members' data evaluated.
fn setup_for(shape: Shape) -> Setup {
    let dim = shape.dim;
    let fed = Federation::synthetic(dim, shape.members, shape.points, shape.support, 7).unwrap();
    let task = fedhe_tasks::by_name("cec2005-f1", dim, 0).unwrap();
    let mut clients: Vec<Client> = (0..shape.members)
        .map(|i| {
            Client::new(
                MemberId::new(format!("site-{i}")).unwrap(),
                i,
                40 + i as u64,
            )
        })
        .collect();
    for (c, (x, _)) in clients.iter_mut().zip(&fed.members) {
        for r in 0..x.nrows() {
            c.evaluate(&task, x.row(r).iter().copied().collect())
                .unwrap();
        }
    }
    let mut plain = PlainSum;
    let mut server = Server::new(&mut plain, 1e12);
    let stats = clients
        .iter()
        .map(|c| {
            let v = c.statistics_contribution(&task, OutputWarping::SignedLog, N_MAX);
            (c.id().clone(), v)
        })
        .collect();
    let scaling =
        OutputScaling::from_sums(&server.aggregate("statistics", stats).unwrap()).unwrap();
    let hyper = Hyperparameters::new(vec![0.25 * (dim as f64).sqrt(); dim], 1.0, 1e-2).unwrap();
    let family = Matern52::new(KernelParams::isotropic(dim, 1.0, 1.0).unwrap());
    let model = Dpitc::new(
        hyper.kernel(&family).unwrap(),
        hyper.noise(),
        0.0,
        fed.support.clone(),
    )
    .unwrap();
    let channel = SummaryScaling::new(shape.support, &hyper, N_MAX);
    Setup {
        shape,
        task,
        clients,
        scaling,
        hyper,
        model,
        channel,
        support: fed.support,
    }
}

impl Setup {
    /// Attack (a) on the others' part of a release (channel units), with
    /// the others' block sizes the release's format implies.
    fn attack(&self, others: &[f64], sizes: Vec<usize>) -> Recovery {
        self.attack_with(others, sizes, &AttackOptions::default())
    }

    /// [`Setup::attack`] with the given options.
    fn attack_with(&self, others: &[f64], sizes: Vec<usize>, options: &AttackOptions) -> Recovery {
        self.try_attack(others, sizes, options, 1).unwrap()
    }

    /// Attack (a) on `sum` (channel units) by a party holding no data,
    /// scored against the points of members `first..`: member 0 attacking
    /// the others' part (`first` = 1), or the server attacking the whole sum
    /// (`first` = 0). An attack that cannot start on `sum` is its error.
    fn try_attack(
        &self,
        sum: &[f64],
        sizes: Vec<usize>,
        options: &AttackOptions,
        first: usize,
    ) -> Result<Recovery, String> {
        let others = sum;
        let sum: LocalSummary = self
            .channel
            .from_channel(others)
            .map_err(|e| e.to_string())?;
        let dim = self.shape.dim;
        let family = Matern52::new(KernelParams::isotropic(dim, 1.0, 1.0).unwrap());
        let view = MemberView {
            kernel: self.hyper.kernel(&family).unwrap(),
            noise_variance: self.hyper.noise(),
            prior_mean: 0.0,
            support: self.support.clone(),
            x: DMatrix::zeros(0, dim),
            y: DVector::zeros(0),
            sum,
            others_count: sizes.iter().sum(),
            others_sizes: Some(sizes),
        };
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let rec = subspace_attack(&view, options, &mut rng).map_err(|e| e.to_string())?;
        let (tx, ty) = self.points_of(&self.clients[first..]);
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        Ok(Recovery::evaluate(
            &tx,
            &ty,
            &rec.inputs,
            rec.values.as_deref(),
            200,
            &mut rng,
        ))
    }

    /// Every point of `clients` (unit cube) and its value in this setup's
    /// warping and output scaling: what an attack is scored against.
    fn points_of(&self, clients: &[Client]) -> (Vec<Vec<f64>>, Vec<f64>) {
        let (mut tx, mut ty) = (Vec::new(), Vec::new());
        for c in clients {
            let (x, y) = c.data(&self.task, OutputWarping::SignedLog, &self.scaling);
            for r in 0..x.nrows() {
                tx.push(x.row(r).iter().copied().collect::<Vec<f64>>());
                ty.push(y[r]);
            }
        }
        (tx, ty)
    }

    /// Σ_{i ≠ 0} of the members' vectors.
    fn others(vectors: &[Vec<f64>]) -> Vec<f64> {
        let mut total = vec![0.0; vectors[0].len()];
        for v in &vectors[1..] {
            for (t, x) in total.iter_mut().zip(v) {
                *t += x;
            }
        }
        total
    }

    /// Each member's noise-free dPITC summary, as a noise-free study sends it.
    fn summaries(&self) -> Vec<Vec<f64>> {
        self.clients
            .iter()
            .map(|c| {
                c.summary_contribution(
                    &self.task,
                    OutputWarping::SignedLog,
                    &self.scaling,
                    &self.model,
                    &self.channel,
                    false,
                    None,
                )
                .unwrap()
            })
            .collect()
    }

    /// The others' part of a release of the private output statistics over
    /// the points each holds now (each member's clipped signed-log moments,
    /// `Client::clipped_statistics_contribution`, as the product sends them;
    /// each a noisy share drawn from `releases` when given), in this setup's
    /// standardised units: member 0's view of it as attack (c) takes it.
    fn moments(&self, mut releases: Option<&mut PrivateReleases>) -> MomentRelease {
        let vectors: Vec<Vec<f64>> = self
            .clients
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let v = c.clipped_statistics_contribution(
                    &self.task,
                    OutputWarping::SignedLog,
                    STATISTICS_BOUND,
                    N_MAX,
                );
                match releases.as_deref_mut() {
                    Some(r) => r.share(i, STATISTICS_SENSITIVITY, &v).unwrap(),
                    None => v,
                }
            })
            .collect();
        let sums = Setup::others(&vectors);
        let counts: Vec<usize> = self.clients[1..]
            .iter()
            .map(|c| {
                c.data(&self.task, OutputWarping::SignedLog, &self.scaling)
                    .0
                    .nrows()
            })
            .collect();
        let n = counts.iter().sum::<usize>() as f64;
        // Σw and Σw² of the clamped utilities, then y = a·w + b.
        let sum_w = STATISTICS_BOUND * N_MAX * sums[0];
        let sum_w2 = STATISTICS_BOUND * STATISTICS_BOUND * N_MAX * sums[1];
        let (a, b) = (
            1.0 / self.scaling.std,
            -self.scaling.mean / self.scaling.std,
        );
        MomentRelease {
            counts,
            sum: a * sum_w + b * n,
            sum_of_squares: a * a * sum_w2 + 2.0 * a * b * sum_w + b * b * n,
        }
    }

    /// The product's clip of a member's summary at `dp` (public stream 4).
    fn bound(&self, dp: &ValidDp) -> f64 {
        summary_clip(&self.model, &self.channel, N_MAX, dp.clip, 4).unwrap()
    }

    /// Each member's summary clipped to `bound` in L2.
    fn clipped(&self, bound: f64) -> Vec<Vec<f64>> {
        let clip = ClipParams { norm: bound }.validate().unwrap();
        self.summaries()
            .iter()
            .map(|v| clip.clip(v).unwrap())
            .collect()
    }

    /// Each point's own dPITC term (every point its own block), each scaled
    /// to L2 norm at most `clip`: a per-point release, for the attack's
    /// unknown-scale option.
    fn per_point(&self, clip: f64) -> Vec<Vec<f64>> {
        self.clients
            .iter()
            .map(|c| {
                let (x, y) = c.data(&self.task, OutputWarping::SignedLog, &self.scaling);
                let mut total = vec![0.0; fedhe_gp::sparse::packed_len(self.shape.support)];
                for j in 0..x.nrows() {
                    let point = x.rows(j, 1).into_owned();
                    let value = DVector::from_element(1, y[j]);
                    let term = self
                        .channel
                        .to_channel(&self.model.local_summary(&point, &value).unwrap());
                    let norm = term.iter().map(|v| v * v).sum::<f64>().sqrt();
                    let c = if norm > clip { clip / norm } else { 1.0 };
                    for (t, v) in total.iter_mut().zip(&term) {
                        *t += c * v;
                    }
                }
                total
            })
            .collect()
    }

    /// The private release at `epsilon` spent on one summary: each
    /// member's noisy share of its clipped summary.
    fn private_shares(&self, epsilon: f64) -> Vec<Vec<f64>> {
        let (dp, z) = private_setting_for(self.shape, epsilon);
        self.shares_at(dp, z)
    }

    /// The members' shares of their summaries clipped as the product clips
    /// them, at noise multiplier `z` (sensitivity twice the clip: one
    /// member's data replaced).
    fn shares_at(&self, dp: ValidDp, z: f64) -> Vec<Vec<f64>> {
        self.try_shares_at(dp, z).unwrap()
    }

    /// [`Setup::shares_at`], or the mechanism's refusal (a noise below its
    /// grid).
    fn try_shares_at(&self, dp: ValidDp, z: f64) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        let mut releases = PrivateReleases::new(dp, z, noise_seeds(self.shape.members));
        self.shares_from(&mut releases, self.bound(&dp))
    }
    /// The public standard deviation of the noise on the others' part of
    /// one private summary release, in the summaries' units: `(ṁ_S entries,
    /// K̇_SS entries)` (the sum of `members − 1` shares at sensitivity 2 in
    /// units of the clip, times the clip, over the codec's factor).
    fn summary_noise(&self, releases: &PrivateReleases, bound: f64) -> (f64, f64) {
        let len = fedhe_gp::sparse::packed_len(self.shape.support);
        let sd = releases
            .mechanism(&ReleaseShape {
                dim: len,
                l2_sensitivity: 2.0,
            })
            .unwrap()
            .sum_std_dev(self.shape.members - 1)
            * bound;
        // The codec's factor of each half, read back through from_channel.
        let factor = |at: usize| {
            let mut unit = vec![0.0; len];
            unit[at] = 1.0;
            let summary = self.channel.from_channel(&unit).unwrap();
            summary
                .m_s
                .iter()
                .chain(summary.k_ss.iter())
                .fold(0.0_f64, |a, v| a.max(v.abs()))
        };
        (sd * factor(0), sd * factor(self.shape.support))
    }

    /// The public standard deviation of the noise on the others' part of
    /// one private moment release, in the summaries' units: `(Σy, Σy²)` of
    /// [`Setup::moments`] (Σy² to first order in the noise).
    fn moment_noise(&self, releases: &PrivateReleases) -> (f64, f64) {
        let sd = releases
            .mechanism(&ReleaseShape {
                dim: 2,
                l2_sensitivity: STATISTICS_SENSITIVITY,
            })
            .unwrap()
            .sum_std_dev(self.shape.members - 1);
        let (a, b) = (
            1.0 / self.scaling.std,
            -self.scaling.mean / self.scaling.std,
        );
        let sum_w = STATISTICS_BOUND * N_MAX * sd;
        let sum_w2 = STATISTICS_BOUND * STATISTICS_BOUND * N_MAX * sd;
        (
            (a * sum_w).abs(),
            (a * a * sum_w2).hypot(2.0 * a * b * sum_w),
        )
    }

    /// The members' shares of their summaries clipped to `bound`, drawn from
    /// `releases` (whose noise streams go on: a second call is the next
    /// release, with fresh noise, as the product makes it).
    fn shares_from(
        &self,
        releases: &mut PrivateReleases,
        bound: f64,
    ) -> Result<Vec<Vec<f64>>, AlgorithmError> {
        // As the product sends them: in units of the clip, sensitivity 2,
        // scaled back after the sum (here, share by share: the same sum).
        self.clipped(bound)
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let unit: Vec<f64> = v.iter().map(|x| x / bound).collect();
                Ok(releases
                    .share(i, 2.0, &unit)?
                    .iter()
                    .map(|x| x * bound)
                    .collect())
            })
            .collect()
    }
}

/// The validated DP setting at `epsilon` (δ = 1e-6) spent on one summary
/// and the noise multiplier the product calibrates for it.
fn private_setting(epsilon: f64) -> (ValidDp, f64) {
    private_setting_for(DEMO, epsilon)
}

/// [`private_setting`] for a federation of `shape`.
fn private_setting_for(shape: Shape, epsilon: f64) -> (ValidDp, f64) {
    try_private_setting(shape, epsilon).unwrap()
}

/// Each member's noise seed of one ledger (member `i`: 32 bytes of `i + 1`).
fn noise_seeds(members: usize) -> Vec<[u8; 32]> {
    (1..=members).map(|i| [i as u8; 32]).collect()
}

/// [`private_setting_for`], or the product's refusal of `epsilon`.
fn try_private_setting(shape: Shape, epsilon: f64) -> Result<(ValidDp, f64), AlgorithmError> {
    let mut params = FboFedGpParams {
        members: shape.members,
        rounds: 15,
        initial_points: 4,
        ..FboFedGpParams::paper_defaults()
    };
    params.support.size = shape.support;
    params.hypers.lengthscale = Some(0.25 * (shape.dim as f64).sqrt());
    let params = params.private(epsilon).validate()?;
    let dp = params
        .privacy
        .validate(shape.members)?
        .expect("a private setting");
    // The whole budget on one summary (and the statistics): the least noise
    // a release at ε can carry, whatever the schedule.
    let rounds = [1];
    let z = dp.noise_multiplier(&plan(&params, &dp, &rounds), params.channel_bound)?;
    Ok((dp, z))
}

/// The attack on a clipped release: every point its own block, of an unknown
/// scale; values from `R = Aᵀ M⁺ A`'s diagonal.
fn clipped_options() -> AttackOptions {
    AttackOptions {
        block_scales: BlockScales::Unknown,
        ..AttackOptions::default()
    }
}

#[test]
fn the_noise_free_summary_gives_the_others_points_away() {
    let s = setup();
    let vectors: Vec<Vec<f64>> = s
        .clients
        .iter()
        .map(|c| {
            c.summary_contribution(
                &s.task,
                OutputWarping::SignedLog,
                &s.scaling,
                &s.model,
                &s.channel,
                false,
                None,
            )
            .unwrap()
        })
        .collect();
    let r = s.attack(&Setup::others(&vectors), vec![4, 4]);
    eprintln!("noise-free PITC summary: {r:?}");
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
}

#[test]
fn the_private_format_without_noise_gives_them_away() {
    let s = setup();
    // Each member's summary clipped as the product clips it, no noise: the
    // clip alone protects nothing (here it binds for no member).
    let (dp, _) = private_setting(4.0);
    let bound = s.bound(&dp);
    let norms: Vec<f64> = s
        .summaries()
        .iter()
        .map(|v| v.iter().map(|x| x * x).sum::<f64>().sqrt())
        .collect();
    eprintln!("clip {bound:.3e}, member norms {norms:?}");
    let r = s.attack(&Setup::others(&s.clipped(bound)), vec![4, 4]);
    eprintln!("private format, clipped, noise-free: {r:?}");
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
}

#[test]
fn clipping_that_bites_needs_the_unknown_scale_attack() {
    let s = setup();
    // A per-point release (every point its own block) whose terms are each
    // clipped (c_j 0.2–0.7 at 3e-4; the terms' norms are 4e-4–1.4e-3): the
    // diagonal condition `G(x, x) = C(x, x)` fails and the known-scale
    // attack finds nothing, while the unknown-scale one still recovers
    // every point and value. Unclipped, the known-scale attack works.
    let r = s.attack(&Setup::others(&s.per_point(f64::INFINITY)), vec![1; 8]);
    eprintln!("per-point terms, unclipped: {r:?}");
    assert!(r.inputs_1pct >= 0.9, "{r:?}");
    let others = Setup::others(&s.per_point(3e-4));
    let r = s.attack_with(&others, vec![1; 8], &AttackOptions::default());
    eprintln!("clip 3e-4, known scales: {r:?}");
    assert!(r.within_random_baseline(), "{r:?}");
    let r = s.attack_with(&others, vec![1; 8], &clipped_options());
    eprintln!("clip 3e-4, unknown scales: {r:?}");
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
    let moment = AttackOptions {
        values: ValueMethod::Moment,
        ..clipped_options()
    };
    let r = s.attack_with(&others, vec![1; 8], &moment);
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
}

#[test]
fn the_private_release_with_its_noise_does_not_give_them_away() {
    let s = setup();
    // The private release at ε = 4 (δ = 1e-6) spent on one summary,
    // attacked as the noise-free clipped release above.
    let r = s.attack(&Setup::others(&s.private_shares(4.0)), vec![4, 4]);
    eprintln!("private release, ε = 4: {r:?}");
    assert!(r.within_random_baseline(), "{r:?}");
    assert_eq!(r.inputs_5pct, 0.0, "{r:?}");
}

/// What the server can make of a round of `vectors` (each member's
/// contribution) over the real channel: the decoding of `C0 + D'` it can
/// compute from the shares it combines, with the members' shares blinded by
/// their result key (as members make them), and, as the control, the
/// decoding a server had before the result key (shares unblinded).
fn server_views(vectors: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
    use fedhe_crypto::{
        BlindingContext, CeremonyId, CollectivePublicKey, CombinedShare, CommonRandomPoly,
        DecryptionShare, EncryptedVector, FixedPointCodec, InsecurePolicy, ParameterSet,
        PublicKeyShare, ResultKey, SecretKeyShare,
    };
    use fedhe_ring::Csprng;
    // The product's parameter set: the toy set's codec keeps too few
    // fractional bits for the attack (its rounding is noise of its own).
    let params = ParameterSet::N8192_Q124
        .validate(InsecurePolicy::Refuse)
        .unwrap();
    let ceremony = CeremonyId::new("attack-d").unwrap();
    let ids: Vec<MemberId> = (0..vectors.len())
        .map(|i| MemberId::new(format!("site-{i}")).unwrap())
        .collect();
    let crs = CommonRandomPoly::for_ceremony(&params, &ceremony, &ids).unwrap();
    let mut rng = Csprng::from_u128_seed(21);
    let secrets: Vec<SecretKeyShare> = ids
        .iter()
        .map(|m| SecretKeyShare::generate(&params, m.clone(), &mut rng))
        .collect();
    let shares: Vec<PublicKeyShare> = secrets
        .iter()
        .map(|s| PublicKeyShare::generate(&params, s, &crs, &mut rng).unwrap())
        .collect();
    let key = CollectivePublicKey::aggregate(&crs, &ids, &shares).unwrap();
    let bound = 2.0
        * vectors
            .iter()
            .flatten()
            .fold(0.0f64, |m, v| m.max(v.abs()))
            .max(1e-9);
    let codec = FixedPointCodec::new(&params, vectors.len(), bound).unwrap();
    let mut aggregate =
        EncryptedVector::encrypt(&params, &key, &codec, &vectors[0], &mut rng).unwrap();
    for v in &vectors[1..] {
        let c = EncryptedVector::encrypt(&params, &key, &codec, v, &mut rng).unwrap();
        aggregate.add_assign(&c).unwrap();
    }
    let result_key = ResultKey::generate(&mut rng);
    let ctx = BlindingContext {
        ceremony: &ceremony,
        study: "s",
        round: 1,
        aggregate_hash: &[3; 32],
    };
    let plain: Vec<DecryptionShare> = secrets
        .iter()
        .map(|s| DecryptionShare::generate(&params, s, &aggregate, &mut rng).unwrap())
        .collect();
    let blinded: Vec<DecryptionShare> = plain
        .iter()
        .map(|d| {
            let mut d = d.clone();
            result_key.blind(&params, &ctx, &mut d).unwrap();
            d
        })
        .collect();
    let len = vectors[0].len();
    let view = |shares: &[DecryptionShare]| -> Vec<f64> {
        let d = CombinedShare::sum(&aggregate, &shares.iter().collect::<Vec<_>>()).unwrap();
        codec
            .decode_unchecked(&d.decrypt(&aggregate).unwrap(), len)
            .unwrap()
    };
    (view(&blinded), view(&plain))
}

/// Attack (d), the server's view: what the server combines is blinded by
/// the members' result key, so the best it can decode is noise and the
/// attack recovers nothing (or cannot start); the same attack on the
/// decoding a server made before the result key (the control, so this test
/// can fail) recovers every member's points.
#[test]
fn the_servers_view_gives_nothing_away_once_shares_are_blinded() {
    let s = setup();
    // A round of two contributors (members 1 and 2; the attack's reach on
    // a sum of two blocks of 4 points is the noise-free test's): the server
    // attacks the whole sum, scored against their points.
    let vectors = s.summaries()[1..].to_vec();
    let (blinded, unblinded) = server_views(&vectors);
    let exact = Setup::others(&[
        vec![0.0; vectors[0].len()],
        vectors[0].clone(),
        vectors[1].clone(),
    ]);
    let err = unblinded
        .iter()
        .zip(&exact)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    eprintln!("server's view, shares unblinded: largest error against the sum {err:e}");
    let r = s
        .try_attack(&unblinded, vec![4, 4], &AttackOptions::default(), 1)
        .unwrap();
    eprintln!("server's view, shares unblinded: {r:?}");
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
    let magnitude = blinded.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    eprintln!("server's view, blinded: largest |value| {magnitude:e}");
    match s.try_attack(&blinded, vec![4, 4], &AttackOptions::default(), 1) {
        Ok(r) => {
            eprintln!("server's view, blinded: {r:?}");
            assert!(r.within_random_baseline(), "{r:?}");
        }
        Err(e) => eprintln!("server's view, blinded: the attack cannot start ({e})"),
    }
}

/// Attack (b) on two consecutive releases of the setup's model: `earlier`
/// and `later` are the members' vectors before and after members 1 and 2
/// each evaluated one more point (`after` holds those clients); the
/// attacker knows their earlier points and values and looks for the new
/// ones. Scored against the two new points.
fn difference_recovery(
    s: &Setup,
    after: &Setup,
    earlier: &[Vec<f64>],
    later: &[Vec<f64>],
) -> Recovery {
    let family = Matern52::new(KernelParams::isotropic(s.shape.dim, 1.0, 1.0).unwrap());
    let data = |c: &Client| c.data(&s.task, OutputWarping::SignedLog, &s.scaling);
    let view = ConsecutiveView {
        kernel: s.hyper.kernel(&family).unwrap(),
        noise_variance: s.hyper.noise(),
        prior_mean: 0.0,
        support: s.support.clone(),
        earlier: s.channel.from_channel(&Setup::others(earlier)).unwrap(),
        later: s.channel.from_channel(&Setup::others(later)).unwrap(),
        known: s.clients[1..].iter().map(data).collect(),
    };
    let mut rng = ChaCha20Rng::seed_from_u64(13);
    let found = difference_attack(&view, &DifferenceOptions::default(), &mut rng).unwrap();
    let (mut tx, mut ty) = (Vec::new(), Vec::new());
    for c in &after.clients[1..] {
        let (x, y) = data(c);
        let last = x.nrows() - 1;
        tx.push(x.row(last).iter().copied().collect::<Vec<f64>>());
        ty.push(y[last]);
    }
    let (mut inputs, mut values) = (Vec::new(), Vec::new());
    for (x, v) in found.inputs.iter().zip(&found.values) {
        if let (Some(x), Some(v)) = (x, v) {
            inputs.push(x.clone());
            values.push(*v);
        }
    }
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    Recovery::evaluate(&tx, &ty, &inputs, Some(&values), 200, &mut rng)
}

/// The setup after members 1 and 2 each evaluated one more point (uniform
/// in the box, public stream 99), with the model and output scaling kept.
fn one_more_point_each(s: &Setup) -> Setup {
    let mut after = setup_for(s.shape);
    let mut rng = ChaCha20Rng::seed_from_u64(99);
    for c in &mut after.clients[1..] {
        let x: Vec<f64> = (0..s.shape.dim).map(|_| rand::Rng::gen(&mut rng)).collect();
        c.evaluate(&s.task, x).unwrap();
    }
    after
}

/// Attack (b), differences of consecutive releases: a member that holds
/// the others' earlier points finds each one's next point and value from
/// the difference of two noise-free summaries, and from two private
/// releases whose noise was reused (the noise cancels); with fresh noise in
/// each private release (ε = 4 spent on each) it finds nothing.
#[test]
fn consecutive_releases_give_the_new_points_away_only_without_fresh_noise() {
    let s = setup();
    let after = one_more_point_each(&s);
    let r = difference_recovery(&s, &after, &s.summaries(), &after.summaries());
    row("attack (b), noise-free summaries", &r);
    assert!(r.inputs_1pct >= 0.99 && r.both_1pct >= 0.99, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
    let (dp, z) = private_setting(4.0);
    let bound = s.bound(&dp);
    let seeds = noise_seeds(s.shape.members);
    // The same noise in both (each release from a stream started afresh).
    let reused = difference_recovery(
        &s,
        &after,
        &s.shares_from(&mut PrivateReleases::new(dp, z, seeds.clone()), bound)
            .unwrap(),
        &after
            .shares_from(&mut PrivateReleases::new(dp, z, seeds.clone()), bound)
            .unwrap(),
    );
    row(
        "attack (b), private releases with the noise reused",
        &reused,
    );
    assert!(reused.inputs_1pct >= 0.99, "{reused:?}");
    // As the product makes them: one ledger, its streams going on.
    let mut releases = PrivateReleases::new(dp, z, seeds);
    let earlier = s.shares_from(&mut releases, bound).unwrap();
    let later = after.shares_from(&mut releases, bound).unwrap();
    let fresh = difference_recovery(&s, &after, &earlier, &later);
    row("attack (b), private releases at ε = 4, fresh noise", &fresh);
    assert!(fresh.within_random_baseline(), "{fresh:?}");
    assert_eq!(fresh.inputs_5pct, 0.0, "{fresh:?}");
}

fn row(label: &str, r: &Recovery) {
    eprintln!(
        "{label}: inputs within 1 % {:.2}, 5 % {:.2}; with values {:.2} / {:.2}; baseline upper {:.2}",
        r.inputs_1pct, r.inputs_5pct, r.both_1pct, r.both_5pct, r.baseline_upper
    );
}

/// Recovery against ε, with the clipped-release attack (printed;
/// `--ignored --nocapture`).
#[test]
#[ignore]
fn recovery_against_epsilon() {
    let s = setup();
    for epsilon in [1.0, 4.0, 16.0, 64.0, 1e3, 1e5, 1e7, 1e9, 1e11, 1e12] {
        let shares =
            try_private_setting(DEMO, epsilon).and_then(|(dp, z)| Ok((z, s.try_shares_at(dp, z)?)));
        match shares {
            Ok((z, v)) => row(
                &format!("ε = {epsilon:e} (z = {z:.3e})"),
                &s.attack(&Setup::others(&v), vec![4, 4]),
            ),
            Err(e) => eprintln!("ε = {epsilon:e}: refused ({e})"),
        }
    }
}

/// Recovery against the noise multiplier, as a fraction of the ε = 4
/// release's (printed; `--ignored --nocapture`).
#[test]
#[ignore]
fn recovery_against_noise_multiplier() {
    let s = setup();
    let (dp, z4) = private_setting(4.0);
    for f in [1.0, 1e-2, 1e-4, 1e-5, 5e-6, 2e-6, 1e-6, 5e-7, 2e-7] {
        let label = format!("z = {f:e} · z(ε = 4) = {:.3e}", z4 * f);
        match s.try_shares_at(dp, z4 * f) {
            Ok(v) => row(&label, &s.attack(&Setup::others(&v), vec![4, 4])),
            Err(e) => eprintln!("{label}: refused ({e})"),
        }
    }
}

/// Attack (c) on a run of two releases (`earlier`, then `later` after every
/// other member added a point), each with its release of the output
/// moments: the others' points and values fitted to both summaries and
/// both moment releases from random starts, the attacker knowing none of
/// them. Scored against every point the others hold at the end.
fn reconstruction_recovery(
    s: &Setup,
    after: &Setup,
    earlier: &[Vec<f64>],
    later: &[Vec<f64>],
    moments: Vec<MomentRelease>,
    noise: Option<NoiseScales>,
) -> Recovery {
    let family = Matern52::new(KernelParams::isotropic(s.shape.dim, 1.0, 1.0).unwrap());
    let others = s.shape.members - 1;
    let view = RunView {
        kernel: s.hyper.kernel(&family).unwrap(),
        noise_variance: s.hyper.noise(),
        prior_mean: 0.0,
        support: s.support.clone(),
        releases: vec![
            (
                s.channel.from_channel(&Setup::others(earlier)).unwrap(),
                vec![s.shape.points; others],
            ),
            (
                s.channel.from_channel(&Setup::others(later)).unwrap(),
                vec![s.shape.points + 1; others],
            ),
        ],
        moments,
        noise,
    };
    let mut rng = ChaCha20Rng::seed_from_u64(17);
    let found =
        reconstruction_attack(&view, &[], &ReconstructionOptions::default(), &mut rng).unwrap();
    {
        // The cost at the true points, beside the fit's: with noise the fit
        // beats the truth (the noise is what it fits).
        let truth: Vec<Vec<Vec<f64>>> = after.clients[1..]
            .iter()
            .map(|c| {
                let (x, _) = c.data(&s.task, OutputWarping::SignedLog, &s.scaling);
                (0..x.nrows())
                    .map(|r| x.row(r).iter().copied().collect())
                    .collect()
            })
            .collect();
        let opts = ReconstructionOptions {
            starts: 0,
            max_iter: 0,
            hops: 0,
        };
        let at = reconstruction_attack(&view, &[truth], &opts, &mut rng).unwrap();
        eprintln!("cost found {:e}, at the truth {:e}", found.cost, at.cost);
    }
    let (tx, ty) = s.points_of(&after.clients[1..]);
    let inputs: Vec<Vec<f64>> = found.inputs.into_iter().flatten().collect();
    let values: Vec<f64> = found.values.into_iter().flatten().collect();
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    Recovery::evaluate(&tx, &ty, &inputs, Some(&values), 200, &mut rng)
}

/// Attack (c)'s shape: 2-D, 3 members with 4 then 5 points each, |S| = 16.
const RUN_2D: Shape = Shape {
    dim: 2,
    members: 3,
    points: 4,
    support: 16,
};

/// Attack (c), a general reconstruction from every statistic a run
/// decrypts: in [`RUN_2D`] the fit from random starts finds the others'
/// points and values from two noise-free summaries and their output
/// moments (the moments' own check: at the truth they are the others'
/// values' sums). Its private half is the next test (apart, so that the
/// two fits run in parallel).
#[test]
fn a_whole_runs_statistics_fitted_at_once_give_the_points_away_noise_free() {
    let s = setup_for(RUN_2D);
    let after = one_more_point_each(&s);
    let plain = vec![s.moments(None), after.moments(None)];
    let (_, ty) = s.points_of(&after.clients[1..]);
    let later = &plain[1];
    assert!((later.sum - ty.iter().sum::<f64>()).abs() < 1e-9 * ty.len() as f64);
    let squares = ty.iter().map(|y| y * y).sum::<f64>();
    assert!((later.sum_of_squares - squares).abs() < 1e-9 * squares);
    let r = reconstruction_recovery(&s, &after, &s.summaries(), &after.summaries(), plain, None);
    row("attack (c), noise-free summaries and moments", &r);
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
    assert!(!r.within_random_baseline(), "{r:?}");
}

/// Attack (c)'s private run at ε = 4: [`RUN_2D`] before and after one more
/// point each, one ledger (fresh noise in each release), the clip, the two
/// private summary releases and the two moment releases (noised as the
/// product noises them).
struct PrivateRun {
    s: Setup,
    after: Setup,
    ledger: PrivateReleases,
    bound: f64,
    earlier: Vec<Vec<f64>>,
    later: Vec<Vec<f64>>,
    moments: Vec<MomentRelease>,
}

fn private_run() -> PrivateRun {
    let s = setup_for(RUN_2D);
    let after = one_more_point_each(&s);
    let (dp, z) = private_setting_for(RUN_2D, 4.0);
    let bound = s.bound(&dp);
    let mut ledger = PrivateReleases::new(dp, z, noise_seeds(RUN_2D.members));
    let first = s.moments(Some(&mut ledger));
    let earlier = s.shares_from(&mut ledger, bound).unwrap();
    let second = after.moments(Some(&mut ledger));
    let later = after.shares_from(&mut ledger, bound).unwrap();
    PrivateRun {
        s,
        after,
        ledger,
        bound,
        earlier,
        later,
        moments: vec![first, second],
    }
}

/// Attack (c) on the releases of the previous test made private at ε = 4
/// (one ledger, fresh noise in each; the moments noised as the product
/// noises them): no more than the random baseline.
#[test]
fn a_whole_runs_summaries_fitted_at_once_give_nothing_away_once_private() {
    let PrivateRun {
        s,
        after,
        earlier,
        later,
        moments,
        ..
    } = private_run();
    let r = reconstruction_recovery(&s, &after, &earlier, &later, moments, None);
    row("attack (c), private releases at ε = 4", &r);
    assert!(r.within_random_baseline(), "{r:?}");
}

/// Attack (c) as the maximum-likelihood fit: the attacker knows the
/// noise's public scale (mechanism, noise multiplier, clip, codec factors)
/// and weights every entry of every release by it. On the releases of the
/// previous test: no more than the random baseline. The scales are checked
/// against the noise itself, and the same weighting with a tiny scale on the
/// noise-free releases finds every point (so the test can fail).
#[test]
fn a_whole_runs_releases_fitted_by_their_noise_scale_give_nothing_away_once_private() {
    let PrivateRun {
        s,
        after,
        ledger,
        bound,
        earlier,
        later,
        moments,
    } = private_run();
    // The scales are the noise's: the private release minus the same
    // clipped summaries noise-free, entry by entry, has about that spread.
    let (m_sd, k_sd) = after.summary_noise(&ledger, bound);
    let noisy = after.channel.from_channel(&Setup::others(&later)).unwrap();
    let exact = after
        .channel
        .from_channel(&Setup::others(&after.clipped(bound)))
        .unwrap();
    let spread = |d: Vec<f64>| (d.iter().map(|v| v * v).sum::<f64>() / d.len() as f64).sqrt();
    let m_spread = spread((&noisy.m_s - &exact.m_s).iter().copied().collect());
    let k = &noisy.k_ss - &exact.k_ss;
    let k_spread = spread(
        (0..k.nrows())
            .flat_map(|i| (i..k.ncols()).map(move |l| (i, l)))
            .map(|(i, l)| k[(i, l)])
            .collect(),
    );
    assert!(
        (0.5..2.0).contains(&(m_spread / m_sd)),
        "{m_spread} vs {m_sd}"
    );
    assert!(
        (0.8..1.25).contains(&(k_spread / k_sd)),
        "{k_spread} vs {k_sd}"
    );
    let noise = NoiseScales {
        releases: vec![
            s.summary_noise(&ledger, bound),
            after.summary_noise(&ledger, bound),
        ],
        moments: vec![s.moment_noise(&ledger), after.moment_noise(&ledger)],
    };
    let r = reconstruction_recovery(&s, &after, &earlier, &later, moments, Some(noise));
    row(
        "attack (c), private releases at ε = 4, weighted by the noise's scale",
        &r,
    );
    assert!(r.within_random_baseline(), "{r:?}");
    // The weighting can find points: a tiny scale on every noise-free
    // release (its noise is the float rounding).
    let tiny = NoiseScales {
        releases: vec![(1e-6, 1e-6); 2],
        moments: vec![(1e-6, 1e-6); 2],
    };
    let plain = vec![s.moments(None), after.moments(None)];
    let r = reconstruction_recovery(
        &s,
        &after,
        &s.summaries(),
        &after.summaries(),
        plain,
        Some(tiny),
    );
    row(
        "attack (c), noise-free releases, weighted by a tiny scale",
        &r,
    );
    assert!(r.inputs_1pct >= 0.9 && r.both_1pct >= 0.9, "{r:?}");
}

/// One cell of the attack × setting table: recovery within 1 % / 5 % of the
/// box (inputs; inputs and values) and the random baseline's upper limit,
/// or why the attack cannot start.
fn cell(r: Result<Recovery, String>) -> String {
    match r {
        Ok(r) => format!(
            "{:.0} / {:.0} ; {:.0} / {:.0} (random ≤ {:.0})",
            100.0 * r.inputs_1pct,
            100.0 * r.inputs_5pct,
            100.0 * r.both_1pct,
            100.0 * r.both_5pct,
            100.0 * r.baseline_upper
        ),
        Err(e) if e.contains("not identifiable") => "not identifiable (others ≥ \\|S\\|)".into(),
        Err(e) => format!("cannot start ({e})"),
    }
}

/// The attack × setting table of SECURITY.md and
/// `docs/results/attacks-2026-12-02` (printed as Markdown rows;
/// `cargo test -p fedhe-attacks --release --test product_releases -- --ignored attack_table --nocapture`;
/// `FEDHE_ATTACK_TABLE=dim,members,support` runs one shape). Per shape
/// (4 points a member, the attacker member 0, CEC-2005 F1 values) and
/// release (the noise-free summary a noise-free study sends; the private
/// release at ε = 4 spent on it), attack (a) on one release and attack (b)
/// on two consecutive ones (every other member adding one point; the
/// attacker holding their earlier points).
#[test]
#[ignore]
fn attack_table() {
    let mut shapes = Vec::new();
    for dim in [2, 10] {
        for members in [3, 5, 10] {
            for support in [16, 32, 64] {
                shapes.push(Shape {
                    dim,
                    members,
                    points: 4,
                    support,
                });
            }
        }
    }
    if let Ok(one) = std::env::var("FEDHE_ATTACK_TABLE") {
        let v: Vec<usize> = one.split(',').map(|x| x.parse().unwrap()).collect();
        shapes = vec![Shape {
            dim: v[0],
            members: v[1],
            points: 4,
            support: v[2],
        }];
    }
    println!("| D | members | \\|S\\| | release | (a) one release: inputs 1 % / 5 % ; with values 1 % / 5 % | (b) consecutive releases: the same |");
    println!("| ---: | ---: | ---: | --- | --- | --- |");
    for shape in shapes {
        let started = std::time::Instant::now();
        let s = setup_for(shape);
        let after = one_more_point_each(&s);
        let sizes = vec![shape.points; shape.members - 1];
        let options = AttackOptions::default();
        let (dp, z) = private_setting_for(shape, 4.0);
        let bound = s.bound(&dp);
        let mut ledger = PrivateReleases::new(dp, z, noise_seeds(shape.members));
        let private_earlier = s.shares_from(&mut ledger, bound).unwrap();
        let private_later = after.shares_from(&mut ledger, bound).unwrap();
        for (label, earlier, later) in [
            ("noise-free summary", s.summaries(), after.summaries()),
            ("private, ε = 4", private_earlier, private_later),
        ] {
            let a = s.try_attack(&Setup::others(&earlier), sizes.clone(), &options, 1);
            let b = difference_recovery(&s, &after, &earlier, &later);
            println!(
                "| {} | {} | {} | {label} | {} | {} |",
                shape.dim,
                shape.members,
                shape.support,
                cell(a),
                cell(Ok(b))
            );
        }
        eprintln!("{shape:?}: {:.1} s", started.elapsed().as_secs_f64());
    }
}
