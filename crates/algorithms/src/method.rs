//! One registry of federated methods: every algorithm family behind one
//! trait ([`FederatedMethod`]), built by name from its settings
//! ([`configure`]), and run on a [`Roster`] that says which members this
//! process plays.
//!
//! A method has one code path. The simulator runs it with every member here
//! ([`Roster::simulation`]); the service's agent runs the same code with one
//! member ([`Roster::member`]) over the network channel. Everything a member
//! computes besides its own client role (the server role: support sets,
//! learners, eliminations, broadcasts) is a deterministic function of the
//! public seed and the sums, so every member computes it alike.

use crate::fbo_fedgp::{self, FboFedGpParams, Method};
pub use crate::roster::{simulated_private_seed, LocalMember, PrivateSeed, Roster, RoundProgress};
use crate::{dp_fts_de, fed_pne, fts, ldp_bo, AlgorithmError, Releases, RunResult};
use fedhe_crypto::{MemberId, SecureSum};
use fedhe_tasks::Task;

/// The largest `|value|` any method takes: its square, and the sum of a
/// million squares, stay finite, so statistics computed in `f64` neither
/// overflow nor turn into NaN.
pub const VALUE_BOUND_CAP: f64 = 1e150;

/// The largest `u` in `[0, cap]` with `fits(u)`, for a `fits` true on
/// `[0, u*]` and false above (0 when `fits(0)` is false): a bisection on the
/// bit patterns of positive `f64`s, which order like the numbers, so it is
/// exact in 64 steps.
pub fn largest_fitting(fits: impl Fn(f64) -> bool, cap: f64) -> f64 {
    if fits(cap) {
        return cap;
    }
    if !fits(0.0) {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0f64.to_bits(), cap.to_bits());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(f64::from_bits(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    f64::from_bits(lo)
}

/// Refuses a study that decrypts rounds with fewer contributors than the
/// `quorum` its members' noise shares are sized for (each such round would
/// carry less noise than its ε says), naming `privacy.quorum`.
fn check_privacy_quorum(
    quorum: Option<usize>,
    min_contributors: usize,
) -> Result<(), AlgorithmError> {
    match quorum {
        Some(quorum) if min_contributors < quorum => Err(crate::error::config(
            "privacy.quorum",
            format!(
                "each member's noise share is sized for sums over at least {quorum} \
                 contributors, but the study decrypts rounds with {min_contributors} \
                 (min_contributors): such a round would carry less noise than its ε says"
            ),
        )),
        _ => Ok(()),
    }
}

/// What every method's settings fix about a study's federation: its size,
/// its rounds and the channel's bound. Each method states it once
/// ([`FederatedMethod::shape`]); the trait's `members`, `rounds` and
/// `channel_bound` read it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// The federation's size the settings are for.
    pub members: usize,
    /// Rounds it runs (each member evaluates about one point a round).
    pub rounds: usize,
    /// The bound every contribution respects (the HE codec's bound).
    pub channel_bound: f64,
}

/// A federated method, configured and validated.
pub trait FederatedMethod: std::fmt::Debug + Send + Sync {
    /// Its registry name.
    fn name(&self) -> &'static str;
    /// Its federation's size, rounds and channel bound, from its settings.
    fn shape(&self) -> Shape;
    /// The federation's size the settings are for.
    fn members(&self) -> usize {
        self.shape().members
    }
    /// Rounds it runs (each member evaluates about one point a round).
    fn rounds(&self) -> usize {
        self.shape().rounds
    }
    /// The bound every contribution respects (the HE codec's bound).
    fn channel_bound(&self) -> f64 {
        self.shape().channel_bound
    }
    /// The largest `|value|` of the objective whose every contribution this
    /// method's members send fits [`FederatedMethod::channel_bound`] whatever
    /// the member's other values are: an agent refuses a value beyond it
    /// before journaling it (issue 45, item 7), since a journaled value is
    /// replayed into every later contribution. [`VALUE_BOUND_CAP`] by default,
    /// for methods that clip or standardise what they send.
    fn value_bound(&self) -> f64 {
        VALUE_BOUND_CAP
    }
    /// Whether it aggregates through the channel (the lone baselines do not:
    /// they need no key ceremony and make no study).
    fn uses_channel(&self) -> bool {
        true
    }
    /// Refuses, naming the setting, what a member cannot run alone over the
    /// network: a method that never aggregates, or settings that need a
    /// trusted server or every member's data in one place
    /// ([`FederatedMethod::check_networked_settings`]).
    fn check_networked(&self) -> Result<(), AlgorithmError> {
        if !self.uses_channel() {
            return Err(crate::error::config(
                "method",
                format!(
                    "{} never aggregates, so it has nothing to run as a study: run it alone",
                    self.name()
                ),
            ));
        }
        self.check_networked_settings()
    }
    /// The settings part of [`FederatedMethod::check_networked`]; none by default.
    fn check_networked_settings(&self) -> Result<(), AlgorithmError> {
        Ok(())
    }
    /// Refuses, naming the setting, a study that decrypts rounds with
    /// `min_contributors` of its `members` when these settings' privacy
    /// argument needs more: by default, noise shares sized for a larger
    /// quorum ([`FederatedMethod::privacy_quorum`]).
    fn check_contributors(
        &self,
        min_contributors: usize,
        _members: usize,
    ) -> Result<(), AlgorithmError> {
        check_privacy_quorum(self.privacy_quorum(), min_contributors)
    }
    /// The most a study of this method costs each member in privacy by its
    /// end, `(ε, δ)`, as its accountant composes its releases; `(0, 0)` for
    /// a method that releases nothing, `None` for one whose releases are
    /// noise-free (no guarantee). A member's policy may refuse a study above
    /// its own ceiling (`fedhe_client::policy::MemberPolicy::max_epsilon`).
    fn privacy_budget(&self) -> Option<(f64, f64)> {
        None
    }
    /// The fewest contributors a release's noise is sized for, if the
    /// method's noise shares assume one (a study may not decrypt a round
    /// with fewer: `min_contributors` must be at least this).
    fn privacy_quorum(&self) -> Option<usize> {
        None
    }
    /// The most its largest private releases can carry in a run seeded with
    /// `seed` ([`crate::privacy::SignalCeiling`]), known before anything
    /// runs; `None` when it makes no such release or states no ceiling.
    fn signal_ceiling(
        &self,
        _seed: u64,
    ) -> Result<Option<crate::privacy::SignalCeiling>, AlgorithmError> {
        Ok(None)
    }
    /// What its members let out of their data, known from the settings
    /// before anything runs (so `fedhe simulate --check` can say it): nothing
    /// without the channel, private with a budget, else noise-free.
    fn releases(&self) -> Releases {
        if !self.uses_channel() {
            Releases::Nothing
        } else if self.privacy_budget().is_some() {
            Releases::Private
        } else {
            Releases::NoiseFree
        }
    }
    /// Whether it can search a typed space (issue 46): its members propose
    /// points of the cube and evaluate [`Task::canonical`] of each. Methods
    /// that search a fixed grid or a partition of the box (LDP-BO, Fed-PNE)
    /// cannot, and a study giving them a space is refused by name.
    fn takes_space(&self) -> bool {
        false
    }
    /// Runs the members of `roster` on `task` from the public `seed`, summing
    /// through `channel` (whose members must be the roster's), calling
    /// `observer` after every round. The result's `best` and
    /// `best_per_member` are over the roster's local members.
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError>;
}

/// Runs `method` with every member in this process (the simulator), and
/// labels what its members let out of their data (`RunResult::releases`).
pub fn simulate(
    method: &dyn FederatedMethod,
    task: &Task,
    channel: &mut dyn SecureSum,
    members: &[MemberId],
    seed: u64,
) -> Result<RunResult, AlgorithmError> {
    let mut result = method.run(
        task,
        channel,
        &Roster::simulation(members, seed),
        seed,
        &mut |_| {},
    )?;
    result.releases = Some(method.releases());
    Ok(result)
}

/// The names [`configure`] accepts, family by family.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Method::all().iter().map(|m| m.name()).collect();
    names.extend([fts::FtsVariant::Ts.name(), fts::FtsVariant::Fts.name()]);
    names.push(dp_fts_de::METHOD);
    names.extend(ldp_bo::LdpMethod::all().iter().map(|m| m.name()));
    names.extend(fed_pne::BanditMethod::all().iter().map(|m| m.name()));
    names
}

/// The method called `name` with `settings` (a JSON object; a config file's
/// TOML table converts to one), validated. The error names the method or
/// the setting.
pub fn configure(
    name: &str,
    settings: serde_json::Value,
) -> Result<Box<dyn FederatedMethod>, AlgorithmError> {
    let parse = |settings: serde_json::Value| Settings { name, settings };
    if let Some(method) = Method::all().into_iter().find(|m| m.name() == name) {
        let settings = match settings {
            serde_json::Value::Object(map) => {
                if map.contains_key("recipe") && !method.uses_channel() {
                    return Err(crate::error::config(
                        "recipe",
                        format!("{name} releases nothing, so it takes no recipe: name it in the runs that aggregate"),
                    ));
                }
                serde_json::Value::Object(FboFedGpParams::resolve_recipe(map)?)
            }
            other => other,
        };
        let params: FboFedGpParams = parse(settings).read()?;
        return Ok(Box::new(FboFedGp {
            method,
            params: params.validate()?,
        }));
    }
    for variant in [fts::FtsVariant::Ts, fts::FtsVariant::Fts] {
        if variant.name() == name {
            let params: fts::FtsParams = parse(settings).read()?;
            return Ok(Box::new(Fts {
                variant,
                params: params.validate()?,
            }));
        }
    }
    if name == dp_fts_de::METHOD {
        let params: dp_fts_de::DpFtsDeParams = parse(settings).read()?;
        return Ok(Box::new(DpFtsDe(params.validate()?)));
    }
    if let Some(m) = ldp_bo::LdpMethod::all()
        .into_iter()
        .find(|m| m.name() == name)
    {
        let params: ldp_bo::LdpBoParams = parse(settings).read()?;
        return Ok(Box::new(LdpBo(params.validate(m)?)));
    }
    if let Some(m) = fed_pne::BanditMethod::all()
        .into_iter()
        .find(|m| m.name() == name)
    {
        let params: fed_pne::FedPneParams = parse(settings).read()?;
        return Ok(Box::new(Bandit(params.validate(m)?)));
    }
    Err(AlgorithmError::UnknownMethod {
        name: name.to_string(),
        known: names().join(", "),
    })
}

/// A method's settings, read into its parameter type.
struct Settings<'a> {
    name: &'a str,
    settings: serde_json::Value,
}

impl Settings<'_> {
    /// The settings as `T`. An unknown value (e.g. `acquisition = "foo"`) is
    /// reported with the key that holds it, which serde's message omits.
    fn read<T: serde::de::DeserializeOwned>(self) -> Result<T, AlgorithmError> {
        let strings: Vec<(String, String)> = match &self.settings {
            serde_json::Value::Object(map) => map
                .iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect(),
            _ => Vec::new(),
        };
        serde_json::from_value(self.settings).map_err(|e| {
            let message = e.to_string();
            let reason = match strings
                .iter()
                .find(|(_, v)| message.contains(&format!("`{v}`")))
            {
                Some((key, _)) if !message.contains(key.as_str()) => format!("{key}: {message}"),
                _ => message,
            };
            AlgorithmError::Settings {
                method: self.name.to_string(),
                reason,
            }
        })
    }
}

/// FBO-FedGP, its ablations and the plaintext baselines (paper 004).
#[derive(Debug, Clone)]
pub struct FboFedGp {
    /// Which variant.
    pub method: Method,
    /// Its settings.
    pub params: fbo_fedgp::ValidParams,
}

impl FederatedMethod for FboFedGp {
    fn takes_space(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        self.method.name()
    }
    fn shape(&self) -> Shape {
        Shape {
            members: self.params.members,
            rounds: self.params.rounds,
            channel_bound: self.params.channel_bound,
        }
    }
    fn value_bound(&self) -> f64 {
        fbo_fedgp::value_bound(self.params.model.warping, self.params.channel_bound)
    }
    fn uses_channel(&self) -> bool {
        self.method.uses_channel()
    }
    fn check_networked_settings(&self) -> Result<(), AlgorithmError> {
        fbo_fedgp::check_networked(&self.params)?;
        // A private study's releases, refused by name before anything runs
        // (its agents would refuse them at the first round).
        fbo_fedgp::private::check_recipe(&self.params, self.method)
    }
    /// A spaced quadratic trend's release rule counts every member's points
    /// (`global_trend = "quadratic-spaced"`): a server could otherwise leave
    /// members out of the trend's sums but not of the count that released
    /// them. Then the privacy quorum, as every method.
    fn check_contributors(
        &self,
        min_contributors: usize,
        members: usize,
    ) -> Result<(), AlgorithmError> {
        if self.params.model.global_trend == fbo_fedgp::GlobalTrend::QuadraticSpaced
            && min_contributors < members
        {
            return Err(crate::error::config(
                "global_trend",
                format!(
                    "quadratic-spaced needs every member in every round, but the study \
                     decrypts rounds with {min_contributors} of {members} contributors \
                     (min_contributors): a server could leave members out of the trend's \
                     sums but not of the count that released them"
                ),
            ));
        }
        check_privacy_quorum(self.privacy_quorum(), min_contributors)
    }
    fn privacy_budget(&self) -> Option<(f64, f64)> {
        if !self.method.uses_channel() {
            return Some((0.0, 0.0));
        }
        match self.params.privacy {
            crate::privacy::Privacy::Dp(d) => Some((d.epsilon, d.delta)),
            crate::privacy::Privacy::NoiseFree => None,
        }
    }
    fn privacy_quorum(&self) -> Option<usize> {
        match self.params.privacy {
            crate::privacy::Privacy::Dp(d) if self.method.uses_channel() => {
                Some(d.quorum.unwrap_or(self.params.members))
            }
            _ => None,
        }
    }
    fn signal_ceiling(
        &self,
        seed: u64,
    ) -> Result<Option<crate::privacy::SignalCeiling>, AlgorithmError> {
        fbo_fedgp::private::signal_ceiling(&self.params, self.method, seed)
    }
    fn releases(&self) -> Releases {
        if self.method == Method::PooledBo {
            Releases::PooledData
        } else if !self.method.uses_channel() {
            Releases::Nothing
        } else if !self.params.privacy.is_noise_free() {
            Releases::Private
        } else {
            Releases::NoiseFree
        }
    }
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError> {
        fbo_fedgp::run_roster(
            task,
            self.method,
            &self.params,
            channel,
            roster,
            seed,
            &mut |e| {
                observer(&RoundProgress {
                    round: e.round,
                    best_so_far: e.best_so_far,
                    epsilon: e.epsilon,
                })
            },
        )
    }
}

/// TS or FTS (paper 002).
#[derive(Debug, Clone)]
pub struct Fts {
    /// Which one.
    pub variant: fts::FtsVariant,
    /// Its settings.
    pub params: fts::ValidParams,
}

impl FederatedMethod for Fts {
    fn takes_space(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        self.variant.name()
    }
    fn shape(&self) -> Shape {
        Shape {
            members: self.params.shared.members,
            rounds: self.params.shared.rounds,
            channel_bound: self.params.channel_bound,
        }
    }
    /// FTS sends a draw `ω ~ N(ν, λΣ⁻¹)` of its weight posterior, unclipped
    /// (paper 002 eq. 2): `ν = (ΦᵀΦ + λI)⁻¹Φᵀy`, whose norm is at most
    /// `‖y‖/(2√λ)` (each singular value `σ/(σ² + λ) ≤ 1/(2√λ)`), and
    /// `λΣ⁻¹ ≼ I`, so the draw's noise has deviations at most 1. With `n`
    /// values of magnitude at most `b√λ/√n`, `|ν_j| ≤ b/2`: half the bound,
    /// the other half left to the noise.
    fn value_bound(&self) -> f64 {
        let shared = &self.params.shared;
        let n = (shared.initial_points + shared.rounds).max(1) as f64;
        (self.params.channel_bound * shared.model.noise_variance.sqrt() / n.sqrt())
            .min(VALUE_BOUND_CAP)
    }
    fn uses_channel(&self) -> bool {
        self.variant == fts::FtsVariant::Fts
    }
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError> {
        fts::run_roster(
            task,
            self.variant,
            &self.params,
            channel,
            roster,
            seed,
            observer,
        )
    }
}

/// DP-FTS-DE and its configurations FTS-DE, DP-FTS (paper 000).
#[derive(Debug, Clone)]
pub struct DpFtsDe(pub dp_fts_de::ValidParams);

impl FederatedMethod for DpFtsDe {
    fn takes_space(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        dp_fts_de::METHOD
    }
    fn shape(&self) -> Shape {
        Shape {
            members: self.0.shared.members,
            rounds: self.0.shared.rounds,
            channel_bound: self.0.channel_bound(),
        }
    }
    fn check_networked_settings(&self) -> Result<(), AlgorithmError> {
        dp_fts_de::check_networked(&self.0)
    }
    fn privacy_budget(&self) -> Option<(f64, f64)> {
        // No noise (FTS-DE): no guarantee.
        if self.0.noise == dp_fts_de::NoiseMode::None {
            return None;
        }
        // Its own accountant after every round (one member's whole data,
        // paper 000's unit).
        let mut accountant = fedhe_dp::PrivacyAccountant::new(self.0.accountant, self.0.mechanism);
        accountant.compose(self.0.shared.rounds as u64);
        let loss = accountant.epsilon(self.0.delta).ok()?;
        Some((loss.epsilon, self.0.delta))
    }
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError> {
        dp_fts_de::run_roster(task, &self.0, channel, roster, seed, &mut |e| {
            observer(&RoundProgress {
                round: e.round,
                best_so_far: e.mean_simple_regret,
                epsilon: e.epsilon,
            })
        })
    }
}

/// LDP-BO and its heavy-tailed non-private versions (paper 001).
#[derive(Debug, Clone)]
pub struct LdpBo(pub ldp_bo::ValidLdpParams);

impl FederatedMethod for LdpBo {
    fn name(&self) -> &'static str {
        self.0.method().name()
    }
    fn shape(&self) -> Shape {
        Shape {
            members: self.0.members,
            rounds: self.0.rounds,
            channel_bound: self.0.channel_bound,
        }
    }
    fn check_networked_settings(&self) -> Result<(), AlgorithmError> {
        ldp_bo::check_networked(&self.0)
    }
    /// The LDP variants privatise each observation before it leaves its
    /// member (ε-LDP per evaluation); the heavy-tailed ones send it as is.
    fn releases(&self) -> Releases {
        if self.0.method().is_private() {
            Releases::Private
        } else {
            Releases::NoiseFree
        }
    }
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError> {
        ldp_bo::run_roster(task, &self.0, channel, roster, seed, observer)
    }
}

/// Fed-PNE, DP-Fed-PNE, Fed1-UCB and HCT (paper 003).
#[derive(Debug, Clone)]
pub struct Bandit(pub fed_pne::ValidFedPneParams);

impl FederatedMethod for Bandit {
    fn name(&self) -> &'static str {
        self.0.method().name()
    }
    fn shape(&self) -> Shape {
        Shape {
            members: self.0.members,
            rounds: self.0.rounds,
            channel_bound: self.0.channel_bound,
        }
    }
    /// A member sends its local mean rewards divided by the member count
    /// `m` (paper 003 Alg. 2), each mean at most the largest `|value|` (plus
    /// DP-Fed-PNE's noise): values up to `b·m/2` keep each contribution within
    /// half the bound, the other half left to the noise.
    fn value_bound(&self) -> f64 {
        (self.0.channel_bound * self.0.members as f64 / 2.0).min(VALUE_BOUND_CAP)
    }
    /// DP-Fed-PNE's Gaussian noise on every release; the others send their
    /// means as they are.
    fn releases(&self) -> Releases {
        if self.0.dp_sigma().is_some() {
            Releases::Private
        } else {
            Releases::NoiseFree
        }
    }
    fn run(
        &self,
        task: &Task,
        channel: &mut dyn SecureSum,
        roster: &Roster<'_>,
        seed: u64,
        observer: &mut dyn FnMut(&RoundProgress),
    ) -> Result<RunResult, AlgorithmError> {
        fed_pne::run_roster(task, &self.0, channel, roster, seed, observer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 45, item 7: each method's value bound, against its closed form,
    /// and the contributions of values at it fitting the channel while one
    /// just above does not.
    #[test]
    fn value_bounds_follow_what_each_method_sends() {
        use fbo_fedgp::{magnitude_contribution, value_bound, warp_contribution, Warping};
        let b = 1024.0;
        // Clipped (the federation's default): ℓ = ln(1 + |u|) with ℓ² ≤ b.
        let clipped = value_bound(Warping::Clipped, b);
        let reference = b.sqrt().exp_m1();
        assert!(
            (clipped / reference - 1.0).abs() < 1e-12,
            "{clipped} vs {reference}"
        );
        let fits = |v: &[f64]| v.iter().all(|t| t.abs() <= b);
        assert!(fits(&magnitude_contribution(
            &[clipped, -clipped, 3.0],
            3.0
        )));
        assert!(!fits(&magnitude_contribution(&[clipped * 1.000_001], 1.0)));
        // No warping: Σu²/n_max ≤ b, so |u| ≤ √b.
        let none = value_bound(Warping::None, b);
        assert!((none - 32.0).abs() < 1e-12, "{none}");
        let candidates = Warping::None.candidates(None).unwrap();
        assert!(fits(&warp_contribution(&candidates, &[none, -none], 2.0)));
        assert!(!fits(&warp_contribution(
            &candidates,
            &[none * 1.000_001],
            1.0
        )));
        // A bound no finite statistic reaches: the cap.
        assert_eq!(value_bound(Warping::Clipped, 1e300), VALUE_BOUND_CAP);
        // The bisection is exact: the largest float with fits(u).
        let u = largest_fitting(|u| u * u <= 2.0, 10.0);
        assert!(u * u <= 2.0 && f64::from_bits(u.to_bits() + 1).powi(2) > 2.0);
        assert_eq!(largest_fitting(|_| false, 10.0), 0.0);
    }

    #[test]
    fn every_name_configures_and_an_unknown_one_lists_the_known() {
        for name in names() {
            let settings = serde_json::json!({ "members": 3, "rounds": 2 });
            // Some families need more settings; each names what is missing
            // or wrong rather than failing as an unknown method.
            match configure(name, settings) {
                Ok(m) => assert_eq!(m.name(), name),
                Err(e) => assert!(
                    !matches!(e, AlgorithmError::UnknownMethod { .. }),
                    "{name}: {e}"
                ),
            }
        }
        let err = configure("fbo-fedgpp", serde_json::json!({})).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("fbo-fedgpp") && text.contains("dp-fts-de"),
            "{text}"
        );
    }

    #[test]
    fn a_wrong_value_is_reported_with_its_key() {
        let err = configure(
            "fbo-fedgp",
            serde_json::json!({ "members": 3, "rounds": 2, "acquisition": "foo" }),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("acquisition") && err.contains("foo"), "{err}");
    }
}
