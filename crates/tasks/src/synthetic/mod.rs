//! Synthetic federations whose clients' functions are drawn from a seed:
//!
//! - [`gp_function`]: a function sampled from a GP prior (random Fourier features);
//! - [`gp_sample`]: paper 000's federation of perturbed copies of one GP sample
//!   (`gp-sample`, `gp-sample-<seed>`);
//! - [`kernel_sum`]: paper 001's kernel sums, drawn afresh per trial
//!   (`kernel-sum-se`, `kernel-sum-matern`).

pub mod gp_function;
pub mod gp_sample;
pub mod kernel_sum;
