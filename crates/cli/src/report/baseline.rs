//! Published results to put beside fedhe's: the `--baseline-table` CSV.
//!
//! Format: UTF-8 text; lines starting with `#` and blank lines are comments
//! (for provenance); the first other line is the header `task,method,mean,std`;
//! then one row per (task, method). `std` may be empty (the paper's Table 1
//! gives means only). Tasks are named as `fedhe objective list` names them;
//! methods keep the paper's names. Example:
//!
//! ```text
//! # FBO-FedGP paper, Table 1
//! task,method,mean,std
//! cec2005-f1,EPPBO,27.33,
//! cec2005-f1,FBO-FedGP,-268.49,
//! ```

use std::collections::BTreeMap;

/// One published value.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineValue {
    /// Mean best value.
    pub mean: f64,
    /// Its standard deviation, when published.
    pub std: Option<f64>,
}

/// A parsed baseline table.
#[derive(Clone, Debug, Default)]
pub struct BaselineTable {
    /// Methods in the order of their first appearance (the paper's column order).
    pub methods: Vec<String>,
    /// task → method → value.
    pub values: BTreeMap<String, BTreeMap<String, BaselineValue>>,
}

impl BaselineTable {
    /// Parses the CSV text; the error names the line and what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut table = Self::default();
        let mut header_seen = false;
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            if !header_seen {
                if fields != ["task", "method", "mean", "std"] {
                    return Err(format!(
                        "line {line_no}: expected the header \"task,method,mean,std\", found {line:?}"
                    ));
                }
                header_seen = true;
                continue;
            }
            if fields.len() != 4 {
                return Err(format!(
                    "line {line_no}: expected 4 fields (task,method,mean,std), found {}",
                    fields.len()
                ));
            }
            let (task, method) = (fields[0], fields[1]);
            if task.is_empty() || method.is_empty() {
                return Err(format!("line {line_no}: empty task or method"));
            }
            let number = |name: &str, s: &str| -> Result<f64, String> {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("line {line_no}: {name} {s:?} is not a finite number"))
            };
            let mean = number("mean", fields[2])?;
            let std = match fields[3] {
                "" => None,
                s => Some(number("std", s)?),
            };
            if !table.methods.iter().any(|m| m == method) {
                table.methods.push(method.to_string());
            }
            let previous = table
                .values
                .entry(task.to_string())
                .or_default()
                .insert(method.to_string(), BaselineValue { mean, std });
            if previous.is_some() {
                return Err(format!("line {line_no}: {task} / {method} appears twice"));
            }
        }
        if table.values.is_empty() {
            return Err("no rows (expected the header task,method,mean,std and rows)".to_string());
        }
        Ok(table)
    }

    /// The table's name for `method`: equal ignoring ASCII case (the paper's
    /// `FBO-FedGP` is fedhe's `fbo-fedgp`).
    pub fn find_method(&self, method: &str) -> Option<&str> {
        self.methods
            .iter()
            .find(|m| m.eq_ignore_ascii_case(method))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_comments_header_and_empty_std() {
        let t = BaselineTable::parse(
            "# provenance\n\ntask,method,mean,std\ncec2005-f1,EPPBO,27.33,\ncec2005-f1,FBO-FedGP,-268.49,1.5\n",
        )
        .unwrap();
        assert_eq!(t.methods, ["EPPBO", "FBO-FedGP"]);
        let f1 = &t.values["cec2005-f1"];
        assert_eq!(
            f1["EPPBO"],
            BaselineValue {
                mean: 27.33,
                std: None
            }
        );
        assert_eq!(f1["FBO-FedGP"].std, Some(1.5));
        assert_eq!(t.find_method("fbo-fedgp"), Some("FBO-FedGP"));
    }

    #[test]
    fn names_the_bad_line() {
        let err = BaselineTable::parse("task,method,mean,std\nf1,A,abc,\n").unwrap_err();
        assert!(err.starts_with("line 2: mean"), "{err}");
        let err = BaselineTable::parse("f1,A,1,\n").unwrap_err();
        assert!(err.contains("header"), "{err}");
        let err = BaselineTable::parse("task,method,mean,std\nf1,A,1,\nf1,A,2,\n").unwrap_err();
        assert!(err.contains("twice"), "{err}");
        assert!(BaselineTable::parse("# nothing\n").is_err());
    }

    /// The committed transcription of the paper's Table 1, run through this
    /// module's Wilcoxon test and Holm correction, gives the paper's Table 5
    /// (W, raw and Holm-adjusted p to the four digits printed, and its
    /// (n⁺ − n⁻)/n effect sizes): a check of both the transcription and the tests.
    #[test]
    fn paper_table1_reproduces_paper_table5() {
        use fedhe_stats::{holm, wilcoxon};
        let table = BaselineTable::parse(include_str!(
            "../../../../experiments/papers/paper004_table1.csv"
        ))
        .unwrap();
        assert_eq!(table.values.len(), 20);
        let column = |m: &str| -> Vec<f64> {
            (1..=20)
                .map(|f| table.values[&format!("cec2005-f{f}")][m].mean)
                .collect()
        };
        let reference = column("FBO-FedGP");
        // Table 5: baseline, W, raw p, adjusted p, effect size.
        let table5 = [
            ("EPPBO", 9.0, 6.294e-5, 1.259e-4, -0.9),
            ("FMTBO", 0.0, 1.907e-6, 9.537e-6, -1.0),
            ("FTS", 0.0, 1.907e-6, 9.537e-6, -1.0),
            ("FEPPBO", 0.0, 1.907e-6, 9.537e-6, -1.0),
            ("FCSBO", 18.0, 4.826e-4, 4.826e-4, -0.8),
        ];
        let tests: Vec<_> = table5
            .iter()
            .map(|(m, ..)| wilcoxon(&reference, &column(m)).unwrap())
            .collect();
        let adjusted = holm(&tests.iter().map(|t| t.p_value).collect::<Vec<_>>());
        for ((row, test), adj) in table5.iter().zip(&tests).zip(adjusted) {
            let (name, w, p, p_adj, effect) = *row;
            assert_eq!(test.statistic(), w, "{name}");
            assert!(
                ((test.p_value - p) / p).abs() < 1e-3,
                "{name}: {}",
                test.p_value
            );
            assert!(((adj - p_adj) / p_adj).abs() < 1e-3, "{name}: {adj}");
            let other = column(name);
            let higher = reference.iter().zip(&other).filter(|(r, o)| r > o).count() as f64;
            let lower = reference.iter().zip(&other).filter(|(r, o)| r < o).count() as f64;
            assert_eq!((higher - lower) / 20.0, effect, "{name}");
        }
    }
}
