# RUN: %python %S/vectorized_sdpa.py %t band | FileCheck %S/vectorized_sdpa.py
#
# The sliding-window, softcap and dropout cases of vectorized_sdpa.py (its
# `band` half; the file itself runs the rest), a separate lit test so that
# the two halves of the longest execution test run in parallel.
