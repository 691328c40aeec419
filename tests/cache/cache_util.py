"""What the disk-cache tests share: the result of a child process that ran ops from a fresh start."""
import json


def finish(p):
    """The child's stats and stderr; it must exit cleanly and its results must be CPU's."""
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    assert line, out + err[-3000:]
    r = json.loads(line[-1][len("RESULT "):])
    assert r["ok"], "results differ from CPU"
    return r["stats"], err
