//! `fedhe report` run as a process on a small hand-made `results.json`.

// Not every helper of the shared module is needed here.
#[allow(dead_code)]
mod common;
use common::{assert_fails_with, fedhe};
use serde_json::json;
use std::path::PathBuf;

/// A fresh directory unique to this process and `name`.
fn temp_dir(name: &str) -> PathBuf {
    let mut p = std::env::temp_dir();
    p.push(format!("fedhe-report-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Eight seeds of three methods on two tasks. On cec2005-f1, random-search is
/// worse than fbo-fedgp on every seed by distinct amounts (a significant `−`),
/// local-only alternates (`≈`). On cec2005-f2, local-only is better on every
/// seed (`+`). A simulator's extra fields are present and must be ignored.
fn bests() -> Vec<(&'static str, &'static str, [f64; 8])> {
    let base = [
        -440.0, -445.5, -430.25, -449.0, -438.0, -441.75, -447.5, -436.0,
    ];
    let shifted = |k: f64, step: f64| {
        let mut out = base;
        for (i, v) in out.iter_mut().enumerate() {
            *v += k + step * i as f64;
        }
        out
    };
    let mut alternating = base;
    for (i, v) in alternating.iter_mut().enumerate() {
        *v += if i % 2 == 0 {
            1.0 + i as f64
        } else {
            -1.5 - i as f64
        };
    }
    vec![
        ("cec2005-f1", "fbo-fedgp", base),
        ("cec2005-f1", "random-search", shifted(50.0, 3.0)),
        ("cec2005-f1", "local-only", alternating),
        ("cec2005-f2", "fbo-fedgp", shifted(400.0, 0.0)),
        ("cec2005-f2", "local-only", shifted(390.0, -0.5)),
        ("cec2005-f2", "random-search", shifted(400.0, 0.25)),
    ]
}

fn results_json() -> serde_json::Value {
    let mut runs = Vec::new();
    for (task, method, values) in bests() {
        for (seed, best) in values.iter().enumerate() {
            runs.push(json!({
                "task": task, "method": method, "seed": seed, "members": 10, "rounds": 3,
                "best": best, "best_per_member": [best, best + 1.0],
                "trace": [best + 20.0, best + 5.0, best],
                "seconds": 0.5, "bytes_sent_per_member": 1000, "aggregations": 2,
                "some_future_field": {"nested": true}
            }));
        }
    }
    json!({ "runs": runs })
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// The cells of the Markdown table row that starts with `| {first} | {second} |`.
fn row<'a>(report: &'a str, first: &str, second: &str) -> Vec<&'a str> {
    let prefix = format!("| {first} | {second} |");
    let line = report
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no row {prefix:?} in\n{report}"));
    line.trim_matches('|').split('|').map(str::trim).collect()
}

#[test]
fn report_numbers_are_the_numbers_of_results_json() {
    let dir = temp_dir("numbers");
    std::fs::write(dir.join("results.json"), results_json().to_string()).unwrap();
    let table = dir.join("paper.csv");
    std::fs::write(
        &table,
        "# test table\ntask,method,mean,std\n\
         cec2005-f1,A,-300,\ncec2005-f1,B,-500,\ncec2005-f1,FBO-FedGP,-440,1.5\n\
         cec2005-f2,A,0,\ncec2005-f2,B,100,\ncec2005-f2,FBO-FedGP,-100,\n\
         cec2005-f3,A,1,\n",
    )
    .unwrap();
    let out = fedhe(&[
        "report",
        dir.to_str().unwrap(),
        "--baseline-table",
        table.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();

    // Every (task, method): n, mean and std as computed here from the inputs.
    for (task, method, values) in bests() {
        let cells = row(&report, task, method);
        let (mean, std) = mean_std(&values);
        assert_eq!(cells[2], "8", "{cells:?}");
        let printed_mean: f64 = cells[3].parse().unwrap();
        let printed_std: f64 = cells[4].parse().unwrap();
        assert!(
            ((printed_mean - mean) / mean).abs() < 1e-5,
            "{cells:?} vs {mean}"
        );
        assert!(
            ((printed_std - std) / std).abs() < 1e-5,
            "{cells:?} vs {std}"
        );
    }

    // Table 1 style: columns local-only, random-search, then the reference.
    let header = report
        .lines()
        .find(|l| l.starts_with("| task | local-only"))
        .unwrap();
    assert!(header.contains("fbo-fedgp (reference)"), "{header}");
    let f1 = report
        .lines()
        .find(|l| l.starts_with("| cec2005-f1 | ") && l.contains('±'))
        .unwrap();
    let cells: Vec<&str> = f1.trim_matches('|').split('|').map(str::trim).collect();
    assert!(cells[1].ends_with('≈') && cells[2].ends_with('−'), "{f1}");
    let f2 = report
        .lines()
        .find(|l| l.starts_with("| cec2005-f2 | ") && l.contains('±'))
        .unwrap();
    let cells: Vec<&str> = f2.trim_matches('|').split('|').map(str::trim).collect();
    assert!(cells[1].ends_with('+'), "{f2}");
    // f2's random-search is higher by 0.25·i, zero at seed 0: 7 non-zero of 8
    // pairs, sign-flip p = 2/128, Holm ×2 → 1/32 < 0.05: `−`.
    assert!(cells[2].ends_with('−'), "{f2}");
    let tally = row(&report, "+/≈/−", "1/1/0");
    assert_eq!(tally[2], "0/0/2");

    // The per-test row: all eight f1 random-search differences negative.
    let test = row(&report, "cec2005-f1", "random-search");
    assert!(test.len() == 5, "the summary row comes first: {test:?}");
    let tests_line = report
        .lines()
        .filter(|l| l.starts_with("| cec2005-f1 | random-search |"))
        .nth(1)
        .unwrap();
    let cells: Vec<&str> = tests_line
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(&cells[2..5], ["8", "8", "0"], "{tests_line}");
    assert_eq!(cells[5], "0.0078", "p = 2/256: {tests_line}");
    assert_eq!(cells[7], "-1.000", "{tests_line}");
    assert_eq!(cells[8], "exact");

    // Against the paper: f1 fedhe mean vs best baseline −500 (no), paper −440.
    let (f1_mean, _) = mean_std(&bests()[0].2);
    let paper_f1 = report
        .lines()
        .find(|l| l.starts_with("| cec2005-f1 | -300.00 |"))
        .unwrap();
    assert!(paper_f1.contains("-440.00 ± 1.50"), "{paper_f1}");
    let expect_f1 = if f1_mean <= -440.0 {
        "| no | yes |"
    } else {
        "| no | no |"
    };
    assert!(
        paper_f1.ends_with(expect_f1),
        "{paper_f1} (fedhe mean {f1_mean})"
    );
    assert!(
        report.contains("| cec2005-f3 | 1.00 | – | – | not run | – | – |"),
        "{report}"
    );
    // f2: fedhe mean −40 ≤ best baseline 0 yes, ≤ paper −100 no.
    let n_le_paper = usize::from(f1_mean <= -440.0);
    assert!(
        report.contains("best published baseline on **1 of 2**"),
        "{report}"
    );
    assert!(
        report.contains(&format!("`FBO-FedGP` on **{n_le_paper} of 2**")),
        "{report}"
    );

    // Plots exist, are PNGs, and are linked.
    for task in ["cec2005-f1", "cec2005-f2"] {
        let png = std::fs::read(dir.join("plots").join(format!("{task}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(report.contains(&format!("![{task}](plots/{task}.png)")));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn refuses_bad_inputs_with_one_line() {
    let dir = temp_dir("missing");
    assert_fails_with(&fedhe(&["report", dir.to_str().unwrap()]), "results.json");

    let dir = temp_dir("malformed");
    std::fs::write(dir.join("results.json"), "{\"runs\": [").unwrap();
    assert_fails_with(&fedhe(&["report", dir.to_str().unwrap()]), "malformed JSON");

    let dir = temp_dir("empty");
    std::fs::write(dir.join("results.json"), "{\"runs\": []}").unwrap();
    assert_fails_with(
        &fedhe(&["report", dir.to_str().unwrap()]),
        "\"runs\" is empty",
    );

    let dir = temp_dir("traces");
    let mut results = results_json();
    results["runs"][5]["trace"] = json!([1.0, 0.5]);
    std::fs::write(dir.join("results.json"), results.to_string()).unwrap();
    assert_fails_with(
        &fedhe(&["report", dir.to_str().unwrap()]),
        "inconsistent trace lengths",
    );

    let dir = temp_dir("reference");
    std::fs::write(dir.join("results.json"), results_json().to_string()).unwrap();
    assert_fails_with(
        &fedhe(&["report", dir.to_str().unwrap(), "--reference", "nope"]),
        "reference method \"nope\"",
    );
    let table = dir.join("bad.csv");
    std::fs::write(&table, "task,method,mean\n").unwrap();
    assert_fails_with(
        &fedhe(&[
            "report",
            dir.to_str().unwrap(),
            "--baseline-table",
            table.to_str().unwrap(),
        ]),
        "header",
    );
    for name in ["missing", "malformed", "empty", "traces", "reference"] {
        let _ = std::fs::remove_dir_all(temp_dir(name));
    }
}

/// A reference labelled as a variant (here `clipped-grow`, FBO-FedGP with
/// other settings) matches no column of the published table by name, so the
/// paper's own FBO-FedGP column counted as a baseline; `--paper-method` names
/// it. On f2 fedhe's mean (−41) is ≤ the baselines A (0) and B (100) but not
/// ≤ FBO-FedGP (−100).
#[test]
fn paper_method_names_the_papers_column_for_a_labelled_reference() {
    let dir = temp_dir("paper-method");
    let mut results = results_json();
    for run in results["runs"].as_array_mut().unwrap() {
        if run["method"] == "fbo-fedgp" {
            run["method"] = json!("clipped-grow");
        }
    }
    std::fs::write(dir.join("results.json"), results.to_string()).unwrap();
    let table = dir.join("paper.csv");
    std::fs::write(
        &table,
        "task,method,mean,std
         cec2005-f1,A,-300,
cec2005-f1,B,-500,
cec2005-f1,FBO-FedGP,-440,1.5
         cec2005-f2,A,0,
cec2005-f2,B,100,
cec2005-f2,FBO-FedGP,-100,
",
    )
    .unwrap();
    let (dir_arg, table_arg) = (dir.to_str().unwrap(), table.to_str().unwrap());
    // `fedhe report` on the labelled reference with the table and `extra`.
    let run = |extra: &[&str]| {
        let mut args = vec![
            "report",
            dir_arg,
            "--reference",
            "clipped-grow",
            "--baseline-table",
            table_arg,
        ];
        args.extend_from_slice(extra);
        fedhe(&args)
    };
    let report = |extra: &[&str]| {
        let out = run(extra);
        assert!(out.status.success(), "{out:?}");
        std::fs::read_to_string(dir.join("report.md")).unwrap()
    };
    let f2_row = |report: &str| {
        report
            .lines()
            .find(|l| l.starts_with("| cec2005-f2 | 0 |"))
            .unwrap_or_else(|| panic!("{report}"))
            .to_string()
    };
    let unnamed = report(&[]);
    assert!(f2_row(&unnamed).ends_with("| no | – |"), "{unnamed}");
    assert!(unnamed.contains("(none: no column matches the reference)"));
    let named = report(&["--paper-method", "fbo-fedgp"]);
    assert!(f2_row(&named).ends_with("| yes | no |"), "{named}");
    assert!(
        named.contains("lowest of the table's other methods (A, B)"),
        "{named}"
    );
    // Refused: a method the table lacks, or no table at all.
    assert_fails_with(&run(&["--paper-method", "nope"]), "--paper-method \"nope\"");
    assert_fails_with(
        &fedhe(&[
            "report",
            dir_arg,
            "--reference",
            "clipped-grow",
            "--paper-method",
            "FBO-FedGP",
        ]),
        "--baseline-table",
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn peers_are_set_beside_the_reference_with_rank_sum_tests() {
    let dir = temp_dir("peers");
    std::fs::write(dir.join("results.json"), results_json().to_string()).unwrap();
    // The peer ran f1 only, five seeds, each below every fbo-fedgp seed
    // (fbo-fedgp's worst is −430.25): significantly better.
    let runs: serde_json::Map<String, serde_json::Value> = (0..5)
        .map(|seed| {
            let best = -449.9 + 0.1 * seed as f64;
            (
                format!("f1/{seed}"),
                json!({"function": "f1", "seed": seed, "best": best, "trace": [0.0, best]}),
            )
        })
        .collect();
    let peer = dir.join("peer_lib.json");
    std::fs::write(
        &peer,
        json!({"method": "a library's GP-EI", "runs": runs}).to_string(),
    )
    .unwrap();
    let out = fedhe(&[
        "report",
        dir.to_str().unwrap(),
        "--peers",
        peer.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(report.contains("## Against peers"), "{report}");
    assert!(report.contains("### peer_lib"), "the file's stem names it");
    // fbo-fedgp's f1 median: the mean of its 4th and 5th values in order.
    let mut ours = bests()[0].2;
    ours.sort_by(f64::total_cmp);
    let median = (ours[3] + ours[4]) / 2.0;
    // Ten against five, completely separated: U₁ = 8·5 = 40 of 40 pairs
    // above, exact p = 2/C(13, 5) = 2/1287; one task, so Holm leaves it.
    let p = 2.0 / 1287.0;
    let line = format!(
        "| cec2005-f1 | {median:.2} (8) | -449.70 (5) | 40 | {p:.4} (exact) | {p:.4} | + |"
    );
    assert!(report.contains(&line), "{line}\n{report}");
    assert!(
        report.contains("`fbo-fedgp`'s median ≤ peer_lib's on **0 of 1** tasks"),
        "{report}"
    );
    assert!(report.contains("+/≈/− = 1/0/0"), "{report}");
    assert!(
        report.contains("peer_lib has no runs on `cec2005-f2`"),
        "{report}"
    );

    // A peer with nothing in common, or a malformed run, is refused.
    let other = dir.join("other.json");
    std::fs::write(
        &other,
        json!({"runs": {"f9/0": {"function": "f9", "seed": 0, "best": 1.0}}}).to_string(),
    )
    .unwrap();
    let args = |p: &std::path::Path| {
        fedhe(&[
            "report",
            dir.to_str().unwrap(),
            "--peers",
            p.to_str().unwrap(),
        ])
    };
    assert_fails_with(&args(&other), "no task in common");
    std::fs::write(
        &other,
        json!({"runs": {"f1/0": {"function": "f1", "seed": 3, "best": 1.0}}}).to_string(),
    )
    .unwrap();
    assert_fails_with(&args(&other), "\"function/seed\"");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs on a typed space carry their best point by name (issue 46): the
/// report shows, per task and method, the point of the best seed (the
/// lowest value of a minimised task), named as the objective received it.
#[test]
fn the_report_names_the_best_point_of_each_method() {
    let dir = temp_dir("points");
    let mut runs = Vec::new();
    for (method, values) in [
        ("fbo-fedgp", [3.5, -1.25, 2.0]),
        ("independent-bo", [0.5, 4.0, 1.0]),
    ] {
        for (seed, best) in values.iter().enumerate() {
            runs.push(json!({
                "task": "func2c", "method": method, "seed": seed, "rounds": 2,
                "best": best, "trace": [best + 1.0, best],
                "best_point": {"value": best, "params": {
                    "x1": 0.25 * seed as f64, "kernel": format!("k{seed}"), "depth": 7 + seed
                }}
            }));
        }
    }
    // A task without a space has no point, and no row.
    runs.push(json!({"task": "cec2005-f1", "method": "fbo-fedgp", "seed": 0, "best": 1.0, "trace": [1.0]}));
    std::fs::write(
        dir.join("results.json"),
        json!({ "runs": runs }).to_string(),
    )
    .unwrap();
    let out = fedhe(&["report", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let section = report
        .split("## Best point per task and method")
        .nth(1)
        .unwrap_or_else(|| panic!("no best-point section in\n{report}"));
    let fbo = row(section, "func2c", "fbo-fedgp");
    assert_eq!(fbo[2].parse::<f64>().unwrap(), -1.25, "{fbo:?}");
    assert_eq!(fbo[3], "1", "{fbo:?}");
    assert_eq!(fbo[4], "depth = 8, kernel = k1, x1 = 0.25", "{fbo:?}");
    let lone = row(section, "func2c", "independent-bo");
    assert_eq!(lone[2].parse::<f64>().unwrap(), 0.5, "{lone:?}");
    assert_eq!(lone[4], "depth = 7, kernel = k0, x1 = 0.0", "{lone:?}");
    assert!(
        !section
            .split("\n## ")
            .next()
            .unwrap()
            .contains("cec2005-f1"),
        "{section}"
    );
}
