//! Reading the JSON (and TOML) files the subcommands take.

use crate::error::CliError;
use serde::de::DeserializeOwned;
use std::io::Read;

/// The largest search-space file `fedhe study create --space` reads.
pub const MAX_SPACE_FILE: u64 = 1 << 20;

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

/// Reads a UTF-8 text file of at most `max` bytes, refusing a longer one
/// (without reading past `max + 1` bytes), naming the file.
pub fn read_text_capped(path: &str, max: u64) -> Result<String, CliError> {
    let io = |source| CliError::Io {
        path: path.to_string(),
        source,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(CliError::Invalid {
            path: path.to_string(),
            reason: format!("longer than {max} bytes"),
        });
    }
    String::from_utf8(bytes).map_err(|_| CliError::Invalid {
        path: path.to_string(),
        reason: "not UTF-8 text".into(),
    })
}

/// Reads a typed search space (issue 46): a TOML file of `[[params]]`
/// tables when its name ends in `.toml`, else JSON `{"params": [...]}`,
/// checked by [`fedhe_tasks::SpaceSpec::validate`], whose refusal names the
/// field (`params[2] (kernel).choices`).
pub fn read_space(path: &str) -> Result<fedhe_tasks::SpaceSpec, CliError> {
    let text = read_text_capped(path, MAX_SPACE_FILE)?;
    let invalid = |reason: String| CliError::Invalid {
        path: path.to_string(),
        reason,
    };
    let spec: fedhe_tasks::SpaceSpec = if path.ends_with(".toml") {
        toml::from_str(&text).map_err(|e| invalid(format!("malformed TOML: {}", e.message())))?
    } else {
        serde_json::from_str(&text).map_err(|e| invalid(format!("malformed JSON: {e}")))?
    };
    spec.clone()
        .validate()
        .map_err(|e| invalid(e.to_string()))?;
    Ok(spec)
}
