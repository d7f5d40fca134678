"""Runs attention-run (argv[1]) on multi-result.mlir (argv[2]) with the
output paths users give: a set with one unwritable path, the same file
twice, a symbolic link, a FIFO, a 250-character name, a directory. Prints
one line per case: the exit status, which files exist, the message, and
for written results whether they equal the reference run's bits."""
import os
import subprocess
import sys
import threading

import numpy as np

run, module, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.join(work, "real"), exist_ok=True)
os.makedirs(os.path.join(work, "adir.npy"), exist_ok=True)
x = os.path.join(work, "x.npy")
np.save(x, np.random.default_rng(4).standard_normal((64, 16)).astype(np.float32))
p = lambda name: os.path.join(work, name)


def attention_run(entry, outputs):
    proc = subprocess.run([run, module, "--entry", entry, "--input", x] +
                          sum([["--output", o] for o in outputs], []),
                          capture_output=True, text=True)
    lines = proc.stderr.strip().splitlines()
    return proc.returncode, lines[-1] if lines else ""


def same(a, b):
    return bool(np.array_equal(np.load(a), np.load(b)))


# The reference: three results into plain files.
rc, _ = attention_run("twice", [p("r0.npy"), p("r1.npy"), p("r2.npy")])
print("reference rc", rc)
# One unwritable path among three: nothing is written.
rc, msg = attention_run("twice", [p("a0.npy"), p("a1.npy"), p("missing/a2.npy")])
print("missing directory rc", rc, "files", [os.path.exists(p(n)) for n in ("a0.npy", "a1.npy")])
print(msg)
# The same file twice, through ".." and through a symbolic link.
os.symlink("real/t.npy", p("link.npy"))
rc, msg = attention_run("twice", [p("d.npy"), p("real/../d.npy"), p("e.npy")])
print("same file rc", rc, "files", os.path.exists(p("d.npy")))
print(msg)
rc, msg = attention_run("twice", [p("real/t.npy"), p("e.npy"), p("link.npy")])
print("same file through a link rc", rc)
print(msg)
# A symbolic link: its target is written, the link stays.
rc, _ = attention_run("twice", [p("link.npy"), p("l1.npy"), p("l2.npy")])
print("link rc", rc, "still a link", os.path.islink(p("link.npy")),
      "target bits", same(p("real/t.npy"), p("r0.npy")))
# A FIFO: written in place (a reader gets the bytes), the others renamed.
os.mkfifo(p("fifo.npy"))
got = {}
reader = threading.Thread(target=lambda: got.update(b=open(p("fifo.npy"), "rb").read()))
reader.start()
rc, _ = attention_run("twice", [p("f0.npy"), p("fifo.npy"), p("f2.npy")])
reader.join(60)
with open(p("from_fifo.npy"), "wb") as f:
    f.write(got.get("b", b""))
print("fifo rc", rc, "still a fifo", not os.path.isfile(p("fifo.npy")),
      "bits", same(p("from_fifo.npy"), p("r1.npy")) and same(p("f2.npy"), p("r2.npy")))
# /dev/stdout: a link into /proc, written in place (to a pipe, and appended
# to a file that stdout is redirected to with >>).
proc = subprocess.run([run, module, "--entry", "twice", "--input", x, "--output", p("s0.npy"),
                       "--output", "/dev/stdout", "--output", p("s2.npy")],
                      capture_output=True)
import io  # noqa: E402
print("stdout pipe rc", proc.returncode, "bits",
      proc.returncode == 0 and bool(np.array_equal(np.load(io.BytesIO(proc.stdout)),
                                                   np.load(p("r1.npy")))))
with open(p("log.txt"), "wb") as log:
    log.write(b"first line\n")
with open(p("log.txt"), "ab") as log:
    rc = subprocess.run([run, module, "--entry", "twice", "--input", x, "--output", p("t0.npy"),
                         "--output", "/dev/stdout", "--output", p("t2.npy")],
                        stdout=log, stderr=subprocess.DEVNULL).returncode
data = open(p("log.txt"), "rb").read()
print("stdout appended rc", rc, "kept", data.startswith(b"first line\n"), "bits",
      bool(np.array_equal(np.load(io.BytesIO(data[len(b"first line\n"):])),
                          np.load(p("r1.npy")))))
# A name of 250 characters (with a suffix, a temporary name would pass
# NAME_MAX).
long_name = p("o" * 246 + ".npy")
rc, _ = attention_run("residual", [long_name])
print("long name rc", rc, "written", os.path.exists(long_name))
# A directory.
rc, msg = attention_run("residual", [p("adir.npy")])
print("directory rc", rc)
print(msg)
# No temporary file is left behind.
print("temporaries left", [n for n in os.listdir(work) + os.listdir(p("real"))
                           if n.startswith(".attn-") or ".tmp" in n])
