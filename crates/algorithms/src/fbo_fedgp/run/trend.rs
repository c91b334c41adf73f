//! The federation's global trend: its releases (the quadratic trend's sums,
//! spaced so that they cannot determine points) and their units.

use super::*;

/// How many times [`determinable_points`] a release of
/// [`GlobalTrend::QuadraticSpaced`] must hold in new unclipped points of
/// others, in every member's view: the count of unknowns alone is a
/// necessary condition, so the release rule keeps a margin above it.
const TREND_RELEASE_MARGIN: usize = 2;

/// [`GlobalTrend::QuadraticSpaced`] between releases.
#[derive(Debug, Default)]
pub(super) struct SpacedTrend {
    /// The last released trend, in utility units (`u ≈ m(x)`), unclamped.
    kept: Option<QuadraticTrend>,
    /// When the coordinator's rule lets the sums out again.
    releases: TrendReleases,
}

/// The factor `c` of a warping linear inside its clip (`w(u) = c·u` there),
/// which a kept trend needs to change standardisation; `None` for a
/// logarithmic one.
pub(super) fn linear_warp_factor(warp: OutputWarping) -> Option<f64> {
    match warp {
        OutputWarping::None => Some(1.0),
        OutputWarping::Clipped(t) => Some(1.0 / t),
        OutputWarping::SignedLog | OutputWarping::ScaledLog(_) => None,
    }
}

/// A trend fitted to standardised warped utilities `z = (c·u − μ)/σ` of a
/// warping linear inside its clip (`c` from [`linear_warp_factor`]) as a
/// trend of the utility itself: `u = (σ/c)·z + μ/c`.
pub(super) fn in_utility_units(
    trend: &QuadraticTrend,
    factor: f64,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(trend.affine(scaling.std / factor, scaling.mean / factor)?)
}

/// The inverse of [`in_utility_units`] for another (or the same) warping
/// and standardisation: `z = (c/σ)·u − μ/σ`.
pub(super) fn in_standardised_units(
    trend: &QuadraticTrend,
    factor: f64,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(trend.affine(factor / scaling.std, -scaling.mean / scaling.std)?)
}

/// A trend in standardised units clamped to the standardised clip of a
/// clipped warping (where the values it was fitted to stop).
fn clamped_to_warp(
    trend: QuadraticTrend,
    warp: OutputWarping,
    scaling: &OutputScaling,
) -> Result<QuadraticTrend, AlgorithmError> {
    Ok(match warp {
        OutputWarping::Clipped(_) => trend.clamped(
            scaling.standardise(warp.apply(f64::NEG_INFINITY)),
            scaling.standardise(warp.apply(f64::INFINITY)),
        )?,
        _ => trend,
    })
}

/// The ridge of the global quadratic trend's least squares, relative to the
/// mean diagonal of its Gram matrix: negligible once the trend takes effect
/// (twice as many points as weights), it only keeps the solve defined.
const TREND_RIDGE: f64 = 1e-10;

impl<'a, K: Kernel> Federation<'a, K> {
    /// The federation's quadratic trend ([`GlobalTrend::Quadratic`]) from
    /// one secure sum of every member's [`Client::trend_contribution`], in
    /// standardised units, clamped to the standardised clip of a clipped
    /// warping; `None` while the sums hold fewer than twice as many points
    /// as the trend has weights.
    pub(super) fn quadratic_trend(
        &self,
        server: &mut Server<'_>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<Option<QuadraticTrend>, AlgorithmError> {
        let Some(trend) = self.fitted_trend(server, warp, scaling)?.0 else {
            return Ok(None);
        };
        Ok(Some(clamped_to_warp(trend, warp, scaling)?))
    }

    /// One secure sum of every member's [`Client::trend_contribution`]: its
    /// least-squares trend in standardised units, unclamped (`None` while
    /// the sums hold fewer than twice as many points as the trend has
    /// weights), and the number of points the sums hold.
    fn fitted_trend(
        &self,
        server: &mut Server<'_>,
        warp: OutputWarping,
        scaling: &OutputScaling,
    ) -> Result<(Option<QuadraticTrend>, f64), AlgorithmError> {
        let (task, n_max, dim) = (self.task, self.params.max_points(), self.dim());
        let contributions = self
            .clients
            .iter()
            .map(|c| {
                Ok((
                    c.id().clone(),
                    c.trend_contribution(task, warp, scaling, n_max)?,
                ))
            })
            .collect::<Result<Vec<_>, AlgorithmError>>()?;
        let sums = TrendSums::unpack(dim, &server.aggregate("trend sums", contributions)?)?;
        let min_points = 2.0 * quadratic_len(dim) as f64;
        Ok((
            sums.fit(n_max, min_points, TREND_RIDGE),
            sums.points(n_max).round(),
        ))
    }

    /// The federation's trend under [`GlobalTrend::QuadraticSpaced`] in a
    /// round whose members each hold `held` points, and whether its sums
    /// were released in this round. A release needs, in every member's
    /// view, `TREND_RELEASE_MARGIN ·` [`determinable_points`] unclipped
    /// points of others that the last release did not hold: the public
    /// schedule bounds them first (the others' new points, at most
    /// `(members − 1)·Δheld`), then a one-value secure sum of the unclipped
    /// counts (its increase less this member's own `Δheld`, which a member
    /// can subtract). Between releases the kept trend is re-expressed in
    /// this round's warping and standardisation.
    pub(super) fn spaced_trend(
        &self,
        server: &mut Server<'_>,
        state: &mut SpacedTrend,
        warp: OutputWarping,
        scaling: &OutputScaling,
        held: usize,
    ) -> Result<(Option<QuadraticTrend>, bool), AlgorithmError> {
        let (task, n_max, dim) = (self.task, self.params.max_points(), self.dim());
        let factor = linear_warp_factor(warp).ok_or_else(|| {
            crate::error::config(
                "global_trend",
                "quadratic-spaced needs a warping linear inside its clip",
            )
        })?;
        let needed = (TREND_RELEASE_MARGIN * determinable_points(dim)) as f64;
        let mut refitted = false;
        if state
            .releases
            .worth_counting(self.members.len(), held, needed)
        {
            let counts = self
                .clients
                .iter()
                .map(|c| {
                    (
                        c.id().clone(),
                        vec![c.unclipped_count(task, warp) as f64 / n_max],
                    )
                })
                .collect();
            let points = (server.aggregate("trend count", counts)?[0] * n_max).round();
            if state.releases.due(points, held, needed) {
                let (fitted, summed) = self.fitted_trend(server, warp, scaling)?;
                // The release rule counted `points`; sums over other points
                // (a false count, or a round with other contributors) end the
                // run before anything more is decrypted.
                if (summed - points).abs() > 0.5 {
                    return Err(crate::error::config(
                        "global_trend",
                        format!(
                            "the trend's sums hold {summed} points but the count sum said \
                             {points}: a member's count or sums are false, or the two rounds \
                             had different contributors"
                        ),
                    ));
                }
                // Released whether or not it fits: the sums are public now.
                state.releases.released(points, held);
                if let Some(trend) = fitted {
                    state.kept = Some(in_utility_units(&trend, factor, scaling)?);
                    refitted = true;
                }
            }
        }
        let current = match &state.kept {
            Some(kept) => Some(clamped_to_warp(
                in_standardised_units(kept, factor, scaling)?,
                warp,
                scaling,
            )?),
            None => None,
        };
        Ok((current, refitted))
    }
}
