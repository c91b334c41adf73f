//! Reading the JSON files the modelling subcommands take.

use crate::error::CliError;
use serde::de::DeserializeOwned;

/// Reads and parses a JSON file, naming the file in any error.
pub fn read_json<T: DeserializeOwned>(path: &str) -> Result<T, CliError> {
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Io {
        path: path.to_string(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| CliError::Invalid {
        path: path.to_string(),
        reason: format!("malformed JSON: {source}"),
    })
}

/// Checks that every point has `dim` finite coordinates; `what` names the input.
pub fn check_points(what: &str, points: &[Vec<f64>], dim: usize) -> Result<(), CliError> {
    if points.is_empty() {
        return Err(CliError::Usage(format!("{what}: no points in \"x\"")));
    }
    for (i, p) in points.iter().enumerate() {
        if p.len() != dim {
            return Err(CliError::Usage(format!(
                "{what}: point {i} has {} coordinates, expected {dim}",
                p.len()
            )));
        }
        if p.iter().any(|v| !v.is_finite()) {
            return Err(CliError::Usage(format!(
                "{what}: point {i} has a non-finite coordinate"
            )));
        }
    }
    Ok(())
}
