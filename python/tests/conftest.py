"""A real federation for the Python package's tests: a `fedhe serve` process
on loopback (an SQLite file), a toy key ceremony of three members joined by
`fedhe ceremony join` processes, and studies created by `fedhe study create
--space FILE`, all with the `fedhe` binary that `cargo test` built (or
FEDHE_BIN). Nothing is mocked: the members' agents are the package's own
(`fedhe.Agent`), speaking to the server over HTTP with real multiparty
encryption (the toy parameter set, which the server and agents accept only
with their test-only flags)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Dict, List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "python-test-admin-token"
MEMBERS = ["north", "south", "west"]

SPACE_TOML = """
[[params]]
name = "lr"
type = "float"
low = 1e-5
high = 0.1
log = true

[[params]]
name = "depth"
type = "int"
low = 2
high = 12

[[params]]
name = "kernel"
type = "categorical"
choices = ["rbf", "poly", "linear"]

[[params]]
name = "gamma"
type = "float"
low = 1e-3
high = 1.0
log = true
when = { param = "kernel", values = ["rbf", "poly"] }
"""


def fedhe_bin() -> str:
    path = os.environ.get("FEDHE_BIN") or str(ROOT / "target" / "debug" / "fedhe")
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"no fedhe binary at {path}: build it (cargo build -p fedhe-cli) or set FEDHE_BIN"
        )
    return path


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, FEDHE_ADMIN_TOKEN=ADMIN_TOKEN)
    out = subprocess.run(
        [fedhe_bin(), *args], capture_output=True, text=True, env=env, timeout=600
    )
    if check and out.returncode != 0:
        raise AssertionError(f"fedhe {' '.join(args[:3])}: {out.returncode}\n{out.stderr}")
    return out


class Federation:
    """A server, a ceremony of MEMBERS, and their key folders."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        env = dict(os.environ, FEDHE_ADMIN_TOKEN=ADMIN_TOKEN)
        self.server = subprocess.Popen(
            [
                fedhe_bin(),
                "serve",
                "--allow-insecure",
                "--listen",
                "127.0.0.1:0",
                "--database-url",
                f"sqlite://{root / 'fedhe.db'}",
            ],
            stdout=subprocess.PIPE,
            stderr=open(root / "server.log", "w"),
            text=True,
            env=env,
        )
        line = self.server.stdout.readline()
        urls = [w for w in line.split() if w.startswith("http://")]
        if not urls:
            self.server.kill()
            raise RuntimeError(f"fedhe serve printed no URL: {line!r}")
        self.url = urls[0]
        self.admin = str(root / "admin")
        run("ceremony", "identity", "--keys", self.admin)
        members = []
        for name in MEMBERS:
            key = run("ceremony", "identity", "--keys", self.keys(name)).stdout.strip()
            members += ["--member", f"{name}={key}"]
        run(
            "ceremony", "create", "--server", self.url, "--admin-keys", self.admin,
            "--id", "c", "--params", "toy-n1024", "--allow-insecure", *members,
        )
        joins = [
            subprocess.Popen(
                [
                    fedhe_bin(), "ceremony", "join", "--server", self.url, "--ceremony", "c",
                    "--member", name, "--allow-insecure", "--keys", self.keys(name),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in MEMBERS
        ]
        for j in joins:
            _, err = j.communicate(timeout=600)
            assert j.returncode == 0, err
        self.space = root / "space.toml"
        self.space.write_text(SPACE_TOML)

    def keys(self, name: str) -> str:
        return str(self.root / "keys" / name)

    def create_study(self, study: str, rounds: int, seed: int = 5) -> None:
        """A 3-of-3 FBO-FedGP study of the typed space, small enough for a
        test: 3 initial points and one point a round per member."""
        config = {
            "sense": "minimise",
            "seed": seed,
            "settings": {
                "rounds": rounds,
                "initial_points": 3,
                "support_size": 6,
                "acq_candidates": 200,
            },
        }
        run(
            "study", "create", "--server", self.url, "--admin-keys", self.admin,
            "--id", study, "--ceremony", "c", "--min-contributors", "3",
            "--config", json.dumps(config), "--space", str(self.space),
        )

    def journal(self, name: str, study: str) -> List[Dict]:
        path = pathlib.Path(self.keys(name)) / "studies" / study / "evaluations.jsonl"
        return [json.loads(l) for l in path.read_text().splitlines() if l.strip()]

    def close(self) -> None:
        self.server.kill()
        self.server.wait()


@pytest.fixture(scope="session")
def federation(tmp_path_factory: pytest.TempPathFactory):
    f = Federation(tmp_path_factory.mktemp("federation"))
    yield f
    f.close()


def python_member(script: str, *args: str) -> subprocess.Popen:
    """A member as its own Python process, running `script` (a file under
    tests/members/) with this interpreter and the package importable."""
    return subprocess.Popen(
        [sys.executable, str(pathlib.Path(__file__).parent / "members" / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
