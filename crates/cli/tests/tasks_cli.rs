//! `fedhe simulate` on a real federated task (`fedhe_tasks`): the task name
//! resolves, each member reports its own validation error, and a member count
//! other than the task's institutions is refused.

#[allow(dead_code)]
mod common;
use common::{assert_fails_with, fedhe, temp_file};

fn config(members: usize) -> String {
    format!(
        r#"
name = "pima-small"
functions = ["pima-svm"]
dim = 2
seeds = 1
channel = "plain"

[algorithm]
members = {members}
rounds = 3
initial_points = 2
support_size = 4

[[runs]]
method = "fbo-fedgp"
"#
    )
}

#[test]
fn a_federated_task_runs_and_reports_validation_errors() {
    let path = temp_file("pima-small.toml", &config(5));
    let mut out_dir = std::env::temp_dir();
    out_dir.push(format!("fedhe-tasks-test-{}", std::process::id()));
    let out = fedhe(&[
        "simulate",
        "--config",
        &path,
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    let run = &results["runs"][0];
    assert_eq!(run["task"], "pima-svm");
    let per_member = run["best_per_member"].as_array().unwrap();
    assert_eq!(per_member.len(), 5);
    for v in per_member {
        let v = v.as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{v}");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn wrong_member_counts_and_dimensions_are_refused() {
    let six = temp_file("pima-six.toml", &config(6));
    assert_fails_with(
        &fedhe(&["simulate", "--config", &six, "--out", "/tmp/fedhe-unused"]),
        "members",
    );
    let dim3 = temp_file("pima-dim3.toml", &config(5).replace("dim = 2", "dim = 3"));
    assert_fails_with(
        &fedhe(&["simulate", "--config", &dim3, "--check"]),
        "dim must be 2",
    );
}
