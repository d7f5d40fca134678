# RUN: %python %S/vectorized_sdpa.py %t band | FileCheck %s
#
# The sliding-window, softcap and dropout cases of vectorized_sdpa.py (its
# `band` half; the file itself runs the rest), a separate lit test so that
# the two halves of the longest execution test run in parallel. Each case
# prints one line per variant; any failure prints FAIL.
#
# CHECK-NOT: FAIL
# CHECK: window causal L=70 T=300 d=64 default: max_abs_err={{.*}} OK
# CHECK-NOT: FAIL
# CHECK: dropout 0.3 causal GQA 6/2 B=2 T=150 d=64 default: max_abs_err={{.*}} OK
# CHECK-NOT: FAIL
# CHECK: bf16 window L=90 softcap 8 causal T=260 d=64 default: max_abs_err={{.*}} OK
# CHECK-NOT: FAIL
# CHECK: vectorized_sdpa: all {{[0-9]+}} checks OK
