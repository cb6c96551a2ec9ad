"""What `make cluster` and `make cluster-check` need on the machine, and getting it: the programs the
hosts run (haproxy, PgBouncer, Redis and its Sentinel, PostgreSQL 15, `ip`), each with the Debian
package that brings it. Missing ones are named in one line and, unless told not to, installed with
apt-get (the check runs as root anyway); without apt-get, the line says what to install."""
from __future__ import annotations

import os
from pathlib import Path
import shutil
import subprocess

PG_BIN = Path("/usr/lib/postgresql/15/bin")
# program -> the Debian package that installs it
PROGRAMS = {
    "ip": "iproute2", "setpriv": "util-linux", "haproxy": "haproxy", "pgbouncer": "pgbouncer",
    "redis-server": "redis-server", "redis-sentinel": "redis-sentinel", "redis-cli": "redis-tools",
    "psql": "postgresql-client-15", "pg_isready": "postgresql-client-15",
    str(PG_BIN / "initdb"): "postgresql-15", str(PG_BIN / "postgres"): "postgresql-15",
}


def missing(programs: dict = PROGRAMS, which=shutil.which) -> dict:
    """The programs not found (an absolute path must exist; a name must be on PATH), with their packages."""
    return {program: package for program, package in programs.items()
            if not (os.path.exists(program) if os.path.isabs(program) else which(program))}


def needs_line(absent: dict) -> str:
    packages = " ".join(sorted(set(absent.values())))
    names = ", ".join(os.path.basename(program) for program in absent)
    return f"cluster: needs {names} (Debian packages: {packages})"


def provide(*, install: bool = True) -> None:
    """Return when every program is there; install the missing ones' packages first if allowed;
    otherwise stop with one line naming them."""
    absent = missing()
    if not absent:
        return
    line = needs_line(absent)
    apt = shutil.which("apt-get")
    if not install or apt is None:
        raise SystemExit(f"{line}; install them (apt-get install {' '.join(sorted(set(absent.values())))})")
    print(f"{line}: installing them with apt-get", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    packages = sorted(set(absent.values()))
    command = [apt, "install", "-y", "-q", "--no-install-recommends", *packages]
    if subprocess.run(command, env=env, check=False).returncode != 0:
        subprocess.run([apt, "update", "-q"], env=env, check=False)      # a stale package list, the usual cause
        subprocess.run(command, env=env, check=False)
    still = missing()
    if still:
        raise SystemExit(f"{needs_line(still)}; apt-get could not install them (see above)")
