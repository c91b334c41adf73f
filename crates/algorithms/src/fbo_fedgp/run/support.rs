//! The support set: public, random or by federated clustering, and its
//! growth from the global posterior.

use super::*;

impl<'a, K: Kernel> Federation<'a, K> {
    /// The support selection this method uses (`random-support` forces
    /// [`SupportSelection::Random`]).
    pub(super) fn support_selection(&self) -> SupportSelection {
        if self.method == Method::RandomSupport {
            SupportSelection::Random
        } else {
            self.params.support_selection_resolved()
        }
    }

    /// `k` well-spread public points: k-means++ over public uniform points
    /// (the starting centres of secure k-means; [`SupportSelection::Public`]'s
    /// starting set).
    fn public_centres(&mut self, k: usize) -> Result<DMatrix<f64>, AlgorithmError> {
        let dim = self.dim();
        let pool = DMatrix::from_fn(1024.max(4 * k), dim, |_, _| self.public.gen::<f64>());
        Ok(kmeans_plus_plus(&pool, k, &mut self.public)?)
    }

    /// [`SupportSelection::Public`]'s growth at round `t`: `support` and `add`
    /// more points, those of a penalised batch on the last global posterior
    /// (inputs every member holds alike, as for [`GlobalSteps::Penalised`],
    /// with a stream of its own), or public uniform points before the first
    /// global step. A point within [`SUPPORT_MIN_DISTANCE`] of one already in
    /// the set (a batch may start at a support point and stay there) is
    /// replaced by a public uniform point, which keeps `K_SS` well-conditioned.
    pub(super) fn grow_public_support(
        &mut self,
        support: &DMatrix<f64>,
        global: Option<&GlobalPosterior<K>>,
        step: &AcquisitionStep,
        t: usize,
        add: usize,
    ) -> Result<DMatrix<f64>, AlgorithmError> {
        let dim = self.dim();
        let proposed = match global {
            Some(g) if add > 0 => {
                let seed = mix(mix(self.seed, u64::MAX - 2), t as u64);
                self.penalised_batch(g, step, t, add, seed)?
            }
            _ => Vec::new(),
        };
        let mut rows: Vec<Vec<f64>> = support
            .row_iter()
            .map(|r| r.iter().copied().collect())
            .collect();
        let far = |z: &[f64], rows: &[Vec<f64>]| {
            rows.iter().all(|r| {
                r.iter().zip(z).map(|(a, b)| (a - b).powi(2)).sum::<f64>()
                    >= SUPPORT_MIN_DISTANCE.powi(2)
            })
        };
        for i in 0..add {
            let z = match proposed.get(i) {
                Some(z) if z.len() == dim && far(z, &rows) => z.clone(),
                _ => (0..dim).map(|_| self.public.gen::<f64>()).collect(),
            };
            rows.push(z);
        }
        Ok(DMatrix::from_fn(rows.len(), dim, |i, j| rows[i][j]))
    }

    pub(super) fn select_support(
        &mut self,
        server: &mut Server<'_>,
        k: usize,
    ) -> Result<DMatrix<f64>, AlgorithmError> {
        let p = self.params;
        let dim = self.dim();
        match self.support_selection() {
            SupportSelection::Random => Ok(uniform_random_support(
                &Bounds::unit(dim)?,
                k,
                &mut self.public,
            )),
            SupportSelection::Public => self.public_centres(k),
            // `Auto` is resolved by `support_selection`; it never gets here.
            SupportSelection::SecureKmeans | SupportSelection::Auto => {
                let mut centres = self.public_centres(k)?;
                let n_max = p.max_points();
                for _ in 0..p.support.kmeans_max_iters {
                    let contributions = self
                        .clients
                        .iter()
                        .map(|c| (c.id().clone(), c.kmeans_contribution(&centres, n_max)))
                        .collect();
                    let sum = server.aggregate("k-means sums and counts", contributions)?;
                    let (next, shift) = super::super::kmeans_update(&centres, &sum)?;
                    centres = next;
                    if shift < p.support.kmeans_tol {
                        break;
                    }
                }
                Ok(centres)
            }
            SupportSelection::PaperClustering => {
                let mut local = Vec::with_capacity(self.clients.len());
                for c in self.clients.iter_mut() {
                    let centres =
                        c.local_centres(k, p.support.kmeans_tol, p.support.kmeans_max_iters)?;
                    server.record_plaintext(c.id(), (centres.len() * 8) as u64);
                    local.push(centres);
                }
                let pooled: usize = local.iter().map(DMatrix::nrows).sum();
                if pooled < k {
                    return Err(crate::error::config(
                        "support_size",
                        format!("|S| = {k} exceeds the {pooled} pooled local centres"),
                    ));
                }
                let seed_client = self.public.gen_range(0..local.len());
                Ok(global_clustering(
                    &local,
                    seed_client,
                    k,
                    p.support.kmeans_tol,
                    p.support.kmeans_max_iters,
                )?
                .centres)
            }
        }
    }
}
