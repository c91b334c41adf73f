//! The live study page in a real browser (issue 18): while a round is
//! collecting, with one member's contribution in and two missing, headless
//! Chromium (Debian's `chromium`) opens the link `fedhe ui` prints, takes a
//! screenshot, and OCR (Debian's `tesseract`) reads the study, the round and
//! the members who have and have not contributed off the picture. `.ci/test`
//! installs both; without them this test fails and says so.

use std::process::Command;

mod server_process;
mod toy_federation;
use toy_federation::{toy_federation, Terms};

const ADMIN: &str = "ui-admin";

fn serve(root: &std::path::Path) -> server_process::ServerProcess {
    server_process::serve_sqlite(root, ADMIN)
}

/// A program of the machine, or a failure saying how to get it.
fn program(name: &str, package: &str) -> String {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    match found {
        Some(p) => p.display().to_string(),
        None => {
            panic!("{name} is not installed: `apt-get install {package}` (.ci/test installs it)")
        }
    }
}

/// Lower case without white space, with the glyphs OCR confuses (1, l, I,
/// |) made one: OCR spaces and reads text its own way.
fn squeeze(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .map(|c| if matches!(c, 'l' | 'i' | '|') { '1' } else { c })
        .collect()
}

#[test]
fn the_study_page_shows_the_round_and_who_has_and_has_not_contributed() {
    let chromium = program("chromium", "chromium");
    let tesseract = program("tesseract", "tesseract-ocr");
    let root = tempfile::tempdir().unwrap();
    let server = serve(root.path());
    let (mut sessions, _) = toy_federation(
        &server.url,
        ADMIN,
        root.path(),
        &["alpha", "beta", "gamma"],
        &Terms {
            min_contributors: 3,
            round_secs: 600,
            bound: 10.0,
        },
    );
    // Everyone commits; only alpha reveals: the round is collecting.
    for (i, (s, _)) in sessions.iter_mut().enumerate() {
        s.commit("s1", 1, &[i as f64, 1.0], 10.0).unwrap();
    }
    sessions[0].0.reveal("s1", 1).unwrap();

    // Without the link's session the page shows nothing of the study.
    let anonymous = reqwest::blocking::get(format!("{}/ui/studies/s1", server.url)).unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    assert!(!anonymous.text().unwrap().contains("alpha"));

    let out = Command::new(env!("CARGO_BIN_EXE_fedhe"))
        .args(["ui", "--server", &server.url, "--study", "s1"])
        .env("FEDHE_ADMIN_TOKEN", ADMIN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        link.starts_with(&format!("{}/ui/login?ticket=", server.url)),
        "{link}"
    );

    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-study.png");
    let _ = std::fs::remove_file(&shot);
    let profile = tempfile::tempdir().unwrap();
    let browser = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1100,1100",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&link)
        .output()
        .unwrap();
    assert!(
        browser.status.success() && shot.is_file(),
        "chromium: {}",
        String::from_utf8_lossy(&browser.stderr)
    );
    let ocr = Command::new(&tesseract)
        .arg(&shot)
        .arg("stdout")
        .output()
        .unwrap();
    assert!(
        ocr.status.success(),
        "{}",
        String::from_utf8_lossy(&ocr.stderr)
    );
    let text = String::from_utf8_lossy(&ocr.stdout).into_owned();
    let seen = squeeze(&text);
    for expected in [
        "Study s1",
        "Round 1",
        "collecting",
        "Contributed: alpha",
        "Not yet contributed: beta, gamma",
    ] {
        assert!(
            seen.contains(&squeeze(expected)),
            "the screenshot {} does not show {expected:?}; OCR read:\n{text}",
            shot.display()
        );
    }
}
