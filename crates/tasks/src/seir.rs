//! The COVID-19 vaccine-dosage task of paper 003 (§4, App. E.2): an SEIR
//! epidemic with a vaccination term, one parameter set per country or region;
//! each region's objective is the share of its population infected by the end
//! of the horizon as a function of the fractional dose `x ∈ [0, 1]`, and the
//! global objective is the average over the regions.
//!
//! # The model (paper 003 eq. (48))
//!
//! ```text
//! dS/dt = −βSI/N − αV        dE/dt = βSI/N − σE
//! dI/dt = σE − γI            dR/dt = γI + αV
//! ```
//!
//! plus the cumulative infections `dC/dt = βSI/N`, the quantity reported. It is
//! integrated with a fixed-step classical Runge-Kutta scheme ([`rk4`]).
//!
//! # The dose (App. E.2) and what we chose where the paper is silent
//!
//! - *Doses given*: "the number of people getting the vaccine is inversely
//!   proportional to the dosage", `V ∝ 1/x`: a region receives `D` full doses
//!   a day, which vaccinate `D/x` people at dose `x`. The paper gives no
//!   per-country figures and eq. (48) never limits `V`, so `V → ∞` as `x → 0`;
//!   we cap it by the region's daily administration capacity `K`:
//!   `V(x) = min(D/x, K)` ([`Region::vaccinated_per_day`]). This is what makes
//!   the regions' best doses differ: where `K` binds, a smaller dose only
//!   loses efficacy (the supply-versus-delivery trade-off of Wiecek et al.
//!   2022, whom the paper follows).
//! - *Efficacy*: "a quadratic decrease in the rate when the dosage decreases,
//!   and the effective rate decreases to zero when we use only half of the
//!   dosages": `α(x) = α₁ (1 − 4(1 − x)²)` for `x ≥ 1/2`, `0` below
//!   ([`Region::efficacy`]); `α(1) = α₁`, `α(1/2) = 0`. (The other quadratic
//!   through these points, `α₁(2x − 1)²`, makes `α(x)/x` increasing, so the
//!   full dose would always be best and the task would have no trade-off.)
//!   Without the cap the vaccination flow `α(x)D/x = α₁D(8 − 4x − 3/x)` peaks
//!   at `x = √3/2`.
//! - *Running out of susceptibles*: eq. (48)'s constant `αV` would drive `S`
//!   below zero; the flow is `αV · S/(S + s₀)` with `s₀ = 10⁻³N`, which is
//!   `αV` to within 0.4 % while `S > N/4` and vanishes with `S`. The flow moves
//!   people from `S` to `R`, so `S + E + I + R = N` still holds exactly.
//! - *Regions*: the paper runs "around 200 countries/regions" without listing
//!   their parameters, so [`regions`] draws [`REGIONS`] parameter sets, once,
//!   from the ranges below with the fixed seed [`REGION_SEED`] (every run
//!   federates the same regions); region `m` is client `m`.
//!
//! | parameter | range | why |
//! | --- | --- | --- |
//! | `N` | log-uniform 10⁶ … 10⁸ | the size of most countries (the objective is a share, so `N` only scales) |
//! | `I₀/N` (and `E₀ = I₀`) | log-uniform 10⁻⁵ … 10⁻³ | an epidemic from its early to its established phase |
//! | `R₀ = β/γ` | 1.8 … 3.2 | estimates for the early variants, with and without distancing |
//! | `1/σ` | 3 … 5.5 days | latent period, a little below the 5.1-day median incubation (Lauer et al. 2020) |
//! | `1/γ` | 5 … 10 days | infectious period |
//! | `D/N` | 0.1 % … 0.5 % a day | full-dose supply, the 2021 range between low- and high-income countries |
//! | `K/N` | 0.1 % … 1 % a day | administration capacity (many low-income countries gave under 0.2 % a day in 2021), so that in some regions capacity, not supply, binds |
//! | `α₁` | 0.9 | efficacy of a full dose |
//! | horizon | 180 days, step 0.25 day | one season; the step is far below `1/σ` and `1/γ` |
//!
//! Every range is uniform unless marked log-uniform. The objective is in
//! percent (the paper's "final percentages of infected people") and is
//! minimised; its optimum is unknown (the paper measures regret against 0).

use crate::problem::{Evaluation, Problem};
use crate::TaskError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The task's name in configs.
pub const TASK_NAME: &str = "covid-seir";
/// How many regions [`regions`] draws (the clients a run may have).
pub const REGIONS: usize = 200;
/// The seed the regions are drawn from.
pub const REGION_SEED: u64 = 20_220_119;
/// The horizon in days.
pub const HORIZON_DAYS: f64 = 180.0;
/// The integration step in days.
pub const STEP_DAYS: f64 = 0.25;
/// The efficacy `α₁` of a full dose.
pub const FULL_DOSE_EFFICACY: f64 = 0.9;
/// `s₀/N` in the vaccination flow `αV · S/(S + s₀)`.
pub const SUSCEPTIBLE_FLOOR: f64 = 1e-3;

/// The state `(S, E, I, R, C)`: susceptible, exposed, infectious, removed
/// (recovered or vaccinated), and the cumulative infections `C`.
pub type State = [f64; 5];

/// One classical Runge-Kutta step of size `h` for `y' = f(y)`.
pub fn rk4_step(f: &impl Fn(&State) -> State, y: &State, h: f64) -> State {
    let shifted = |k: &State, a: f64| -> State { std::array::from_fn(|i| y[i] + a * k[i]) };
    let k1 = f(y);
    let k2 = f(&shifted(&k1, h / 2.0));
    let k3 = f(&shifted(&k2, h / 2.0));
    let k4 = f(&shifted(&k3, h));
    std::array::from_fn(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]))
}

/// `y(t)` for `y' = f(y)`, `y(0) = y0`, in `⌈t/h⌉` equal steps of at most `h`.
pub fn rk4(f: impl Fn(&State) -> State, y0: State, t: f64, h: f64) -> State {
    let steps = (t / h).ceil().max(0.0) as usize;
    if steps == 0 {
        return y0;
    }
    let h = t / steps as f64;
    (0..steps).fold(y0, |y, _| rk4_step(&f, &y, h))
}

/// One region's epidemic and vaccine supply.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Region {
    /// Population `N`.
    pub population: f64,
    /// Transmission rate `β` (per day).
    pub beta: f64,
    /// Rate `σ` from exposed to infectious (per day).
    pub sigma: f64,
    /// Recovery rate `γ` (per day).
    pub gamma: f64,
    /// Infectious people at day 0 (`I₀`; as many are exposed, `E₀ = I₀`).
    pub initial_infectious: f64,
    /// Full doses delivered per day (`D`).
    pub doses_per_day: f64,
    /// People who can be vaccinated per day (`K`).
    pub capacity_per_day: f64,
    /// Efficacy of a full dose (`α₁`).
    pub full_efficacy: f64,
}

impl Region {
    /// `α(x) = α₁ (1 − 4(1 − x)²)` for `x ≥ 1/2`, else 0 (App. E.2: quadratic,
    /// zero at half a dose).
    pub fn efficacy(&self, x: f64) -> f64 {
        if x < 0.5 {
            0.0
        } else {
            self.full_efficacy * (1.0 - 4.0 * (1.0 - x) * (1.0 - x))
        }
    }

    /// `V(x) = min(D/x, K)` (App. E.2's `V ∝ 1/x`, capped by capacity).
    pub fn vaccinated_per_day(&self, x: f64) -> f64 {
        if x <= 0.0 {
            self.capacity_per_day
        } else {
            (self.doses_per_day / x).min(self.capacity_per_day)
        }
    }

    /// The right-hand side of eq. (48) (with `dC/dt = βSI/N`) at dose `x`.
    pub fn derivative(&self, x: f64) -> impl Fn(&State) -> State + '_ {
        let flow = self.efficacy(x) * self.vaccinated_per_day(x);
        let floor = SUSCEPTIBLE_FLOOR * self.population;
        move |y: &State| {
            let [s, e, i, _, _] = *y;
            let infection = self.beta * s * i / self.population;
            let vaccination = if s > 0.0 { flow * s / (s + floor) } else { 0.0 };
            [
                -infection - vaccination,
                infection - self.sigma * e,
                self.sigma * e - self.gamma * i,
                self.gamma * i + vaccination,
                infection,
            ]
        }
    }

    /// The state at day 0.
    pub fn initial_state(&self) -> State {
        let i0 = self.initial_infectious;
        [self.population - 2.0 * i0, i0, i0, 0.0, 0.0]
    }

    /// The state after `days` at dose `x`.
    pub fn simulate(&self, x: f64, days: f64) -> State {
        rk4(self.derivative(x), self.initial_state(), days, STEP_DAYS)
    }

    /// The objective: the percentage of the population infected during the
    /// horizon (`100 C(T)/N`, counting `I₀` and `E₀`) at dose `x`.
    pub fn infected_percentage(&self, x: f64) -> f64 {
        let y = self.simulate(x, HORIZON_DAYS);
        100.0 * (y[4] + 2.0 * self.initial_infectious) / self.population
    }
}

/// The [`REGIONS`] parameter sets, drawn from the ranges of the module
/// documentation with [`REGION_SEED`].
pub fn regions() -> Vec<Region> {
    let mut rng = ChaCha8Rng::seed_from_u64(REGION_SEED);
    let log_uniform =
        |rng: &mut ChaCha8Rng, lo: f64, hi: f64| -> f64 { (rng.gen_range(lo.ln()..hi.ln())).exp() };
    (0..REGIONS)
        .map(|_| {
            let population = log_uniform(&mut rng, 1e6, 1e8);
            let share_infectious = log_uniform(&mut rng, 1e-5, 1e-3);
            let r0 = rng.gen_range(1.8..3.2);
            let latent = rng.gen_range(3.0..5.5);
            let infectious = rng.gen_range(5.0..10.0);
            let supply = rng.gen_range(0.001..0.005);
            let capacity = rng.gen_range(0.001..0.010);
            Region {
                population,
                beta: r0 / infectious,
                sigma: 1.0 / latent,
                gamma: 1.0 / infectious,
                initial_infectious: share_infectious * population,
                doses_per_day: supply * population,
                capacity_per_day: capacity * population,
                full_efficacy: FULL_DOSE_EFFICACY,
            }
        })
        .collect()
}

/// The regions as the clients' objectives: client `m` evaluates region `m`
/// at the dose `x` of the unit interval.
#[derive(Debug, Clone)]
pub struct CovidRegions {
    regions: Vec<Region>,
}

impl CovidRegions {
    /// The regions of [`regions`].
    pub fn new() -> Self {
        Self { regions: regions() }
    }

    /// Region `m`.
    pub fn region(&self, m: usize) -> Option<&Region> {
        self.regions.get(m)
    }
}

impl Default for CovidRegions {
    fn default() -> Self {
        Self::new()
    }
}

impl Problem for CovidRegions {
    fn clients(&self) -> usize {
        self.regions.len()
    }

    /// Deterministic: the observed value is the noise-free percentage.
    fn evaluate(
        &self,
        client: usize,
        unit: &[f64],
        _: &mut ChaCha8Rng,
    ) -> Result<Evaluation, TaskError> {
        let (Some(region), [x]) = (self.regions.get(client), unit) else {
            return Err(crate::error::config(
                "task",
                format!(
                    "{TASK_NAME}: client {client} of {}, a dose is one number (got {})",
                    self.regions.len(),
                    unit.len()
                ),
            ));
        };
        if !(0.0..=1.0).contains(x) {
            return Err(crate::error::config(
                "task",
                format!("{TASK_NAME}: the dose must be in [0, 1], got {x}"),
            ));
        }
        let v = region.infected_percentage(*x);
        Ok(Evaluation::exact(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region() -> Region {
        Region {
            population: 1e6,
            beta: 2.5 / 7.0,
            sigma: 0.25,
            gamma: 1.0 / 7.0,
            initial_infectious: 100.0,
            doses_per_day: 3_000.0,
            capacity_per_day: 8_000.0,
            full_efficacy: 0.9,
        }
    }

    #[test]
    fn the_population_is_conserved_at_every_step() {
        let r = region();
        for x in [0.0, 0.6, 0.87, 1.0] {
            let f = r.derivative(x);
            let mut y = r.initial_state();
            for _ in 0..2000 {
                y = rk4_step(&f, &y, 0.25);
                let total: f64 = y[..4].iter().sum();
                assert!((total - 1e6).abs() < 1e-6, "x = {x}: {total}");
                assert!(y.iter().all(|v| *v >= -1e-9), "x = {x}: {y:?}");
            }
        }
    }

    #[test]
    fn without_infection_or_vaccine_nothing_moves() {
        let r = Region {
            initial_infectious: 0.0,
            ..region()
        };
        // Below half a dose the vaccine has no effect: (N, 0, 0, 0, 0) is a fixed point.
        let y = r.simulate(0.3, 365.0);
        assert_eq!(y, [1e6, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(r.infected_percentage(0.3), 0.0);
    }

    #[test]
    fn exposed_and_infectious_decay_as_the_closed_form_without_transmission() {
        // β = 0: E(t) = E₀e^{−σt}, I(t) = I₀e^{−γt} + σE₀(e^{−σt} − e^{−γt})/(γ − σ).
        let r = Region {
            beta: 0.0,
            ..region()
        };
        let (s, g, e0) = (r.sigma, r.gamma, 100.0);
        for t in [1.0, 10.0, 30.0] {
            let y = rk4(r.derivative(0.0), r.initial_state(), t, STEP_DAYS);
            let e = e0 * (-s * t).exp();
            let i = e0 * (-g * t).exp() + s * e0 * ((-s * t).exp() - (-g * t).exp()) / (g - s);
            assert!((y[1] - e).abs() < 1e-6 * e0, "t = {t}: E {} vs {e}", y[1]);
            assert!((y[2] - i).abs() < 1e-6 * e0, "t = {t}: I {} vs {i}", y[2]);
        }
    }

    #[test]
    fn vaccination_alone_follows_its_implicit_solution() {
        // No infection: S' = −F S/(S + s₀), so S + s₀ ln S = S₀ + s₀ ln S₀ − F t.
        let r = Region {
            initial_infectious: 0.0,
            ..region()
        };
        let x = 0.9;
        let flow = r.efficacy(x) * r.vaccinated_per_day(x);
        let s0 = SUSCEPTIBLE_FLOOR * r.population;
        for t in [10.0, 100.0, 300.0] {
            let s = r.simulate(x, t)[0];
            let lhs = s + s0 * s.ln();
            let rhs = 1e6 + s0 * 1e6f64.ln() - flow * t;
            assert!((lhs - rhs).abs() < 1e-3, "t = {t}: {lhs} vs {rhs}");
        }
        // The efficacy and V(x) of App. E.2.
        assert_eq!(r.efficacy(0.5), 0.0);
        assert!((r.efficacy(1.0) - 0.9).abs() < 1e-15);
        assert!((r.efficacy(0.75) - 0.9 * 0.75).abs() < 1e-15);
        assert_eq!(r.vaccinated_per_day(1.0), 3_000.0);
        assert_eq!(r.vaccinated_per_day(0.25), 8_000.0);
    }

    #[test]
    fn the_final_size_relation_holds_without_vaccine() {
        // No vaccine: ln(S₀/S∞) = β(S₀ + E₀ + I₀ − S∞)/(γN) once E, I → 0.
        let r = region();
        let y = rk4(r.derivative(0.0), r.initial_state(), 3000.0, STEP_DAYS);
        assert!(y[1] + y[2] < 1e-6, "{y:?}");
        let (s0, s_inf) = (1e6 - 200.0, y[0]);
        let lhs = (s0 / s_inf).ln();
        let rhs = r.beta * (1e6 - s_inf) / (r.gamma * 1e6);
        assert!((lhs - rhs).abs() < 1e-8, "{lhs} vs {rhs}");
        // The cumulative infections are everyone who left S (no one was vaccinated).
        assert!((y[4] - (s0 - s_inf)).abs() < 1e-6);
    }

    #[test]
    fn the_best_dose_is_where_the_vaccination_flow_peaks() {
        // Without a binding capacity the flow α(x)D/x peaks at √3/2; with a
        // capacity below D/x the full dose is best.
        let grid: Vec<f64> = (0..=100).map(|i| f64::from(i) / 100.0).collect();
        let best = |r: &Region| {
            grid.iter()
                .copied()
                .min_by(|a, b| {
                    r.infected_percentage(*a)
                        .total_cmp(&r.infected_percentage(*b))
                })
                .unwrap()
        };
        let free = region();
        assert!((best(&free) - 0.87).abs() < 0.011, "{}", best(&free));
        let capped = Region {
            capacity_per_day: 3_000.0,
            ..region()
        };
        assert_eq!(best(&capped), 1.0);
        // Half a dose or less is no vaccine at all.
        assert_eq!(free.infected_percentage(0.2), free.infected_percentage(0.5));
        assert!(free.infected_percentage(0.87) < free.infected_percentage(0.5) - 10.0);
    }

    #[test]
    fn the_regions_are_fixed_and_heterogeneous() {
        let a = CovidRegions::new();
        assert_eq!(a.clients(), REGIONS);
        assert_eq!(a.region(7), CovidRegions::new().region(7));
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let v: Vec<f64> = (0..10)
            .map(|m| a.evaluate(m, &[0.9], &mut rng).unwrap().observed)
            .collect();
        assert!(v.iter().all(|p| (0.0..=100.0).contains(p)), "{v:?}");
        let spread = v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            - v.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(spread > 5.0, "{v:?}");
        assert!(a.evaluate(0, &[1.5], &mut rng).is_err());
        assert!(a.evaluate(0, &[0.5, 0.5], &mut rng).is_err());
        assert!(a.evaluate(REGIONS, &[0.5], &mut rng).is_err());
    }
}
