//! The black-box problems a client evaluates, in one place (issue 17): what a
//! task is, the families of tasks, and the one registry of their names.
//!
//! - [`problem`]: the [`Problem`] trait (an objective per client on the unit
//!   cube), one [`Evaluation`], and [`Sense`];
//! - [`task`]: [`Task`], a named problem with its sense and optimum, shared
//!   (one benchmark for every client) or per client;
//! - [`registry`]: [`by_name`] and [`list`], every name `fedhe simulate`,
//!   `fedhe report`, `fedhe objective` and the agent accept;
//! - [`benchmarks`]: CEC-2005 F1-F20, Garland and DoubleSine;
//! - [`synthetic`]: the seeded federations, paper 000's GP sample and paper
//!   001's kernel sums;
//! - [`space`]: typed, named search spaces and their one encoding onto the
//!   unit cube (issue 46);
//! - [`mixed`]: the mixed benchmarks (Func2C, Func3C, Ackley-5C), each
//!   searching its own typed space;
//! - [`offsets`]: per-client offsets of a shared task (paper 003's local
//!   objectives);
//! - [`seir`]: the COVID-19 vaccine-dosage task of paper 003 (`covid-seir`);
//! - `svm` (feature `svm`, on by default): the real federated SVM tasks of
//!   paper 004 (`pima-svm`, …), which train linfa's SVM.
//!
//! The crate sits below `fedhe-algorithms` (which depends on it without the
//! `svm` feature) and depends only on `fedhe-gp` of the workspace.
//! Convention: the unit cube is what the models see; a shared task maps it to
//! its benchmark's box.

pub mod benchmarks;
pub mod error;
pub mod mixed;
pub mod offsets;
pub mod problem;
pub mod registry;
pub mod seir;
pub mod space;
#[cfg(feature = "svm")]
pub mod svm;
pub mod synthetic;
pub mod task;

pub use error::TaskError;
pub use problem::{Evaluation, Problem, Sense};
pub use registry::{by_name, info, list, TaskInfo};
pub use space::{Space, SpaceSpec};
#[cfg(feature = "svm")]
pub use svm::{names, spec, FederatedSvm, SvmHyperParams, SvmKernel, TaskSpec, TASKS};
pub use task::Task;
