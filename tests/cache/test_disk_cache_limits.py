"""The disk cache a user can leave on: bounded and private.

TORCH_TPU_CACHE_MAX_SIZE bounds the directory (the least recently used
entries go first, with several processes writing into it too); a directory
other users may write is not used at all (its entries would be code this
process runs): one warning, the memory cache only, the same results; what
the cache creates is 0700 / 0600; `python -m torch_tpu.doctor` shows the
directory, its size, the bound and the trust check, and --clear-cache
removes the cache's files and nothing else.

Each case runs small workloads in fresh processes: `n` in TT_NS gives the
programs of `torch.full((n,), 2.0) * 3 + n` (three per n, of nearly the
same size for one-digit and for two-digit n)."""
import os
import re
import subprocess
import sys
import textwrap
import time

import cache_util
import pytest

CHILD = textwrap.dedent(
    r"""
    import json, os, torch, torch_tpu
    ok = True
    for n in [int(v) for v in os.environ["TT_NS"].split(",")]:
        got = (torch.full((n,), 2.0, device="tpu") * 3 + n).cpu()
        ok &= got.tolist() == [6.0 + n] * n
    print("RESULT " + json.dumps({"ok": ok, "stats": torch.tpu._get_cache_stats()}))
    """
)


def start(cache_dir, ns, bound=None, umask=None):
    env = dict(os.environ, TORCH_TPU_DISK_CACHE="1", TORCH_TPU_CACHE_DIR=str(cache_dir),
               TT_NS=",".join(str(n) for n in ns))
    for k in ("TORCH_TPU_DEFER_AND_FUSE", "TORCH_TPU_LAUNCH_BLOCKING", "TORCH_TPU_CACHE_MAX_SIZE"):
        env.pop(k, None)
    if bound is not None:
        env["TORCH_TPU_CACHE_MAX_SIZE"] = str(bound)
    return subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def finish(p):
    """The child's stats and stderr; its results must be CPU's."""
    return cache_util.finish(p)


def run(cache_dir, ns, bound=None, umask=None):
    return finish(start(cache_dir, ns, bound, umask))[0]


def ours(d):
    """The cache's entries and lists in d: {name: (size, mode)}."""
    out = {}
    for f in os.listdir(d):
        if f.endswith((".ttexec", ".ttlist")):
            st = os.stat(os.path.join(d, f))
            out[f] = (st.st_size, st.st_mode & 0o7777)
    return out


def size_of(d):
    return sum(s for s, _mode in ours(d).values())


@pytest.fixture(scope="module")
def group_bytes(tmp_path_factory):
    """The bytes of one n's three entries, and the largest entry."""
    d = tmp_path_factory.mktemp("measure")
    s = run(d, [5])
    entries = [size for f, (size, _mode) in ours(d).items() if f.endswith(".ttexec")]
    assert len(entries) == 3 == s["disk_writes"], ours(d)
    return sum(entries), max(entries)


def test_bound_drops_the_least_recently_used(tmp_path, group_bytes):
    group, _largest = group_bytes
    bound = int(5.5 * group)  # room for five n's
    s = run(tmp_path, [1, 2, 3, 4], bound)
    assert s["disk_writes"] == 12 and s["disk_evictions"] == 0
    time.sleep(0.05)  # distinct file times
    s = run(tmp_path, [1], bound)  # hits: n=1's entries are used again
    assert s["misses"] == 0 and s["disk_hits"] == 3
    time.sleep(0.05)
    s = run(tmp_path, [5, 6], bound)  # past the bound: n=2, the least recently used, goes
    assert s["disk_writes"] == 6 and s["disk_evictions"] >= 2, s
    assert size_of(tmp_path) <= bound
    kept = run(tmp_path, [1, 5, 6], bound)
    assert kept["misses"] == 0, kept
    gone = run(tmp_path, [2], bound)
    assert gone["misses"] >= 2, gone


def test_two_processes_share_the_bound(tmp_path, group_bytes):
    """Two processes fill one directory at once: it ends within the bound, give or take the tenth of it that
    the other process may have written since one's last look (less than an entry here)."""
    group, largest = group_bytes
    bound = int(2.5 * group)  # about 8 entries; each process writes 24
    assert bound // 10 < largest
    ps = [start(tmp_path, range(10, 18), bound), start(tmp_path, range(20, 28), bound)]
    ss = [finish(p)[0] for p in ps]
    assert all(s["disk_writes"] == 24 and s["disk_errors"] == 0 for s in ss), ss
    assert sum(s["disk_evictions"] for s in ss) >= 30, ss  # of 48 written (one removal of a file by both counts once)
    assert size_of(tmp_path) <= bound + bound // 10, (size_of(tmp_path), bound, ours(tmp_path))
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    # what is left loads and computes; the last n each wrote is among it
    w = run(tmp_path, [17, 27], bound)
    assert w["disk_rejected"] == 0 and w["disk_errors"] == 0 and w["disk_hits"] >= 3, w


def test_no_bound(tmp_path):
    s = run(tmp_path, [1, 2, 3], 0)
    assert s["disk_writes"] == 9 and s["disk_evictions"] == 0
    assert len([f for f in ours(tmp_path) if f.endswith(".ttexec")]) == 9


def test_unparsable_bound_keeps_the_default(tmp_path):
    p = start(tmp_path, [1], "lots")
    s, err = finish(p)
    assert "TORCH_TPU_CACHE_MAX_SIZE=lots is not a byte count" in err and "4G" in err, err
    assert s["disk_writes"] == 3 and s["disk_dir"] == str(tmp_path)


def planted(src, dst):
    """Copies src's entries into dst: what another user could plant there."""
    for f in ours(src):
        with open(os.path.join(src, f), "rb") as a, open(os.path.join(dst, f), "wb") as b:
            b.write(a.read())


@pytest.mark.parametrize("mode, reason", [(0o777, "is writable by other users (mode 0777)"),
                                          (0o770, "is writable by its group (mode 0770)")])
def test_directory_others_may_write_is_refused(tmp_path, mode, reason):
    warm = tmp_path / "warm"
    run(warm, [1, 2])
    shared = tmp_path / "shared"
    shared.mkdir()
    planted(warm, shared)
    before = sorted(os.listdir(shared))
    shared.chmod(mode)
    s, err = finish(start(shared, [1, 2, 3]))
    warning = [ln for ln in err.splitlines() if "compilation cache" in ln]
    assert warning == [f"[torch_tpu] compilation cache disabled: {shared} {reason}; using the memory cache only"], err
    # nothing read (the planted entries are not run), nothing written; results right (finish checks them)
    assert s["disk_dir"] is None and s["disk_hits"] == 0 and s["misses"] == 9, s
    assert sorted(os.listdir(shared)) == before


def test_another_users_directory_is_refused(tmp_path):
    """root gives a directory to another uid; another user takes root's own /usr (0755, writable by no one
    else: only the owner check refuses it)."""
    if os.geteuid() == 0:
        d, owner = tmp_path / "theirs", 12345
        d.mkdir(mode=0o700)
        os.chown(d, owner, owner)
    else:
        d, owner = "/usr", os.stat("/usr").st_uid
    s, err = finish(start(d, [1]))
    assert f"{d} is owned by uid {owner}, not by this user (uid {os.geteuid()})" in err, err
    assert s["disk_dir"] is None
    assert s["disk_dir"] is None and os.listdir(d) == []


def test_what_the_cache_creates_is_private(tmp_path):
    """Under a world-writable sticky parent (/tmp's mode) the cache creates mine/cache: both 0700, every file
    0600, whatever the umask."""
    parent = tmp_path / "sticky"
    parent.mkdir()
    parent.chmod(0o1777)
    d = parent / "mine" / "cache"
    s = run(d, [1, 2], umask=0)
    assert s["disk_dir"] == str(d) and s["disk_writes"] == 6
    assert (d.stat().st_mode & 0o7777) == 0o700 and ((parent / "mine").stat().st_mode & 0o7777) == 0o700
    files = ours(d)
    assert len(files) == 7 and all(mode == 0o600 for _size, mode in files.values()), files


def doctor(*args, **env):
    e = dict(os.environ, **env)
    e.pop("TORCH_TPU_DEFER_AND_FUSE", None)
    return subprocess.run([sys.executable, "-m", "torch_tpu.doctor", *args], capture_output=True, text=True,
                          timeout=300, env=e)


def test_doctor_shows_the_bound_and_the_trust(tmp_path):
    run(tmp_path / "c", [1])
    r = doctor(TORCH_TPU_CACHE_DIR=str(tmp_path / "c"), TORCH_TPU_CACHE_MAX_SIZE="64M")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert f"compilation cache: {tmp_path / 'c'}" in r.stdout, r.stdout
    # the child's three entries and the doctor's own smoke test's
    assert int(re.search(r"(\d+) entries, ", r.stdout).group(1)) > 3, r.stdout
    assert "of 64.0 MiB (TORCH_TPU_CACHE_MAX_SIZE=64M)" in r.stdout, r.stdout
    assert "trusted: this user's, written by no one else" in r.stdout, r.stdout
    (tmp_path / "c").chmod(0o777)
    r = doctor(TORCH_TPU_CACHE_DIR=str(tmp_path / "c"))
    assert "of 4.00 GiB (default 4G)" in r.stdout, r.stdout
    assert f"NOT trusted: {tmp_path / 'c'} is writable by other users (mode 0777)" in r.stdout, r.stdout


def test_doctor_clear_cache_removes_only_the_caches_files(tmp_path):
    d = tmp_path / "c"
    run(d, [1, 2])
    n = len(ours(d))
    assert n == 7
    (d / "notes.txt").write_text("mine")
    (d / ".0123456789abcdef.ttexec.77.3.tmp").write_text("half")  # a writer that died
    (d / "0123456789ABCDEF.ttexec").write_text("not a name of ours")
    r = doctor("--clear-cache", TORCH_TPU_CACHE_DIR=str(d))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert f"removed {n + 1} files" in r.stdout and str(d) in r.stdout, r.stdout
    assert sorted(os.listdir(d)) == ["0123456789ABCDEF.ttexec", "notes.txt"]
    w = run(d, [1])  # an empty cache: compiled again, right
    assert w["misses"] == 3 and w["disk_hits"] == 0
