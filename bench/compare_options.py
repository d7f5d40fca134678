#!/usr/bin/env python3
"""Compares one module compiled under two sets of CPU pipeline options.

Both variants are compiled once (attention-run --compile-only
--emit-shared-object), run once to check that their outputs agree, and then
timed in rounds (outputs that disagree end the comparison before any
timing: an option that changes the numbers is not a speed difference).
Each round runs both and records the ratio B/A of their
fastest runs; the summary gives the median and quartiles of those per-round
ratios next to each side's own times. On a shared host whose speed drifts
by tens of percent within minutes, the per-round ratio moves far less than
either side's times, because both sides of a round meet the same phase.

Two ways to run a round:

  (default)  one after the other with --threads N each, the side that
             goes first alternating from round to round;
  --paired   both at the same time, one thread each, each pinned to its own
             logical CPU (the first two this process may use), swapped from
             round to round (needs two; on a host with SMT, pick two
             physical cores with taskset).

  /usr/bin/python3 bench/compare_options.py MODULE (.mlir, .onnx)
      --a "OPTIONS" --b "OPTIONS" [--rounds 20] [--repeat 5] [--threads 2]
      [--paired] [--input PATH.npy ...] [--tol 1e-4] [--build build]
      [--keep DIR] [--target-cpu CPU]

--target-cpu compiles both variants for another CPU this host can run
(znver3 on an AVX-512 host: the AVX2 code and its per-CPU defaults).

Without --input, every argument gets standard normal values from a fixed
seed (f32 and f16 arguments; others need --input). Exit status 1 when the
outputs disagree (|b - a| > tol + tol |a|) or a run fails.
"""

import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "execution"))
sys.path.insert(0, HERE)
import attn_exec  # noqa: E402  (the test suite's output comparison)
from run import parse_timing  # noqa: E402  (the benchmark's timing line)

DTYPES = {"f32": np.float32, "f16": np.float16}


def fail(message):
    print("compare_options: error: " + message, file=sys.stderr)
    sys.exit(1)


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def signature(runner, so):
    """The argument and result types of `so`'s entry point, each a list of
    (dtype, shape) pairs, from attention-run --print-signature."""
    p = run([runner, so, "--print-signature"])
    # A dynamic size prints as '?': kept as None. A 0-d tensor prints as
    # 'f32[]'.
    def sizes(text):
        return [None if d.strip() == "?" else int(d)
                for d in text.split(",")] if text.strip() else []
    types = lambda text: [(m.group(1), sizes(m.group(2)))
                          for m in re.finditer(r"(\w+)\[([^\]]*)\]", text)]
    for line in (p.stdout + p.stderr).splitlines():
        if line.startswith("@") and ") -> (" in line:
            args, results = line.split("(", 1)[1].split(") -> (", 1)
            return types(args), types(results)
    fail("no signature from attention-run:\n" + p.stderr)


def random_inputs(arg_types, work):
    rng = np.random.default_rng(0)
    paths = []
    for i, (dtype, shape) in enumerate(arg_types):
        if dtype not in DTYPES or None in shape:
            fail("argument %d is %s[%s]: pass the inputs with --input" %
                 (i, dtype, ", ".join("?" if n is None else str(n) for n in shape)))
        path = os.path.join(work, "arg%d.npy" % i)
        np.save(path, rng.standard_normal(shape).astype(DTYPES[dtype]))
        paths.append(path)
    return paths


def timing(p, what):
    if p.returncode:
        fail("%s failed:\n%s" % (what, p.stderr))
    try:
        ms = parse_timing(p.stdout)["min_ms"]
    except (RuntimeError, KeyError):
        fail("%s printed no timing:\n%s" % (what, p.stdout + p.stderr))
    # attention-run prints milliseconds to 3 decimals.
    return max(ms, 0.001)


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module")
    ap.add_argument("--a", default="", help="pipeline options of variant A")
    ap.add_argument("--b", default="", help="pipeline options of variant B")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5,
                    help="timed runs per side and round (the fastest counts)")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads per run without --paired")
    ap.add_argument("--paired", action="store_true",
                    help="run A and B at once, one thread and one CPU each")
    ap.add_argument("--input", action="append", default=[],
                    help="PATH.npy per argument (default: random)")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", help="keep the shared objects and outputs here")
    ap.add_argument("--target-cpu", default="host",
                    help="CPU both variants are compiled for (default: host)")
    args = ap.parse_args()
    if args.rounds < 1 or args.repeat < 1 or args.threads < 1:
        fail("--rounds, --repeat and --threads must be at least 1")
    if not args.tol >= 0:
        fail("--tol must be 0 or more, got %g" % args.tol)
    runner = os.path.join(args.build, "bin", "attention-run")
    if not os.access(runner, os.X_OK):
        fail("no attention-run in %s (build first, or pass --build)" % args.build)
    cpus = sorted(os.sched_getaffinity(0))
    if args.paired and len(cpus) < 2:
        fail("--paired needs two CPUs, this process may use %d" % len(cpus))

    work = args.keep or tempfile.mkdtemp(prefix="compare_options.")
    os.makedirs(work, exist_ok=True)
    try:
        variants = {"A": args.a, "B": args.b}
        sos = {}
        for name, opts in variants.items():
            sos[name] = os.path.join(work, name + ".so")
            p = run([runner, args.module, "--compile-only",
                     "--emit-shared-object=" + sos[name], "--pipeline-options=" + opts,
                     "--target-cpu=" + args.target_cpu])
            if p.returncode:
                fail("compiling %s with [%s] failed:\n%s" % (args.module, opts, p.stderr))
        arg_types, result_types = signature(runner, sos["A"])
        inputs = args.input or random_inputs(arg_types, work)
        in_args = ["--input=" + path for path in inputs]

        how = ("paired: both at once, one thread and one CPU each, CPUs "
               "swapped per round" if args.paired else
               "%d thread%s, the side that goes first alternating" %
               (args.threads, "" if args.threads == 1 else "s"))
        print("module %s (target CPU %s), %d round%s of %d run%s per side (%s)" %
              (args.module, args.target_cpu, args.rounds, "" if args.rounds == 1 else "s",
               args.repeat, "" if args.repeat == 1 else "s", how))

        # The outputs first: an option that changes the numbers is not a
        # speed difference.
        outputs = {}
        for name in variants:
            outs = [os.path.join(work, "%s.out%d.npy" % (name, i))
                    for i in range(len(result_types))]
            p = run([runner, sos[name], "--threads", str(args.threads)] +
                    ["--output=" + out for out in outs] + in_args)
            if p.returncode:
                fail("running %s [%s] failed:\n%s" % (name, variants[name], p.stderr))
            outputs[name] = [np.load(out) for out in outs]
        # The test suite's comparison (B against A): a non-finite value of A
        # must be matched exactly.
        diff = 0.0
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # its OK lines
                for i, (a, b) in enumerate(zip(outputs["A"], outputs["B"])):
                    diff = max(diff, attn_exec.assert_close(
                        "result %d" % i, b, a, args.tol, args.tol))
        except AssertionError as e:
            print("outputs DISAGREE: %s" % e)
            sys.exit(1)
        verdict = "max abs diff %.3g (tolerance %.3g abs + %.3g rel)" % (
            diff, args.tol, args.tol)
        print("outputs agree: " + verdict, flush=True)

        times = {"A": [], "B": []}
        ratios = []
        for r in range(args.rounds):
            order = ["A", "B"] if r % 2 == 0 else ["B", "A"]
            got = {}
            if args.paired:
                procs = {}
                for name, cpu in zip(order, cpus[:2]):
                    cmd = [runner, sos[name], "--threads", "1",
                           "--repeat", str(args.repeat)] + in_args
                    procs[name] = subprocess.Popen(
                        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        text=True, preexec_fn=pinned(cpu))
                outs = {name: proc.communicate() for name, proc in procs.items()}
                for name, proc in procs.items():
                    got[name] = timing(subprocess.CompletedProcess(
                        proc.args, proc.returncode, *outs[name]), name)
            else:
                for name in order:
                    got[name] = timing(run([runner, sos[name], "--threads",
                                            str(args.threads), "--repeat",
                                            str(args.repeat)] + in_args), name)
            for name in got:
                times[name].append(got[name])
            ratios.append(got["B"] / got["A"])

        for name in variants:
            t = times[name]
            print("%s [%s]: fastest %.3f ms, median of the rounds' fastest %.3f ms" %
                  (name, variants[name], min(t), float(np.median(t))))
        q1, med, q3 = np.percentile(ratios, [25, 50, 75])
        print("B/A per round: median %.3f, quartiles %.3f-%.3f (below 1: B is faster)" %
              (med, q1, q3))
        if min(min(t) for t in times.values()) < 0.1:
            print("note: runs under 0.1 ms; times are printed to 0.001 ms, so "
                  "the ratios are coarse")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
