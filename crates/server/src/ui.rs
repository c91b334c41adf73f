//! `/ui`: a live page of the federation for its coordinator (issue 18) —
//! ceremonies and studies, each round's phase, which members have committed,
//! contributed and sent their decryption share, deadlines and failures, and
//! round durations as a small chart. Server-rendered HTML with no script: the
//! page reloads itself every few seconds. It shows only what the server
//! already knows (ids, phases, times; never a ciphertext or a value).
//!
//! A browser cannot send the administrator's bearer token, so the
//! administrator asks for a short-lived link (`fedhe ui`, which calls
//! `POST /v1/ui-tickets` with the token); opening it sets a session cookie
//! (HttpOnly, SameSite=Strict, Secure under TLS) for the `/ui` pages. Tickets
//! and sessions are BLAKE3 MACs under a key derived from the administrator's
//! token, so they hold no secret, need no stored state, and stop working when
//! the token changes. `curl -H "Authorization: Bearer ..."` works as well.

use crate::problem::{ApiError, ApiResult};
use crate::store::audit::AuditFilter;
use crate::store::UploadTable;
use crate::AppState;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use fedhe_api::signing::now_ms;
use fedhe_api::{AuditEntry, RoundState, UiTicket};
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// The session cookie's name.
pub const COOKIE: &str = "fedhe_ui";
/// How long a link from `fedhe ui` may wait before it is opened.
pub const TICKET_MS: i64 = 5 * 60 * 1000;
/// How long a browser session lasts.
pub const SESSION_MS: i64 = 12 * 60 * 60 * 1000;
/// Seconds between reloads of a page.
const REFRESH_SECS: u32 = 3;

/// The MAC key of tickets and sessions: derived from the administrator's
/// token (none without one: the page is then closed).
fn key(state: &AppState) -> Option<[u8; 32]> {
    let token = &state.config.admin_token;
    (!token.is_empty()).then(|| blake3::derive_key("fedhe ui session v1", token.as_bytes()))
}

/// `EXPIRY.MAC` of `purpose` under the key.
fn sign(key: &[u8; 32], purpose: &str, expiry: i64) -> String {
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(purpose.as_bytes());
    h.update(&expiry.to_le_bytes());
    format!("{expiry}.{}", h.finalize().to_hex())
}

/// Whether `value` is a `purpose` token under the key that has not expired.
fn verify(key: &[u8; 32], purpose: &str, value: &str, now: i64) -> bool {
    let Some((expiry, mac)) = value.split_once('.') else {
        return false;
    };
    let Ok(expiry) = expiry.parse::<i64>() else {
        return false;
    };
    let Ok(mac) = blake3::Hash::from_hex(mac) else {
        return false;
    };
    let mut h = blake3::Hasher::new_keyed(key);
    h.update(purpose.as_bytes());
    h.update(&expiry.to_le_bytes());
    // blake3::Hash compares in constant time.
    expiry > now && h.finalize() == mac
}

/// Whether the request may see the pages: a valid session cookie, or the
/// administrator's bearer token.
fn authorized(state: &AppState, headers: &HeaderMap) -> bool {
    if crate::auth::is_admin(state, headers) {
        return true;
    }
    let Some(key) = key(state) else {
        return false;
    };
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(&format!("{COOKIE}=")))
        .any(|v| verify(&key, "session", v, now_ms()))
}

/// A link to the `/ui` pages for a browser, valid for five minutes
/// (administrator).
#[utoipa::path(post, path = fedhe_api::routes::UI_TICKETS, tag = "operations",
    security(("admin" = [])),
    responses((status = 201, body = UiTicket),
        (status = 401, body = fedhe_api::Problem, content_type = "application/problem+json")))]
pub async fn create_ticket(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
) -> ApiResult<(StatusCode, Json<UiTicket>)> {
    crate::auth::require_admin(&state, &headers)?;
    let key = key(&state).ok_or_else(|| ApiError::forbidden("the server has no admin token"))?;
    let ticket = sign(&key, "ticket", now_ms() + TICKET_MS);
    Ok((
        StatusCode::CREATED,
        Json(UiTicket {
            path: format!("/ui/login?ticket={ticket}"),
        }),
    ))
}

/// HTML-escapes text (ids are plain, but a failure's reason is free text).
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A whole page around `body`.
fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">\
         <title>{t} · fedhe</title><style>\
         body{{font:18px/1.5 system-ui,sans-serif;margin:2em;color:#222}}\
         table{{border-collapse:collapse;margin:.5em 0 1.5em}}\
         td,th{{border:1px solid #ccc;padding:.3em .8em;text-align:left}}\
         .ok{{color:#176c2e;font-weight:600}}.wait{{color:#a15c00}}.fail{{color:#b3261e;font-weight:600}}\
         </style></head><body><h1>{t}</h1>{body}\
         <p><small>fedhe · reloads every {REFRESH_SECS} s · ids, phases and times only</small></p>\
         </body></html>",
        t = esc(title)
    ))
}

/// The refusal of a request without a session.
fn login_needed() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Html(
            "<!doctype html><html><body><h1>fedhe</h1><p>This page needs a link from \
             <code>fedhe ui --server URL</code> (run by the administrator, with \
             FEDHE_ADMIN_TOKEN); a link works for five minutes and opens a \
             session of twelve hours.</p></body></html>"
                .to_string(),
        ),
    )
        .into_response()
}

/// `GET /ui/login?ticket=T[&next=/ui/...]`: exchanges a ticket for a session
/// cookie and goes on to `next` (a `/ui` page).
pub async fn login(
    State(state): State<Arc<AppState>>,
    Query(query): Query<HashMap<String, String>>,
) -> ApiResult<Response> {
    let Some(key) = key(&state) else {
        return Ok(login_needed());
    };
    let now = now_ms();
    let ticket = query.get("ticket").map(String::as_str).unwrap_or_default();
    if !verify(&key, "ticket", ticket, now) {
        return Ok(login_needed());
    }
    // One ticket, one session (issue 45, finding 12): the ticket is spent
    // in the store's nonce table, shared by the replicas, kept until it has
    // expired (its row is dated at the expiry, and the table is pruned
    // 2 × the clock skew behind now).
    let expiry = ticket
        .split_once('.')
        .and_then(|(e, _)| e.parse::<i64>().ok())
        .unwrap_or(now);
    let spent = blake3::derive_key("fedhe ui ticket spent v1", &key);
    if !state
        .store
        .record_nonce(
            &spent,
            ticket,
            expiry,
            now - 2 * fedhe_api::signing::MAX_CLOCK_SKEW_MS,
        )
        .await?
    {
        return Ok(login_needed());
    }
    let next = query
        .get("next")
        .filter(|n| n.starts_with("/ui") && n.chars().all(|c| c.is_ascii_graphic()))
        .cloned()
        .unwrap_or_else(|| "/ui".into());
    let secure = if state.config.tls_cert.is_some() {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
        sign(&key, "session", now + SESSION_MS),
        SESSION_MS / 1000
    );
    let mut response = (StatusCode::SEE_OTHER, "").into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::LOCATION,
        HeaderValue::from_str(&next).map_err(|_| ApiError::bad_request("next is not a path"))?,
    );
    headers.insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&cookie).map_err(|_| ApiError::internal("cookie"))?,
    );
    Ok(response)
}

/// `GET /ui`: every ceremony and study.
pub async fn index(State(state): State<Arc<AppState>>, headers: HeaderMap) -> ApiResult<Response> {
    if !authorized(&state, &headers) {
        return Ok(login_needed());
    }
    let mut body = String::from(
        "<h2>Ceremonies</h2><table><tr><th>ceremony</th><th>phase</th><th>members</th></tr>",
    );
    for (id, phase) in state.store.ceremony_list().await? {
        let members = state.store.members(&id).await?;
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&id),
            esc(&phase),
            esc(&members
                .iter()
                .map(|m| m.member.as_str())
                .collect::<Vec<_>>()
                .join(", "))
        );
    }
    body.push_str("</table><h2>Studies</h2><table><tr><th>study</th><th>ceremony</th><th>latest round</th></tr>");
    for (id, ceremony) in state.store.study_list().await? {
        let latest = state.store.latest_round(&id).await?;
        let _ = write!(
            body,
            "<tr><td><a href=\"/ui/studies/{0}\">{0}</a></td><td>{1}</td><td>{latest}</td></tr>",
            esc(&id),
            esc(&ceremony)
        );
    }
    body.push_str("</table>");
    Ok(page("Federation", &body).into_response())
}

/// A mark for a member who has (or has not yet) done something.
fn mark(done: bool) -> &'static str {
    if done {
        "<td class=\"ok\">yes</td>"
    } else {
        "<td class=\"wait\">waiting</td>"
    }
}

/// How long each round took (opened → result published or failed), from the
/// audit trail, in seconds.
fn durations(trail: &[AuditEntry]) -> Vec<(u64, f64, bool)> {
    let mut out: Vec<(u64, f64, bool)> = Vec::new();
    let mut opened = std::collections::BTreeMap::new();
    for e in trail {
        let Some(r) = e.round else { continue };
        match e.action.as_str() {
            "round.opened" => {
                opened.insert(r, e.at);
            }
            "round.result_published" | "round.failed" => {
                if let Some(start) = opened.get(&r) {
                    out.push((
                        r,
                        (e.at - start) as f64 / 1000.0,
                        e.action == "round.failed",
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// Round durations as an inline SVG bar chart (no script, no dependency).
fn chart(durations: &[(u64, f64, bool)]) -> String {
    if durations.is_empty() {
        return "<p>No round has finished yet.</p>".into();
    }
    let shown = &durations[durations.len().saturating_sub(40)..];
    let max = shown.iter().map(|d| d.1).fold(0.001, f64::max);
    let (w, h, bar) = (640.0, 160.0, 640.0 / shown.len() as f64);
    let mut svg = format!(
        "<svg width=\"{w}\" height=\"{}\" role=\"img\" aria-label=\"round durations\">",
        h + 20.0
    );
    for (i, (round, secs, failed)) in shown.iter().enumerate() {
        let bh = (secs / max * h).max(1.0);
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{}\"><title>round {round}: {secs:.1} s</title></rect>",
            i as f64 * bar + 1.0,
            h - bh,
            (bar - 2.0).max(1.0),
            if *failed { "#b3261e" } else { "#3b6fb6" }
        );
    }
    let _ = write!(
        svg,
        "<text x=\"0\" y=\"{}\" font-size=\"13\">rounds {}–{}; longest {max:.1} s</text></svg>",
        h + 16.0,
        shown[0].0,
        shown[shown.len() - 1].0
    );
    svg
}

/// What a study's signed settings say of its output privacy (issue 44): the
/// budget of a private study, or that its releases are noise-free. The
/// server shows the setting only, never a released value.
fn privacy_label(algorithm: &str, config: &serde_json::Value) -> String {
    let settings = config.get("settings").or_else(|| config.get("fbo_fedgp"));
    let privacy = settings.and_then(|s| s.get("privacy"));
    let mode = privacy.and_then(|p| p.get("mode")).and_then(|m| m.as_str());
    match (mode, privacy) {
        (Some("dp"), Some(p)) => {
            let num = |k: &str| p.get(k).and_then(|v| v.as_f64());
            format!(
                "ε = {} per member for the whole study (δ = {:e}), distributed discrete Gaussian noise on every release",
                num("epsilon").unwrap_or(f64::NAN),
                num("delta").unwrap_or(1e-6)
            )
        }
        _ if algorithm == "dp-fts-de" => {
            "differentially private by the method's own mechanism and accountant".into()
        }
        _ => "noise-free: the decrypted sums are not private (SECURITY.md)".into(),
    }
}

/// The most search-space rows the study page lists.
const MAX_SPACE_ROWS: usize = 64;

/// The study's search space from its signed config (issue 46): each typed
/// parameter's name, type and range, or the box of unnamed floats. The
/// space is public (every member encodes it the same way); no point or value
/// is shown, since the server learns none.
fn space_table(config: &serde_json::Value) -> String {
    let text = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    };
    let short = |s: String| -> String {
        if s.chars().count() > 60 {
            s.chars().take(60).chain("…".chars()).collect()
        } else {
            s
        }
    };
    // A list of choices as `{a, b}`.
    let set = |v: Option<&serde_json::Value>| -> String {
        let items: Vec<String> = v
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
            .map(|c| text(Some(c)))
            .collect();
        format!("{{{}}}", items.join(", "))
    };
    let mut rows = Vec::new();
    let total;
    if let Some(params) = config
        .get("space")
        .and_then(|s| s.get("params"))
        .and_then(|p| p.as_array())
    {
        total = params.len();
        for p in params.iter().take(MAX_SPACE_ROWS) {
            let kind = text(p.get("type"));
            let log = p.get("log").and_then(|l| l.as_bool()) == Some(true);
            let range = match kind.as_str() {
                "float" | "int" => format!(
                    "[{}, {}]{}",
                    text(p.get("low")),
                    text(p.get("high")),
                    if log { " log" } else { "" }
                ),
                "categorical" => set(p.get("choices")),
                "fixed" => format!("= {}", text(p.get("value"))),
                _ => String::new(),
            };
            // A conditional parameter: active only under some choices.
            let range = match p.get("when") {
                Some(w) => format!(
                    "{range} when {} in {}",
                    text(w.get("param")),
                    set(w.get("values"))
                ),
                None => range,
            };
            rows.push([text(p.get("name")), kind, range]);
        }
    } else {
        let corner = |k: &str| -> Vec<String> {
            config
                .get(k)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
                .map(|v| text(Some(v)))
                .collect()
        };
        let (lower, upper) = (corner("lower"), corner("upper"));
        total = lower.len();
        for (i, (l, h)) in lower.iter().zip(&upper).take(MAX_SPACE_ROWS).enumerate() {
            rows.push([format!("x{i}"), "float".into(), format!("[{l}, {h}]")]);
        }
    }
    if rows.is_empty() {
        return "<p>Search space: not given in the config.</p>".into();
    }
    let mut out = format!("<h2>Search space ({total} parameters)</h2><table><tr><th>name</th><th>type</th><th>range</th></tr>");
    for [name, kind, range] in rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&short(name)),
            esc(&short(kind)),
            esc(&short(range))
        );
    }
    out.push_str("</table>");
    if total > MAX_SPACE_ROWS {
        let _ = write!(out, "<p>… and {} more.</p>", total - MAX_SPACE_ROWS);
    }
    out
}

/// `GET /ui/studies/{study}`: the study's rounds and its members.
pub async fn study(
    State(state): State<Arc<AppState>>,
    Path(study): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    if !authorized(&state, &headers) {
        return Ok(login_needed());
    }
    let spec = state.store.study(&study).await?.spec;
    let members = state.store.member_names(&spec.ceremony).await?;
    let latest = state.store.latest_round(&study).await?;
    let now = now_ms();
    let mut body = format!(
        "<p>Ceremony {} · {} members · quorum {} · bound {}</p><p>Privacy: {}</p>",
        esc(&spec.ceremony),
        members.len(),
        spec.min_contributors,
        spec.bound,
        esc(&privacy_label(&spec.algorithm, &spec.config))
    );
    body.push_str(&space_table(&spec.config));
    if latest == 0 {
        body.push_str("<p>No round has been opened yet.</p>");
    } else {
        let r = state.store.round(&study, latest).await?;
        let committed = state.store.round_commitments(&study, latest, None).await?;
        let contributed = state
            .store
            .uploads(UploadTable::Contributions, &study, latest)
            .await?;
        let shared = state
            .store
            .uploads(UploadTable::DecryptionShares, &study, latest)
            .await?;
        let has = |list: &[String], m: &str| list.iter().any(|x| x == m);
        let committed: Vec<String> = committed.into_iter().map(|c| c.member).collect();
        let contributed: Vec<String> = contributed.into_iter().map(|u| u.member).collect();
        let shared: Vec<String> = shared.into_iter().map(|u| u.member).collect();
        let state_class = match r.state {
            RoundState::Failed => "fail",
            RoundState::Done => "ok",
            _ => "wait",
        };
        let _ = write!(
            body,
            "<h2>Round {latest}: <span class=\"{state_class}\">{}</span></h2>",
            r.state.as_str()
        );
        if !r.state.is_terminal() {
            let _ = write!(
                body,
                "<p>This phase ends in {:.0} s.</p>",
                ((r.deadline_at - now) as f64 / 1000.0).max(0.0)
            );
        }
        if let Some(reason) = &r.reason {
            let _ = write!(body, "<p class=\"fail\">Failed: {}</p>", esc(reason));
        }
        let (done, waiting): (Vec<&String>, Vec<&String>) =
            members.iter().partition(|m| has(&contributed, m));
        let names = |v: &[&String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                esc(&v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "))
            }
        };
        let _ = write!(
            body,
            "<p>Contributed: <span class=\"ok\">{}</span><br>Not yet contributed: <span class=\"wait\">{}</span></p>",
            names(&done),
            names(&waiting)
        );
        body.push_str("<table><tr><th>member</th><th>committed</th><th>contributed</th><th>decryption share</th></tr>");
        for m in &members {
            let _ = write!(
                body,
                "<tr><td>{}</td>{}{}{}</tr>",
                esc(m),
                mark(has(&committed, m)),
                mark(has(&contributed, m)),
                mark(has(&shared, m))
            );
        }
        body.push_str("</table>");
    }
    let trail = state
        .store
        .audit(AuditFilter::Study(&study), 0, 10_000)
        .await?;
    let durations = durations(&trail);
    body.push_str("<h2>Rounds</h2>");
    if !durations.is_empty() {
        body.push_str("<table><tr><th>round</th><th>outcome</th><th>seconds</th></tr>");
    }
    for (round, secs, failed) in durations.iter().rev().take(20) {
        let failure = if *failed {
            let reason = trail
                .iter()
                .rev()
                .find(|e| e.round == Some(*round) && e.action == "round.failed")
                .and_then(|e| e.detail.clone())
                .unwrap_or_default();
            format!("<span class=\"fail\">failed</span> {}", esc(&reason))
        } else {
            "<span class=\"ok\">done</span>".into()
        };
        let _ = write!(
            body,
            "<tr><td>{round}</td><td>{failure}</td><td>{secs:.1}</td></tr>"
        );
    }
    if !durations.is_empty() {
        body.push_str("</table>");
    }
    body.push_str(&chart(&durations));
    body.push_str("<p><a href=\"/ui\">All ceremonies and studies</a></p>");
    Ok(page(&format!("Study {study}"), &body).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_and_sessions_verify_only_for_their_purpose_key_and_time() {
        let key = [7u8; 32];
        let t = sign(&key, "ticket", 1_000);
        assert!(verify(&key, "ticket", &t, 999));
        assert!(!verify(&key, "ticket", &t, 1_000), "expired");
        assert!(!verify(&key, "session", &t, 999), "another purpose");
        assert!(!verify(&[8u8; 32], "ticket", &t, 999), "another key");
        let (expiry, mac) = t.split_once('.').unwrap();
        let later = format!("{}.{mac}", expiry.parse::<i64>().unwrap() + 1);
        assert!(!verify(&key, "ticket", &later, 999), "an extended expiry");
        for junk in ["", ".", "1000", "x.y", "1000.zz"] {
            assert!(!verify(&key, "ticket", junk, 0), "{junk:?}");
        }
    }

    /// Issue 46: the study page lists the typed space (names, types,
    /// ranges), escaped and bounded, or the box; never a point or a value.
    #[test]
    fn the_study_page_shows_the_space_escaped_and_bounded() {
        let spaced = serde_json::json!({"space": {"params": [
            {"name": "lr", "type": "float", "low": 1e-5, "high": 0.1, "log": true},
            {"name": "depth", "type": "int", "low": 2, "high": 12},
            {"name": "<b>k</b>", "type": "categorical", "choices": ["rbf", "poly", true, 3]},
            {"name": "epochs", "type": "fixed", "value": 5},
            {"name": "degree", "type": "int", "low": 2, "high": 5,
             "when": {"param": "<b>k</b>", "values": ["poly", 3]}}
        ]}, "lower": [], "upper": []});
        let t = space_table(&spaced);
        assert!(t.contains("(5 parameters)"), "{t}");
        // A conditional parameter says when it is active.
        assert!(
            t.contains(
                "<td>degree</td><td>int</td><td>[2, 5] when &lt;b&gt;k&lt;/b&gt; in {poly, 3}</td>"
            ),
            "{t}"
        );
        assert!(
            t.contains("<td>lr</td><td>float</td><td>[0.00001, 0.1] log</td>"),
            "{t}"
        );
        assert!(
            t.contains("<td>depth</td><td>int</td><td>[2, 12]</td>"),
            "{t}"
        );
        assert!(
            t.contains("&lt;b&gt;k&lt;/b&gt;") && !t.contains("<b>"),
            "{t}"
        );
        assert!(t.contains("{rbf, poly, true, 3}"), "{t}");
        assert!(
            t.contains("<td>epochs</td><td>fixed</td><td>= 5</td>"),
            "{t}"
        );
        let boxed = serde_json::json!({"lower": [0, -1.5], "upper": [1, 2]});
        let t = space_table(&boxed);
        assert!(
            t.contains("<td>x1</td><td>float</td><td>[-1.5, 2]</td>"),
            "{t}"
        );
        let many: Vec<serde_json::Value> = (0..500)
            .map(|i| serde_json::json!({"name": format!("p{i}{}", "x".repeat(1000)), "type": "float", "low": 0, "high": 1}))
            .collect();
        let t = space_table(&serde_json::json!({"space": {"params": many}}));
        assert_eq!(t.matches("<tr><td>").count(), MAX_SPACE_ROWS);
        assert!(
            t.contains("and 436 more") && t.len() < 20_000,
            "{}",
            t.len()
        );
        assert!(space_table(&serde_json::json!({})).contains("not given"));
    }

    #[test]
    fn a_studys_privacy_is_labelled_from_its_settings() {
        let dp = serde_json::json!({"settings": {"privacy": {"mode": "dp", "epsilon": 4.0, "delta": 1e-6}}});
        assert!(privacy_label("fbo-fedgp", &dp).starts_with("ε = 4 per member"));
        let free = serde_json::json!({"settings": {"privacy": {"mode": "noise-free"}}});
        assert!(privacy_label("fbo-fedgp", &free).starts_with("noise-free"));
        assert!(privacy_label("fbo-fedgp", &serde_json::json!({})).starts_with("noise-free"));
        assert!(privacy_label("dp-fts-de", &serde_json::json!({})).contains("own mechanism"));
    }

    #[test]
    fn text_is_escaped_and_durations_come_from_the_trail() {
        assert_eq!(
            esc("<a href='x'>&\u{1b}"),
            "&lt;a href=&#39;x&#39;&gt;&amp; "
        );
        let entry = |at: i64, action: &str, round: u64| AuditEntry {
            seq: at,
            at,
            actor: "server".into(),
            action: action.into(),
            ceremony: None,
            study: Some("s".into()),
            round: Some(round),
            member: None,
            hash: None,
            detail: None,
            prev: None,
            chain: None,
        };
        let trail = [
            entry(1_000, "round.opened", 1),
            entry(2_500, "round.commitments_frozen", 1),
            entry(4_000, "round.result_published", 1),
            entry(5_000, "round.opened", 2),
            entry(65_000, "round.failed", 2),
            entry(66_000, "round.opened", 3),
        ];
        assert_eq!(durations(&trail), vec![(1, 3.0, false), (2, 60.0, true)]);
        assert!(chart(&durations(&trail)).contains("round 2: 60.0 s"));
    }
}
