//! `fedhe._native`: the Python package's bridge to an institution's agent
//! (issue 46, item 5). One class, `Agent`, whose `ask`, `tell` and
//! `status` are `fedhe agent ask|tell|status` in-process: the same
//! [`fedhe_client::agent`] functions, the same key folder, journal and
//! pending point, so a member may switch between the CLI and Python at any
//! point of a study. Answers cross as JSON text, which the package's Python
//! side (`fedhe/__init__.py`) turns into objects: the user parses nothing.
//! Every failure is raised as one of the typed exceptions below, with the
//! agent's own message.

use fedhe_client::agent::Told;
use fedhe_client::agent::{agent_status, ask_agent, tell_agent, AgentOptions, Asked, Evaluator};
use fedhe_client::keys::KeyDir;
use fedhe_client::policy::MemberPolicy;
use fedhe_client::sealed::Passphrase;
use fedhe_client::{Auth, Client, ClientError, Tls};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

create_exception!(
    fedhe,
    FedheError,
    PyException,
    "Every error of the fedhe agent."
);
create_exception!(
    fedhe,
    Refused,
    FedheError,
    "The agent refused: the member's policy (an ε ceiling, a quorum, a \
     parameter set), a verification that failed, or a told value or point \
     that does not fit the study. `kind` names which: `policy` (and \
     `setting` the policy setting), `told_point`, `verification`, \
     `signature`, or the check of verify-before-decrypt that failed \
     (`c1_check`, `not_the_sum`, `substituted`, ...)."
);
create_exception!(
    fedhe,
    ServerError,
    FedheError,
    "The server answered with a problem report (its status and detail are in the message)."
);
create_exception!(
    fedhe,
    TransportError,
    FedheError,
    "The server could not be reached, or a round timed out."
);
create_exception!(
    fedhe,
    UsageError,
    FedheError,
    "A bad argument, key folder or state folder (the message names it)."
);

/// The Python exception for an agent error: its class says what kind of
/// failure it is, its message is the agent's own (never secret material).
/// A [`Refused`] also carries `kind`, what a caller dispatches on (the
/// name of the check that failed: [`fedhe_client::RefusalKind::name`], `"policy"`,
/// `"verification"`, `"signature"` or `"told_point"`), and `setting`, the
/// policy setting that refused (else `None`).
fn raise(e: ClientError) -> PyErr {
    let text = e.to_string();
    let (kind, setting) = match &e {
        ClientError::Refused(r) => (r.kind.name(), None),
        ClientError::Policy { setting, .. } => ("policy", Some(*setting)),
        ClientError::Verification(_) => ("verification", None),
        ClientError::Signature(_) => ("signature", None),
        ClientError::ToldPoint { .. } => ("told_point", None),
        ClientError::Problem { .. } => return ServerError::new_err(text),
        ClientError::Transport(_) | ClientError::Timeout(_) | ClientError::RoundFailed { .. } => {
            return TransportError::new_err(text)
        }
        _ => return UsageError::new_err(text),
    };
    let err = Refused::new_err(text);
    Python::attach(|py| {
        let value = err.value(py);
        value.setattr("kind", kind)?;
        value.setattr("setting", setting)
    })
    .map_or_else(|e| e, |()| err)
}

fn json(value: &impl serde::Serialize) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| FedheError::new_err(e.to_string()))
}

/// A member's agent for one study: what `fedhe agent ask|tell|status` use,
/// from Python.
#[pyclass(module = "fedhe._native", frozen)]
struct Agent {
    server: String,
    keys: PathBuf,
    study: String,
    passphrase_file: Option<PathBuf>,
    ca_cert: Option<PathBuf>,
    allow_plain_http: bool,
    allow_insecure: bool,
    round_timeout: Duration,
    max_epsilon: Option<f64>,
    max_delta: Option<f64>,
    min_contributors: Option<u32>,
}

impl Agent {
    /// The key folder, opened with the passphrase (file, else
    /// `FEDHE_PASSPHRASE`, else none).
    fn key_dir(&self) -> Result<KeyDir, ClientError> {
        let passphrase = Passphrase::from_file_or_env(self.passphrase_file.as_deref())
            .map_err(ClientError::Usage)?;
        Ok(KeyDir::open(&self.keys)?.with_passphrase(passphrase))
    }

    /// The member named in the key folder.
    fn member(dir: &KeyDir) -> Result<String, ClientError> {
        Ok(dir.read_member_file()?.member)
    }

    /// A client of the server signing as the member.
    fn client(&self, dir: &KeyDir, member: &str) -> Result<Client, ClientError> {
        let tls = match &self.ca_cert {
            Some(path) => Tls::ca_cert_file(path)?,
            None => Tls::default(),
        }
        .allow_plain_http(self.allow_plain_http);
        Client::with_tls(
            &self.server,
            Auth::Member {
                id: member.to_string(),
                identity: Arc::new(dir.read_identity()?),
            },
            &tls,
        )
    }

    /// `fedhe agent ask`, as one JSON object.
    fn ask_json(&self) -> Result<serde_json::Value, ClientError> {
        let dir = self.key_dir()?;
        let member = Self::member(&dir)?;
        let client = self.client(&dir, &member)?;
        let options = AgentOptions {
            study: &self.study,
            evaluator: Evaluator::Ask,
            allow_insecure: self.allow_insecure,
            round_timeout: self.round_timeout,
            policy: MemberPolicy {
                max_epsilon: self.max_epsilon,
                max_delta: self.max_delta,
                min_contributors: self.min_contributors,
                ..MemberPolicy::default()
            },
        };
        Ok(match ask_agent(client, &dir, &options)? {
            Asked::Point(p) => serde_json::json!({
                "member": member,
                "study": p.study,
                "evaluation": p.evaluation,
                "point": p.point,
                "params": p.params,
                "space": p.space,
                "sense": p.sense,
            }),
            Asked::Finished(outcome) => serde_json::json!({
                "member": member,
                "study": self.study,
                "finished": true,
                "rounds": outcome.result.rounds,
                "best": outcome.result.best,
            }),
        })
    }
}

#[pymethods]
impl Agent {
    /// An agent of the member whose key folder is `keys` (from `fedhe
    /// ceremony join`) in study `study` on `server`. The policy arguments are
    /// the `fedhe agent` flags of the same names.
    #[new]
    #[pyo3(signature = (
        server, keys, study, *, passphrase_file=None, ca_cert=None,
        allow_plain_http=false, allow_insecure=false, round_timeout_secs=600,
        max_epsilon=None, max_delta=None, min_contributors=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        server: String,
        keys: PathBuf,
        study: String,
        passphrase_file: Option<PathBuf>,
        ca_cert: Option<PathBuf>,
        allow_plain_http: bool,
        allow_insecure: bool,
        round_timeout_secs: u64,
        max_epsilon: Option<f64>,
        max_delta: Option<f64>,
        min_contributors: Option<u32>,
    ) -> PyResult<Self> {
        if round_timeout_secs == 0 {
            return Err(UsageError::new_err(
                "round_timeout_secs: need at least 1 second",
            ));
        }
        let agent = Self {
            server,
            keys,
            study,
            passphrase_file,
            ca_cert,
            allow_plain_http,
            allow_insecure,
            round_timeout: Duration::from_secs(round_timeout_secs),
            max_epsilon,
            max_delta,
            min_contributors,
        };
        // The key folder and its member are checked now, not at the first ask.
        agent
            .key_dir()
            .and_then(|dir| Self::member(&dir))
            .map_err(raise)?;
        Ok(agent)
    }

    /// The next point to evaluate (JSON), running the study's rounds until
    /// the federation needs one; the same point again while it waits for
    /// its value; `{"finished": true, ...}` once the study is over. The GIL
    /// is released while the rounds run.
    fn ask(&self, py: Python<'_>) -> PyResult<String> {
        let answer = py.detach(|| self.ask_json()).map_err(raise)?;
        json(&answer)
    }

    /// Records the value of the waiting point (`failed=True`: the failure
    /// value; `params`: the told values as JSON, checked against the point).
    /// Returns the receipt as JSON.
    #[pyo3(signature = (value=None, *, failed=false, params=None))]
    fn tell(&self, value: Option<f64>, failed: bool, params: Option<String>) -> PyResult<String> {
        let told = match (value, failed) {
            (Some(v), false) => Told::Value(v),
            (None, true) => Told::Failed,
            _ => {
                return Err(UsageError::new_err(
                    "tell: give a value, or failed=True, not both",
                ))
            }
        };
        let at = params
            .map(|text| {
                serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&text)
                    .map_err(|e| UsageError::new_err(format!("params: not a JSON object: {e}")))
            })
            .transpose()?;
        let dir = self.key_dir().map_err(raise)?;
        let receipt = tell_agent(&dir, &self.study, told, at.as_ref()).map_err(raise)?;
        json(&receipt)
    }

    /// What the agent recorded for the study (JSON).
    fn status(&self) -> PyResult<String> {
        let dir = self.key_dir().map_err(raise)?;
        json(&agent_status(&dir, &self.study).map_err(raise)?)
    }

    /// The study's id.
    #[getter]
    fn study(&self) -> &str {
        &self.study
    }
}

/// The module `fedhe._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Agent>()?;
    m.add("FedheError", py.get_type::<FedheError>())?;
    m.add("Refused", py.get_type::<Refused>())?;
    m.add("ServerError", py.get_type::<ServerError>())?;
    m.add("TransportError", py.get_type::<TransportError>())?;
    m.add("UsageError", py.get_type::<UsageError>())?;
    Ok(())
}
