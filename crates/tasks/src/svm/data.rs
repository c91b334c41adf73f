//! The data sets, embedded in the binary at compile time (the product never
//! reads files at run time), parsed into numeric design matrices.
//!
//! Provenance and licences are in `crates/tasks/data/README.md`.
//!
//! Missing values (empty fields) are kept as `NaN` here and **imputed** later,
//! per client, by the mean of that client's own training split (which is 0
//! after standardisation, see [`super::client`]): dropping rows would lose most
//! of SUPPORT2, where e.g. `num_alb` is missing in 37 % of the patients. A
//! missing categorical value becomes its own category.

use crate::TaskError;

/// The raw text of a CSV file with a header row, comma separated, no quoting.
#[derive(Debug, Clone)]
pub struct Table {
    /// The file name, for error messages.
    pub file: &'static str,
    /// The column names.
    pub header: Vec<String>,
    /// The fields of each row (as many as the header).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Parses `text`; every row must have as many fields as the header, and a
    /// quote character is refused (none of the shipped files uses quoting).
    pub fn parse(file: &'static str, text: &str) -> Result<Self, TaskError> {
        let err = |line: usize, reason: String| TaskError::Parse { file, line, reason };
        let mut lines = text.lines().enumerate();
        let header: Vec<String> = match lines.next() {
            Some((_, h)) if !h.trim().is_empty() => h
                .trim_end_matches('\r')
                .split(',')
                .map(str::to_string)
                .collect(),
            _ => return Err(err(1, "no header row".into())),
        };
        let mut rows = Vec::new();
        for (i, line) in lines {
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                continue;
            }
            if line.contains('"') {
                return Err(err(i + 1, "quoted fields are not supported".into()));
            }
            let fields: Vec<String> = line.split(',').map(str::to_string).collect();
            if fields.len() != header.len() {
                return Err(err(
                    i + 1,
                    format!("{} fields, the header has {}", fields.len(), header.len()),
                ));
            }
            rows.push(fields);
        }
        if rows.is_empty() {
            return Err(err(2, "no data rows".into()));
        }
        Ok(Self { file, header, rows })
    }

    /// The index of column `name`.
    pub fn column(&self, name: &str) -> Result<usize, TaskError> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| TaskError::Parse {
                file: self.file,
                line: 1,
                reason: format!("no column {name:?}"),
            })
    }
}

/// How the label of a row is read.
#[derive(Debug, Clone, Copy)]
pub enum Label {
    /// Positive when column `.0` equals `.1`.
    Equals(&'static str, &'static str),
    /// Positive when the integer column `event` is 1 and the number in `time`
    /// is at most `days` (death within `days` days).
    EventWithin {
        /// The event indicator column.
        event: &'static str,
        /// The follow-up time column.
        time: &'static str,
        /// The horizon.
        days: f64,
    },
}

/// Which columns of a file make the features, the label and the natural group.
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    /// The file name under `crates/tasks/data/`.
    pub file: &'static str,
    /// The file's text.
    pub text: &'static str,
    /// The binary label.
    pub label: Label,
    /// Numeric feature columns (empty field = missing).
    pub numeric: &'static [&'static str],
    /// Categorical feature columns, one-hot encoded over the categories seen in
    /// the file (empty field = the category `"missing"`).
    pub categorical: &'static [&'static str],
    /// The column that names each row's institution, for a natural split.
    pub group: Option<&'static str>,
}

/// A parsed data set: a design matrix with `NaN` for missing values, binary
/// labels, and the natural group of each row (empty when the schema has none).
#[derive(Debug, Clone)]
pub struct DataSet {
    /// The file it came from.
    pub file: &'static str,
    /// One name per feature column (`column=category` for one-hot columns).
    pub feature_names: Vec<String>,
    /// Row-major features, `rows × feature_names.len()`.
    pub features: Vec<Vec<f64>>,
    /// The label of each row.
    pub labels: Vec<bool>,
    /// The natural group of each row.
    pub groups: Vec<String>,
}

impl DataSet {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Parses the file of `schema` and encodes its features.
    pub fn load(schema: &Schema) -> Result<Self, TaskError> {
        let table = Table::parse(schema.file, schema.text)?;
        let file = schema.file;
        let numeric = schema
            .numeric
            .iter()
            .map(|c| table.column(c))
            .collect::<Result<Vec<_>, _>>()?;
        let categorical = schema
            .categorical
            .iter()
            .map(|c| table.column(c))
            .collect::<Result<Vec<_>, _>>()?;
        let category = |v: &str| {
            if v.is_empty() {
                "missing".to_string()
            } else {
                v.to_string()
            }
        };
        // The categories of each categorical column, sorted, so that the
        // encoding does not depend on row order.
        let levels: Vec<Vec<String>> = categorical
            .iter()
            .map(|&c| {
                let mut l: Vec<String> = table.rows.iter().map(|r| category(&r[c])).collect();
                l.sort();
                l.dedup();
                l
            })
            .collect();
        let mut feature_names: Vec<String> = schema.numeric.iter().map(|s| s.to_string()).collect();
        for (name, l) in schema.categorical.iter().zip(&levels) {
            feature_names.extend(l.iter().map(|v| format!("{name}={v}")));
        }
        let group = schema.group.map(|g| table.column(g)).transpose()?;
        let label_columns = match schema.label {
            Label::Equals(c, _) => (table.column(c)?, None),
            Label::EventWithin { event, time, .. } => {
                (table.column(event)?, Some(table.column(time)?))
            }
        };
        let mut features = Vec::with_capacity(table.rows.len());
        let mut labels = Vec::with_capacity(table.rows.len());
        let mut groups = Vec::with_capacity(table.rows.len());
        for (i, row) in table.rows.iter().enumerate() {
            let line = i + 2;
            let number = |col: usize| -> Result<f64, TaskError> {
                let v = row[col].trim();
                if v.is_empty() || v == "NA" {
                    return Ok(f64::NAN);
                }
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| TaskError::Parse {
                        file,
                        line,
                        reason: format!("column {:?}: {v:?} is not a number", table.header[col]),
                    })
            };
            let mut x = Vec::with_capacity(feature_names.len());
            for &c in &numeric {
                x.push(number(c)?);
            }
            for (&c, l) in categorical.iter().zip(&levels) {
                let v = category(&row[c]);
                x.extend(l.iter().map(|level| if *level == v { 1.0 } else { 0.0 }));
            }
            let label = match schema.label {
                Label::Equals(_, positive) => row[label_columns.0] == positive,
                Label::EventWithin { days, .. } => {
                    let event = number(label_columns.0)?;
                    let time = number(label_columns.1.expect("time column is resolved"))?;
                    if event.is_nan() || time.is_nan() {
                        return Err(TaskError::Parse {
                            file,
                            line,
                            reason: "missing event or time".into(),
                        });
                    }
                    event == 1.0 && time <= days
                }
            };
            features.push(x);
            labels.push(label);
            groups.push(group.map(|g| category(&row[g])).unwrap_or_default());
        }
        Ok(Self {
            file,
            feature_names,
            features,
            labels,
            groups,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOY: &str = "a,b,c,y\n1,x,,yes\n2,,3.5,no\n";

    fn toy() -> Schema {
        Schema {
            file: "toy.csv",
            text: TOY,
            label: Label::Equals("y", "yes"),
            numeric: &["a", "c"],
            categorical: &["b"],
            group: Some("b"),
        }
    }

    #[test]
    fn missing_values_are_nan_or_their_own_category() {
        let d = DataSet::load(&toy()).unwrap();
        assert_eq!(d.feature_names, ["a", "c", "b=missing", "b=x"]);
        assert_eq!(d.features[0][..1], [1.0]);
        assert!(d.features[0][1].is_nan());
        assert_eq!(d.features[0][2..], [0.0, 1.0]);
        assert_eq!(d.features[1], [2.0, 3.5, 1.0, 0.0]);
        assert_eq!(d.labels, [true, false]);
        assert_eq!(d.groups, ["x", "missing"]);
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        let short = Table::parse("t.csv", "a,b\n1\n").unwrap_err().to_string();
        assert!(
            short.contains("t.csv line 2") && short.contains("1 fields"),
            "{short}"
        );
        assert!(Table::parse("t.csv", "").is_err());
        assert!(Table::parse("t.csv", "a,b\n").is_err());
        let bad = Schema {
            text: "a,b,c,y\nq,x,1,yes\n",
            ..toy()
        };
        let e = DataSet::load(&bad).unwrap_err().to_string();
        assert!(e.contains("column \"a\"") && e.contains("line 2"), "{e}");
        let missing_column = Schema {
            numeric: &["zz"],
            ..toy()
        };
        assert!(DataSet::load(&missing_column)
            .unwrap_err()
            .to_string()
            .contains("no column \"zz\""));
    }
}
