//! Benchmark objectives (all maximised by the BO layer; CEC-2005 functions are
//! minimisation problems and are exposed as such — negate them to maximise).

pub mod cec2005;

use nalgebra::DMatrix;

/// Copies `rows` of `x` into a new matrix.
pub fn select_rows(x: &DMatrix<f64>, rows: &[usize]) -> DMatrix<f64> {
    DMatrix::from_fn(rows.len(), x.ncols(), |i, j| x[(rows[i], j)])
}
