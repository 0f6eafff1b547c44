"""The package under hostile use, without a GPU:

- 8 threads calling lookup() while a ninth closes the Database, many times over in a child
  process (a crash or a hang fails the test): no crash, no hang, every lookup either answers or
  raises DatabaseClosed, and the handle is freed only when no call holds it;
- wrong argument types raise TypeError naming the argument (they raised AttributeError), a NUL
  in a path or a text is refused (it opened another file), a negative, NaN or infinite
  nearest_max is refused (it was the default silently), page_size=2**40 is refused (a C int:
  it wrapped to 0, a contiguous layout);
- a fuzz loop over every argument of Database(), lookup() and attention_shape() with values of
  every kind: the only exceptions are TypeError, ValueError and RooftuneError.
"""
import math
import os
import random
import subprocess
import sys
import textwrap

import pytest

import rooftune

RACE_RUNS = int(os.environ.get("ROOFTUNE_RACE_RUNS", "200"))

RACE = textwrap.dedent("""
    import os, random, sys, threading, time
    import rooftune
    path, runs = sys.argv[1], int(sys.argv[2])
    answered = refused = 0
    for run in range(runs):
        db = rooftune.Database(path)
        start = threading.Barrier(9)
        errors, counts = [], [0, 0]
        def reader(k):
            start.wait()
            while True:
                try:
                    m = db.lookup("gemm", "4096x4096x4096", "bf16")
                    assert m.found, m
                    counts[0] += 1
                except rooftune.DatabaseClosed:
                    counts[1] += 1
                    return
                except BaseException as e:
                    errors.append(repr(e))
                    return
        threads = [threading.Thread(target=reader, args=(k,), daemon=True) for k in range(8)]
        for t in threads:
            t.start()
        start.wait()
        time.sleep(random.random() * 0.004)
        db.close()
        for t in threads:
            t.join(30)
            if t.is_alive():
                print("hang: a lookup thread did not end in run", run, flush=True)
                os._exit(3)  # not sys.exit: it would wait for the stuck thread
        if errors:
            print("errors:", errors[:3], flush=True)
            os._exit(4)
        try:
            db.lookup("gemm", "4096x4096x4096", "bf16")
            os._exit(5)
        except rooftune.DatabaseClosed as e:
            assert "closed" in str(e)
        db.close()  # twice is fine
        answered += counts[0]
        refused += counts[1]
    print("race: %d runs, %d lookups answered, %d refused after close" % (runs, answered, refused))
""")


def test_close_race(model_db):
    """8 threads look up while one closes: RACE_RUNS runs in a child, no crash, no hang."""
    r = subprocess.run([sys.executable, "-c", RACE, str(model_db), str(RACE_RUNS)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, "the close race failed (exit %d): %s %s" % (r.returncode, r.stdout[-800:],
                                                                          r.stderr[-1500:])
    assert "race: %d runs" % RACE_RUNS in r.stdout
    print(r.stdout.strip())


def test_closed_database(model_db):
    db = rooftune.Database(model_db)
    db.close()
    assert db.closed
    with pytest.raises(rooftune.DatabaseClosed, match="is closed"):
        db.lookup("gemm", "4096x4096x4096", "bf16")
    with pytest.raises(rooftune.DatabaseClosed):
        db.reload()
    with pytest.raises(rooftune.DatabaseClosed):
        with db:
            pass
    assert issubclass(rooftune.DatabaseClosed, ValueError)


def test_types_name_the_argument(model_db):
    db = rooftune.Database(model_db)
    cases = [
        (lambda: db.lookup(1, "4096x4096x4096", "bf16"), "family"),
        (lambda: db.lookup("gemm", None, "bf16"), "shape"),
        (lambda: db.lookup("gemm", "4096x4096x4096", b"bf16"), "dtype"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", layout=3), "layout"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", device=["a"]), "device"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", toolkit=1.5), "toolkit"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", exact="yes"), "exact"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", nearest_max="far"), "nearest_max"),
        (lambda: db.lookup("gemm", "4096x4096x4096", "bf16", nearest_max=True), "nearest_max"),
        (lambda: rooftune.Database(42), "path"),
        (lambda: rooftune.attention_shape("bf16", 1.5, 8, 128, 64), "batch"),
        (lambda: rooftune.attention_shape("bf16", 1, "8", 128, 64), "heads_q"),
        (lambda: rooftune.attention_shape("bf16", 1, 8, 128, 64, causal=None), "causal"),
        (lambda: rooftune.attention_shape(16, 1, 8, 128, 64), "dtype"),
    ]
    for call, name in cases:
        with pytest.raises(TypeError) as e:
            call()
        assert name in str(e.value), (name, str(e.value))


def test_values_refused(model_db, tmp_path):
    db = rooftune.Database(model_db)
    for bad in (-1, -0.5, float("nan"), float("inf"), 0):
        with pytest.raises(ValueError, match="nearest_max"):
            db.lookup("gemm", "2048x4096x4096", "bf16", nearest_max=bad)
    assert db.lookup("gemm", "2048x4096x4096", "bf16", nearest_max=100).found
    for text in ("gemm\0x", "4096\0"):
        with pytest.raises(ValueError, match="NUL"):
            db.lookup(text, text, "bf16")
    # a NUL in a path: the C library would open the file named by what precedes it
    other = tmp_path / "a.db"
    other.write_bytes(open(model_db, "rb").read())
    for p in (str(other) + "\0.ignored", os.fsencode(str(other)) + b"\0x"):
        with pytest.raises(ValueError, match="NUL"):
            rooftune.Database(p)
    with pytest.raises(ValueError, match="page_size"):
        rooftune.attention_shape("bf16", 1, 8, 128, 64, page_size=2 ** 40)
    with pytest.raises(ValueError, match="batch"):
        rooftune.attention_shape("bf16", 2 ** 63, 8, 128, 64)
    with pytest.raises(ValueError, match="heads_q"):
        rooftune.attention_shape("bf16", 1, -8, 128, 64)
    with pytest.raises(rooftune.RooftuneError, match="page_size"):  # the library's own rule: 16, 32 or 64
        rooftune.attention_shape("bf16", 1, 8, 128, 64, page_size=2 ** 31 - 1)
    assert rooftune.attention_shape("bf16", 1, 8, 128, 64, page_size=16).endswith(":paged16")


def _values(rng):
    """Values of every kind, for the fuzz loop."""
    pool = [None, True, False, 0, 1, -1, 2 ** 31, 2 ** 40, 2 ** 63, -2 ** 63 - 1, 2 ** 64, 0.0, -0.0, 1.25, -3.5,
            float("nan"), float("inf"), -float("inf"), 1e308, "", "gemm", "bf16", "f16", "4096x4096x4096",
            "64x64x64:nt", "1x8x128x64", "\0", "gemm\0", "x" * 5000, "\udcff", "é", b"gemm", b"\0", bytearray(b"x"),
            [], {}, (), object(), 3j, "../../etc/passwd", "%s%n%x", "1e400", "nan"]
    v = rng.choice(pool)
    if rng.random() < 0.2:
        v = "".join(chr(rng.randrange(1, 0x2000)) for _ in range(rng.randrange(0, 40)))
    return v


FUZZ_RUNS = int(os.environ.get("ROOFTUNE_PY_FUZZ_RUNS", "3000"))


def test_arguments_fuzz(model_db):
    """FUZZ_RUNS calls with arguments of every kind: only TypeError, ValueError, RooftuneError."""
    rng = random.Random(1)
    db = rooftune.Database(model_db)
    allowed = (TypeError, ValueError, rooftune.RooftuneError)
    kinds = {"lookup": 0, "attention_shape": 0, "Database": 0}
    for i in range(FUZZ_RUNS):
        which = rng.choice(list(kinds))
        kinds[which] += 1
        try:
            if which == "lookup":
                args = [rng.choice(["gemm", "attention", _values(rng)]), rng.choice(["4096x4096x4096", _values(rng)]),
                        rng.choice(["bf16", _values(rng)])]
                kw = {k: _values(rng) for k in ("layout", "device", "exact", "allow_mismatch", "runnable",
                                                "nearest_max", "toolkit") if rng.random() < 0.3}
                m = db.lookup(*args, **kw)
                assert isinstance(m, rooftune.Match)
            elif which == "attention_shape":
                args = [rng.choice(["bf16", "f16", _values(rng)])] + \
                       [rng.choice([1, 8, 64, 128, _values(rng)]) for _ in range(4)]
                kw = {k: _values(rng) for k in ("heads_kv", "seq_kv", "causal", "page_size") if rng.random() < 0.3}
                s = rooftune.attention_shape(*args, **kw)
                assert isinstance(s, str) and s
            else:
                rooftune.Database(_values(rng)).close()
        except allowed:
            pass
    assert db.lookup("gemm", "4096x4096x4096", "bf16").found  # the database still answers
    print("python argument fuzz: %d calls (%s), only TypeError, ValueError and RooftuneError"
          % (FUZZ_RUNS, ", ".join("%s %d" % kv for kv in kinds.items())))
