//! `fedhe ceremony` and `fedhe study`: the key ceremony from a member's or the
//! administrator's seat (DESIGN.md §2 step 1), and study creation.

use super::serve::ADMIN_TOKEN_ENV;
use crate::error::CliError;
use clap::{Args, Subcommand};
use fedhe_api::{CeremonySpec, Identity, MemberSpec, SignedStudySpec, StudySpec};
use fedhe_client::keys::{self, KeyDir, Passphrase};
use fedhe_client::member::{join_ceremony, verify_ceremony};
use fedhe_client::{Auth, Client, Tls};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// `fedhe ceremony ...`.
#[derive(Subcommand, Debug)]
pub enum CeremonyCommand {
    /// Create a member identity (ed25519) in a key folder and print its public key.
    Identity(IdentityArgs),
    /// Create a ceremony (administrator; token from FEDHE_ADMIN_TOKEN).
    Create(CreateArgs),
    /// Join: make the secret key share, commit, then reveal the public-key share.
    Join(JoinArgs),
    /// Show a ceremony's phase and who has committed and revealed (as a
    /// member with --member and --keys, or as the administrator with
    /// FEDHE_ADMIN_TOKEN alone).
    Status(StatusArgs),
    /// Recompute the CRS and the collective key, check this member's share is
    /// in, save the transcript and print its fingerprint.
    Verify(MemberArgs),
}

/// Arguments of `fedhe ceremony identity`.
#[derive(Args, Debug)]
pub struct IdentityArgs {
    /// The member's key folder (created 0700).
    #[arg(long)]
    keys: PathBuf,
    /// Replace an existing identity.
    #[arg(long)]
    force: bool,
    /// Print the public key of the existing identity again; never creates
    /// one.
    #[arg(long, conflicts_with = "force")]
    show: bool,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// Where the server is and how its certificate is trusted.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Server URL (`https://HOST:PORT`, or `http://` on loopback).
    #[arg(long)]
    pub server: String,
    /// Trust only this PEM CA certificate (a private CA, or the server's
    /// self-signed certificate) for an https:// server.
    #[arg(long, value_name = "PEM")]
    pub ca_cert: Option<PathBuf>,
    /// Let a member speak plain http:// to a host other than loopback (study
    /// metadata and results then cross the network in clear text; only on a
    /// trusted network). The administrator's token is never sent that way.
    #[arg(long)]
    pub allow_plain_http: bool,
}

impl ServerArgs {
    /// A client of the server speaking as `auth`.
    pub fn client(&self, auth: Auth) -> Result<Client, CliError> {
        let tls = match &self.ca_cert {
            Some(path) => Tls::ca_cert_file(path)?,
            None => Tls::default(),
        };
        let tls = tls.allow_plain_http(self.allow_plain_http);
        Ok(Client::with_tls(&self.server, auth, &tls)?)
    }
}

/// How a passphrase for the key files is given: a file, else the environment
/// (never an argument, which any user could read in `ps`).
#[derive(Args, Debug, Clone, Default)]
pub struct PassphraseArgs {
    /// Encrypt (or decrypt) the secret key files with the passphrase in this
    /// file (one trailing newline ignored; default: FEDHE_PASSPHRASE if set).
    #[arg(long, value_name = "FILE")]
    pub passphrase_file: Option<PathBuf>,
}

impl PassphraseArgs {
    /// The passphrase, if one is given.
    pub fn load(&self) -> Result<Option<Passphrase>, CliError> {
        Passphrase::from_file_or_env(self.passphrase_file.as_deref()).map_err(CliError::Usage)
    }

    /// Opens an existing key folder with the passphrase.
    pub fn open(&self, path: &Path) -> Result<KeyDir, CliError> {
        Ok(KeyDir::open(path)?.with_passphrase(self.load()?))
    }

    /// Opens or creates a key folder with the passphrase.
    pub fn open_or_create(&self, path: &Path) -> Result<KeyDir, CliError> {
        Ok(KeyDir::open_or_create(path)?.with_passphrase(self.load()?))
    }
}

/// Arguments of `fedhe ceremony create`.
#[derive(Args, Debug)]
pub struct CreateArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Ceremony id.
    #[arg(long)]
    id: String,
    /// Parameter set.
    #[arg(long, default_value = "n8192-q124")]
    params: String,
    /// A member as NAME=PUBLIC_KEY_HEX (repeat for each member).
    #[arg(long = "member", required = true)]
    members: Vec<String>,
    /// Seconds until the ceremony must be complete.
    #[arg(long, default_value_t = 3600)]
    deadline_secs: u64,
    /// Allow an insecure (test-only) parameter set.
    #[arg(long)]
    allow_insecure: bool,
    /// t-of-n decryption: any T members decrypt a round (n/2 < T ≤ n), or
    /// `majority` for ⌊n/2⌋ + 1. Without it every member must decrypt.
    #[arg(long, value_name = "T|majority")]
    threshold: Option<String>,
    #[command(flatten)]
    admin: AdminKeyArgs,
}

/// The T of `--threshold T|majority` for `members` members (`None`: n-of-n).
/// The server checks the range.
pub fn parse_threshold(arg: Option<&str>, members: usize) -> Result<Option<u32>, CliError> {
    match arg {
        None => Ok(None),
        Some("majority") => Ok(Some(members as u32 / 2 + 1)),
        Some(t) => t.parse::<u32>().map(Some).map_err(|_| {
            CliError::Usage(format!(
                "--threshold {t:?}: expected a number of members or `majority`"
            ))
        }),
    }
}

/// The administrator's signing identity (a key folder made by `fedhe
/// ceremony identity`): its public key goes into the ceremony's transcript,
/// and it signs every study spec of the ceremony.
#[derive(Args, Debug)]
pub struct AdminKeyArgs {
    /// The administrator's key folder.
    #[arg(long, value_name = "DIR")]
    admin_keys: PathBuf,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

impl AdminKeyArgs {
    /// The administrator's identity.
    fn identity(&self) -> Result<Identity, CliError> {
        load_identity(&self.passphrase.open(&self.admin_keys)?)
    }
}

/// Arguments of `fedhe ceremony join`.
#[derive(Args, Debug)]
pub struct JoinArgs {
    #[command(flatten)]
    member: MemberArgs,
    /// Replace existing key material in the folder.
    #[arg(long)]
    force: bool,
    /// Seconds to wait for every member to commit.
    #[arg(long, default_value_t = 600)]
    wait_secs: u64,
}

/// Who and where: the member's seat.
#[derive(Args, Debug)]
pub struct MemberArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Ceremony id.
    #[arg(long)]
    ceremony: String,
    /// The member's name.
    #[arg(long)]
    member: String,
    /// The member's key folder.
    #[arg(long)]
    keys: PathBuf,
    /// Allow an insecure (test-only) parameter set.
    #[arg(long)]
    allow_insecure: bool,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// Arguments of `fedhe ceremony status`: a member's seat, or none (the
/// administrator's token from the environment).
#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Ceremony id.
    #[arg(long)]
    ceremony: String,
    /// The member's name (with --keys); without both, the request is the
    /// administrator's (FEDHE_ADMIN_TOKEN).
    #[arg(long, requires = "keys")]
    member: Option<String>,
    /// The member's key folder.
    #[arg(long, requires = "member")]
    keys: Option<PathBuf>,
    #[command(flatten)]
    passphrase: PassphraseArgs,
}

/// Prints a line; a closed stdout (`| head`) is not an error worth a panic.
fn say(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// Loads a member's identity from its key folder (decrypted with the
/// folder's passphrase if it is sealed).
pub fn load_identity(keys: &KeyDir) -> Result<Identity, CliError> {
    Ok(keys.read_identity()?)
}

/// A client signing as the member whose keys are in `dir`.
pub fn member_client(server: &ServerArgs, member: &str, dir: &KeyDir) -> Result<Client, CliError> {
    server.client(Auth::Member {
        id: member.to_string(),
        identity: Arc::new(load_identity(dir)?),
    })
}

/// A client with the administrator's token from the environment.
pub fn admin_client(server: &ServerArgs) -> Result<Client, CliError> {
    let token = std::env::var(ADMIN_TOKEN_ENV).map_err(|_| {
        CliError::Usage(format!(
            "set {ADMIN_TOKEN_ENV} to the server's administrator token"
        ))
    })?;
    server.client(Auth::Admin(token.into()))
}

/// Runs `fedhe ceremony ...`.
pub fn run(command: CeremonyCommand) -> Result<(), CliError> {
    match command {
        CeremonyCommand::Identity(a) if a.show => {
            if !a.keys.join(keys::IDENTITY_FILE).exists() {
                return Err(CliError::Usage(format!(
                    "{} holds no identity; `fedhe ceremony identity --keys {}` (without --show) makes one",
                    a.keys.display(),
                    a.keys.display()
                )));
            }
            let dir = a.passphrase.open(&a.keys)?;
            say(&load_identity(&dir)?.public_key_hex());
            Ok(())
        }
        CeremonyCommand::Identity(a) => {
            let dir = a.passphrase.open_or_create(&a.keys)?;
            let identity = if dir.exists(keys::IDENTITY_FILE) && !a.force {
                load_identity(&dir)?
            } else {
                let identity = Identity::generate();
                dir.write_secret(keys::IDENTITY_FILE, &identity.seed()[..], a.force)?;
                identity
            };
            say(&identity.public_key_hex());
            Ok(())
        }
        CeremonyCommand::Create(a) => {
            let members = a
                .members
                .iter()
                .map(|m| {
                    let (id, key) = m.split_once('=').ok_or_else(|| {
                        CliError::Usage(format!("--member {m:?}: expected NAME=PUBLIC_KEY_HEX"))
                    })?;
                    Ok(MemberSpec {
                        id: id.to_string(),
                        identity_key: key.to_string(),
                    })
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            let threshold = parse_threshold(a.threshold.as_deref(), members.len())?;
            let status = admin_client(&a.server)?.create_ceremony(&CeremonySpec {
                id: a.id,
                parameter_set: a.params,
                members,
                deadline_secs: a.deadline_secs,
                allow_insecure: a.allow_insecure,
                admin_key: a.admin.identity()?.public_key_hex(),
                threshold,
            })?;
            say(&serde_json::to_string_pretty(&status).unwrap_or_default());
            Ok(())
        }
        CeremonyCommand::Join(a) => {
            let m = &a.member;
            let dir = m.passphrase.open_or_create(&m.keys)?;
            if !dir.exists(keys::IDENTITY_FILE) {
                return Err(CliError::Usage(format!(
                    "{} has no identity; run `fedhe ceremony identity --keys {}` and give the administrator its public key",
                    m.keys.display(),
                    m.keys.display()
                )));
            }
            if dir.has_passphrase() && !dir.is_encrypted(keys::IDENTITY_FILE)? {
                // The share will be sealed, but the identity stays readable:
                // say so rather than let the user believe both are protected.
                eprintln!(
                    "fedhe ceremony join: note: {} is not encrypted (it was created without a passphrase); the secret key share will be",
                    dir.path().join(keys::IDENTITY_FILE).display()
                );
            }
            let client = member_client(&m.server, &m.member, &dir)?;
            join_ceremony(
                &client,
                &dir,
                &m.ceremony,
                m.allow_insecure,
                a.force,
                Duration::from_secs(a.wait_secs),
            )?;
            say(&format!(
                "{} joined ceremony {}: secret key share{} in {}; run `fedhe ceremony verify` once every member revealed",
                m.member,
                m.ceremony,
                if dir.has_passphrase() { " (encrypted)" } else { "" },
                m.keys.display()
            ));
            Ok(())
        }
        CeremonyCommand::Status(m) => {
            let client = match (&m.member, &m.keys) {
                (Some(member), Some(keys)) => {
                    member_client(&m.server, member, &m.passphrase.open(keys)?)?
                }
                _ => admin_client(&m.server)?,
            };
            let status = client.ceremony(&m.ceremony)?;
            say(&serde_json::to_string_pretty(&status).unwrap_or_default());
            Ok(())
        }
        CeremonyCommand::Verify(m) => {
            let dir = m.passphrase.open(&m.keys)?;
            let client = member_client(&m.server, &m.member, &dir)?;
            let own = dir.read(keys::PUBLIC_SHARE_FILE)?;
            let verified = verify_ceremony(
                &client,
                &m.ceremony,
                Some((&m.member, &own)),
                m.allow_insecure,
            )?;
            let text = serde_json::to_vec_pretty(&verified.transcript).unwrap_or_default();
            dir.write(keys::TRANSCRIPT_FILE, &text, true)?;
            say(&format!(
                "ceremony {} verified: {} members, my share is in, the collective key is the sum of the revealed shares.",
                m.ceremony,
                verified.transcript.entries.len()
            ));
            say("transcript fingerprint (compare out of band):");
            say(&format!("  {}", verified.fingerprint));
            Ok(())
        }
    }
}

/// `fedhe study ...`.
#[derive(Subcommand, Debug)]
pub enum StudyCommand {
    /// Create a study under a complete ceremony (administrator).
    Create(StudyCreateArgs),
    /// Print a study's signed spec as its members receive it, every
    /// setting resolved (administrator).
    Show(StudyShowArgs),
}

/// Arguments of `fedhe study show`.
#[derive(Args, Debug)]
pub struct StudyShowArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Study id.
    #[arg(long)]
    id: String,
}

/// The private FBO-FedGP recipe's budget a study gets when its settings
/// name none: ε per member for all its data (δ = 1e-6).
pub const DEFAULT_STUDY_EPSILON: f64 = fedhe_algorithms::fbo_fedgp::PRIVATE_RECIPE_EPSILON;

/// The rounds an FBO-FedGP study runs when its settings name none.
pub const DEFAULT_STUDY_ROUNDS: usize = 15;

/// `config` with what it leaves out filled in (issue 46, item 4; issue 44:
/// private by default): for `fbo-fedgp`, the method's settings start from
/// [`fedhe_algorithms::FboFedGpParams::private_recipe`] for `settings.members`, else the
/// ceremony's member count (`members`, asked only then) (ε =
/// [`DEFAULT_STUDY_EPSILON`], [`DEFAULT_STUDY_ROUNDS`] rounds unless
/// `settings.rounds` says otherwise), each setting given replacing the
/// recipe's; `categorical_lengthscale` is written out resolved
/// ([`fedhe_algorithms::fbo_fedgp::DEFAULT_CATEGORICAL_LENGTHSCALE`] unless
/// given); `objective` defaults to the study id and `seed` to a fresh
/// public seed. The space (`lower`, `upper`) and `sense` stay required. A
/// noise-free study must say `"privacy": {"mode": "noise-free"}`.
pub fn resolve_study_config(
    mut config: serde_json::Value,
    algorithm: &str,
    study: &str,
    members: impl FnOnce() -> Result<usize, CliError>,
) -> Result<serde_json::Value, CliError> {
    use fedhe_algorithms::fbo_fedgp::FboFedGpParams;
    let object = config
        .as_object_mut()
        .ok_or_else(|| CliError::Usage("--config: not a JSON object".into()))?;
    object
        .entry("objective")
        .or_insert_with(|| serde_json::Value::from(study));
    if !object.contains_key("seed") {
        let seed = fedhe_ring::Csprng::from_entropy().next_u64() >> 11;
        object.insert("seed".into(), seed.into());
    }
    if algorithm != "fbo-fedgp" {
        return Ok(config);
    }
    let given = match object
        .remove("settings")
        .or_else(|| object.remove("fbo_fedgp"))
    {
        None => serde_json::Map::new(),
        Some(serde_json::Value::Object(map)) => map,
        Some(_) => {
            return Err(CliError::Usage(
                "--config settings: not a JSON object".into(),
            ))
        }
    };
    let rounds = match given.get("rounds") {
        None => DEFAULT_STUDY_ROUNDS,
        Some(r) => r
            .as_u64()
            .and_then(|r| usize::try_from(r).ok())
            .ok_or_else(|| CliError::Usage("--config settings.rounds: not a count".into()))?,
    };
    let members = match given.get("members") {
        None => members()?,
        Some(m) => m
            .as_u64()
            .and_then(|m| usize::try_from(m).ok())
            .ok_or_else(|| CliError::Usage("--config settings.members: not a count".into()))?,
    };
    let mut settings =
        FboFedGpParams::over_private_recipe(members, rounds, DEFAULT_STUDY_EPSILON, given)
            .map_err(|e| CliError::Usage(format!("--config settings: {e}")))?;
    // The held length-scale goes into the signed spec as a value, not
    // "unset": the signature then fixes it, whatever agent version a member
    // runs, and `study show` prints it. (`acquisition` and `trust_region`
    // stay unset where unset: they resolve per step, not to one value.)
    if settings
        .get("categorical_lengthscale")
        .is_none_or(serde_json::Value::is_null)
    {
        settings.insert(
            "categorical_lengthscale".into(),
            fedhe_algorithms::fbo_fedgp::DEFAULT_CATEGORICAL_LENGTHSCALE.into(),
        );
    }
    object.insert("settings".into(), serde_json::Value::Object(settings));
    Ok(config)
}

/// Arguments of `fedhe study create`.
#[derive(Args, Debug)]
pub struct StudyCreateArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Study id.
    #[arg(long)]
    id: String,
    /// The ceremony.
    #[arg(long)]
    ceremony: String,
    /// The method the agents run: any of `fedhe simulate`'s registry that
    /// aggregates (fbo-fedgp, fts, dp-fts-de, the ldp-* learners, fed-pne,
    /// dp-fed-pne, fed1-ucb, hct, the FBO-FedGP ablations).
    #[arg(long, default_value = "fbo-fedgp")]
    algorithm: String,
    /// A round closes at its deadline only with this many contributors.
    #[arg(long)]
    min_contributors: u32,
    /// Seconds a round collects contributions.
    #[arg(long, default_value_t = 600)]
    round_timeout_secs: u64,
    /// Seconds a round waits for decryption shares.
    #[arg(long, default_value_t = 600)]
    decrypt_timeout_secs: u64,
    /// The highest round number the server opens. A failed round is retried
    /// under the next number, so this ends a study that cannot finish
    /// (default: no cap).
    #[arg(long, value_name = "N")]
    round_cap: Option<u64>,
    /// The study's configuration (JSON): `objective`, `lower`, `upper` (or
    /// `space`), `sense`, `optimum`, `seed` and the method's `settings`.
    #[arg(long, default_value = "{}")]
    config: String,
    /// The typed search space (issue 46): a TOML file of `[[params]]`
    /// tables (`name`, `type` = float | int | categorical | fixed, `low`,
    /// `high`, `log`, `choices`, `value`) or the same as JSON
    /// (`{"params": [...]}`); it becomes the config's `space`, instead of
    /// `lower` / `upper`.
    #[arg(long, value_name = "FILE")]
    space: Option<String>,
    /// The bound on every |value| members encrypt (fixes the encoding);
    /// default: the method's channel bound from its settings.
    #[arg(long)]
    bound: Option<f64>,
    /// The encoding: `two-limb` (two slots per value, sums close to `f64`
    /// precision, as the simulator's channel) or `one-limb` (half the
    /// ciphertext slots, a sum's error up to n·2^−(f+1)).
    #[arg(long, default_value = "two-limb")]
    precision: fedhe_api::ValuePrecision,
    #[command(flatten)]
    admin: AdminKeyArgs,
}

/// Runs `fedhe study ...`.
pub fn run_study(command: StudyCommand) -> Result<(), CliError> {
    match command {
        StudyCommand::Show(a) => {
            let status = admin_client(&a.server)?.study(&a.id)?;
            say(&serde_json::to_string_pretty(&status.spec).unwrap_or_default());
            Ok(())
        }
        StudyCommand::Create(a) => {
            let mut config: serde_json::Value = serde_json::from_str(&a.config)
                .map_err(|e| CliError::Usage(format!("--config: {e}")))?;
            if let Some(path) = &a.space {
                let space = super::json_input::read_space(path)?;
                let object = config
                    .as_object_mut()
                    .ok_or_else(|| CliError::Usage("--config: not a JSON object".into()))?;
                if object.contains_key("space") {
                    return Err(CliError::Usage(
                        "--space: the --config has a `space` already: give it once".into(),
                    ));
                }
                object.insert(
                    "space".into(),
                    serde_json::to_value(space).map_err(|e| CliError::Usage(e.to_string()))?,
                );
            }
            // The ceremony is asked for its member count only when the
            // settings leave it out, so a refusal needs no server.
            let mut ceremony = None;
            let config = resolve_study_config(config, &a.algorithm, &a.id, || {
                let c = admin_client(&a.server)?.ceremony(&a.ceremony)?;
                let n = c.members.len();
                ceremony = Some(c);
                Ok(n)
            })?;
            // The agents refuse a study whose method they cannot run: say so
            // now, by the agent's own check, before anything is signed or sent.
            let valid = serde_json::from_value::<fedhe_client::agent::StudyConfig>(config.clone())
                .map_err(|e| CliError::Usage(format!("--config: {e}")))?
                .check(&a.algorithm)
                .map_err(|e| CliError::Usage(format!("--config: {e}")))?;
            let method = valid.method;
            if let Some((epsilon, delta)) = method.privacy_budget().filter(|(e, _)| *e > 0.0) {
                let ceiling = method
                    .signal_ceiling(valid.config.seed)
                    .map_err(|e| CliError::Usage(format!("--config: {e}")))?;
                eprintln!(
                    "private: ε = {epsilon} at δ = {delta:e} per member by the study's end{}",
                    ceiling.map_or(String::new(), |c| super::privacy::ceiling_clause(&c))
                );
            }
            let bound = a.bound.unwrap_or_else(|| method.channel_bound());
            let client = admin_client(&a.server)?;
            let ceremony = match ceremony {
                Some(c) => c,
                None => client.ceremony(&a.ceremony)?,
            };
            if ceremony.members.len() != method.members() {
                return Err(CliError::Usage(format!(
                    "--config settings.members: {} configured, but ceremony {} has {} members",
                    method.members(),
                    a.ceremony,
                    ceremony.members.len()
                )));
            }
            let spec = StudySpec {
                id: a.id,
                ceremony: a.ceremony,
                algorithm: a.algorithm,
                config,
                min_contributors: a.min_contributors,
                round_timeout_secs: a.round_timeout_secs,
                decrypt_timeout_secs: a.decrypt_timeout_secs,
                bound,
                precision: a.precision,
                round_cap: a.round_cap,
            };
            let signed = SignedStudySpec::sign(spec, &a.admin.identity()?);
            let status = client.create_study(&signed)?;
            say(&serde_json::to_string_pretty(&status).unwrap_or_default());
            Ok(())
        }
    }
}
