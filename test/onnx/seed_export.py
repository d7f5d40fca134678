# RUN: %python %s %t | FileCheck %s
#
# The seed's MultiHeadAttention (and CausalAttention) exported by
# torch.onnx.export with static shapes (opset 17: MatMul, Reshape, Transpose,
# Where with the triu mask, Pow, Div, Softmax, Add): imported, the attention
# block raised to one attn op, run with attention-run and compared with torch
# within 1e-5.

import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import seed_modules  # noqa: E402

RUN = os.environ.get("ATTENTION_RUN", os.path.join(HERE, "..", "..", "build", "bin", "attention-run"))


TRANSLATE = os.path.join(os.path.dirname(RUN), "attention-translate")
OPT = os.path.join(os.path.dirname(RUN), "attention-opt")


def raised_ir(path):
    """The attention core after import (raising) and the attn-level folds."""
    imported = subprocess.run([TRANSLATE, "--import-onnx", path], capture_output=True,
                              text=True, check=True)
    folded = subprocess.run([OPT, "--canonicalize", "--attn-fold-head-transposes",
                             "--attn-fold-mask"], input=imported.stdout,
                            capture_output=True, text=True, check=True).stdout
    core = [l.strip() for l in folded.splitlines() if "attn." in l]
    return core, folded.count("linalg.transpose"), imported.stderr


def check(name, module, x, work):
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(module, x, path, opset_version=17, input_names=["x"],
                      output_names=["y"])
    core, transposes, remarks = raised_ir(path)
    print("%s remark: %s" % (name, remarks.strip().split("remark: ")[-1]))
    print("%s core: %s" % (name, core[0].split(" : ")[0] if core else "none"))
    print("%s transposes left: %d" % (name, transposes))
    np.save(os.path.join(work, name + "_x.npy"), x.numpy())
    out = os.path.join(work, name + "_y.npy")
    proc = subprocess.run([RUN, path, "--input", "x=" + os.path.join(work, name + "_x.npy"),
                           "--output", out], capture_output=True, text=True)
    if proc.returncode:
        print("FAIL: %s: %s" % (name, proc.stderr))
        return False
    with torch.no_grad():
        want = module(x).numpy()
    err = float(np.abs(np.load(out) - want).max())
    ok = err <= 1e-5
    print("%s %s: max_abs_err=%.2e" % ("ok" if ok else "FAIL:", name, err))
    return ok


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(123)
    x = torch.randn(2, 6, 16)
    ok = True
    mha = seed_modules.MultiHeadAttention(16, 16, 6, 0.0, num_heads=4).eval()
    ok &= check("seed_mha", mha, x, work)
    mha_b = seed_modules.MultiHeadAttention(16, 16, 6, 0.0, num_heads=2, qkv_bias=True).eval()
    ok &= check("seed_mha_qkv_bias", mha_b, x, work)
    causal = seed_modules.CausalAttention(16, 8, 6, 0.0).eval()
    ok &= check("seed_causal", causal, x, work)
    print("seed_export: %s" % ("all OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# The static export's projections, head split (Reshape + Transpose), core
# (MatMul -> Where(triu, -inf) -> Div -> Softmax -> MatMul), head merge and
# out_proj are raised to one attn.multi_head_attention, causal, with no mask
# tensor and no transposes left; CausalAttention to one attn.causal_attention.
# CHECK: seed_mha remark: raised 18 ONNX nodes to attn.multi_head_attention: MatMul {{.*}}, Where {{.*}}, Div {{.*}}, Softmax {{.*}}, MatMul {{.*}}, Add '/out_proj/Add'
# CHECK: seed_mha core: %0 = attn.multi_head_attention %arg0 weights(%{{.*}}, %{{.*}}, %{{.*}}) out_proj(%{{.*}}, %{{.*}}) causal {num_heads = 4
# CHECK: seed_mha transposes left: 0
# CHECK: ok seed_mha: max_abs_err=
# CHECK: seed_mha_qkv_bias core: %0 = attn.multi_head_attention %arg0 weights({{.*}}) bias({{.*}}) out_proj({{.*}}) causal {num_heads = 2
# CHECK: seed_mha_qkv_bias transposes left: 0
# CHECK: ok seed_mha_qkv_bias: max_abs_err=
# CHECK: seed_causal remark: raised 9 ONNX nodes to attn.causal_attention
# CHECK: seed_causal core: %0 = attn.causal_attention %arg0 weights(
# CHECK: seed_causal transposes left: 0
# CHECK: ok seed_causal: max_abs_err=
# CHECK: seed_export: all OK
