#!/usr/bin/env python3
"""Which row features explain the calibration's held-out residuals?

Reads the output of `calibrate -f` (lines "F<TAB>...": each row's
cross-validated residual ln(measured / held-out estimate) and candidate
features) on stdin and prints, per candidate feature and row set:

* rho: Spearman's rank correlation of the feature with the residual;
* families: how many model families carry a value other than the
  feature's minimum (a feature one family carries is that family);
* the cross-validated figures (median absolute error, share within 25%,
  share under-estimated by more than 25%) after a one-feature correction:
  for each left-out family, residual = a + b * feature is fitted by median
  (least absolute deviation) regression on the other families and the
  held-out estimate is multiplied by exp(a + b * feature).  A feature that
  explains the spread improves these figures; one that only describes a
  family does not.

Also prints the best any constant factor on every held-out estimate can do
(the bound a single global reserve term meets).  docs/estimator.md section
7 gives the result and what each candidate stands for.

Usage: make calibrate CALIBRATE_FLAGS=-f | python3 tests/calibrate/residuals.py
"""
import math
import sys

TEXT = ("id", "family", "strategy", "adapter", "reading", "model_type")
# Shape facts a nominal catalog row lacks (-1 from calibrate): such rows
# are left out of the features that need them.
SHAPED = ("V", "h", "L", "I", "emb16_gib", "logits32_gib", "mlp_tr_gib",
          "dequant_gib", "linear_max_gib")
MULTIMODAL = ("lfm2_vl", "gemma4", "mistral3", "smolvlm", "voxtral")

FEATURES = [
    ("w_sh", "weights share of the tensors"),
    ("g_sh", "gradients share"),
    ("o_sh", "optimizer share"),
    ("act_sh", "activations share"),
    ("logit_sh", "logits share"),
    ("buf_sh", "buffers share"),
    ("trans_gib", "transient churn, GiB"),
    ("largest_tr_gib", "largest single transient, GiB"),
    ("logits32_gib", "fp32 logits T x V, GiB"),
    ("mlp_tr_gib", "MLP intermediate T x I, GiB"),
    ("dequant_gib", "dequantized largest linear, GiB"),
    ("emb16_gib", "16-bit embedding + head, GiB"),
    ("V", "vocabulary"),
    ("V_over_h", "vocabulary / hidden"),
    ("h", "hidden size"),
    ("L", "layers"),
    ("moe", "MoE"),
    ("log_params", "ln parameters"),
    ("cce", "Cut Cross Entropy"),
    ("liger", "Liger kernels"),
    ("q8", "8-bit base (LLM.int8)"),
    ("opt8bit", "8-bit optimizer"),
    ("paged", "paged optimizer"),
    ("adapter_fp32", "fp32 adapters"),
    ("packed", "sample packing"),
    ("device", "read from the device"),
    ("v4", "Transformers 4.x MoE stack"),
    ("v5key", "v5-only key in the config"),
    ("multimodal", "multimodal model"),
    ("capacity", "GPU capacity, GiB"),
    ("log_head", "ln headroom"),
    ("full", "full fine-tune"),
    ("qlora", "QLoRA"),
]


def load(lines):
    rows, head = [], None
    for line in lines:
        if not line.startswith("F\t"):
            continue
        f = line.rstrip("\n").split("\t")[1:]
        if head is None:
            head = f
            continue
        r = dict(zip(head, f))
        for k in head:
            if k not in TEXT:
                r[k] = float(r[k])
        if r["V"] < 0:
            for k in SHAPED:
                r[k] = math.nan
        r["E"] = max(r["E"], 0)
        r["V_over_h"] = r["V"] / r["h"] if r["h"] > 0 else math.nan
        r["log_params"] = math.log(max(r["params_b"], 0.01))
        r["log_head"] = math.log(max(r["capacity"] - r["alloc"], 0.5))
        r["largest_tr_gib"] = max(r["logits32_gib"] * (1 - r["cce"]),
                                  r["mlp_tr_gib"], r["dequant_gib"],
                                  r["emb16_gib"])
        r["device"] = float(r["reading"] == "device")
        r["full"] = float(r["adapter"] == "full")
        r["qlora"] = float(r["adapter"] == "qlora")
        mt = r["model_type"]
        r["multimodal"] = float("/" in mt or mt in MULTIMODAL or
                                "internvl" in r["id"])
        rows.append(r)
    return rows


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    out, i = [0.0] * len(v), 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for t in range(i, j + 1):
            out[order[t]] = (i + j) / 2
        i = j + 1
    return out


def spearman(x, y):
    rx, ry = ranks(x), ranks(y)
    n = len(x)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return sxy / (sx * sy) if sx > 0 and sy > 0 else math.nan


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def lad(x, y):
    """Median regression y = a + b x: b over the pairwise slopes (at most
    200 of them, evenly spaced) and 0, a the median residual."""
    slopes = sorted({(y[j] - y[i]) / (x[j] - x[i])
                     for i in range(len(x)) for j in range(i + 1, len(x))
                     if x[j] != x[i]})
    if len(slopes) > 200:
        slopes = [slopes[k * (len(slopes) - 1) // 199] for k in range(200)]
    best = None
    for b in slopes + [0.0]:
        a = median([yy - b * xx for xx, yy in zip(x, y)])
        loss = sum(abs(yy - a - b * xx) for xx, yy in zip(x, y))
        if best is None or loss < best[0]:
            best = (loss, a, b)
    return best[1], best[2]


def figures(est, meas):
    err = [(e - m) / m for e, m in zip(est, meas)]
    return (100 * median([abs(e) for e in err]),
            100 * sum(abs(e) <= 0.25 for e in err) / len(err),
            100 * sum(e < -0.25 for e in err) / len(err))


def fmt(f):
    return "%.1f / %.1f / %.1f" % f


def screen(rows, label):
    base = figures([r["heldout"] for r in rows], [r["measured"] for r in rows])
    print("\n%s: %d rows, held-out %s (median / within 25%% / under 25%%)\n"
          % (label, len(rows), fmt(base)))
    print("| candidate | n | rho | families | with a one-feature correction |"
          " without (same rows) |")
    print("| --- | --: | --: | --: | --- | --- |")
    for key, name in FEATURES:
        sub = [r for r in rows if not math.isnan(r[key])]
        x = [r[key] for r in sub]
        if len(sub) < 5 or max(x) == min(x):
            continue
        y = [r["resid"] for r in sub]
        fams = {r["family"] for r in sub if r[key] != min(x)}
        est = []
        for r in sub:
            train = [s for s in sub if s["family"] != r["family"]]
            a, b = lad([s[key] for s in train], [s["resid"] for s in train])
            est.append(r["heldout"] * math.exp(a + b * r[key]))
        print("| %s | %d | %+.2f | %d | %s | %s |" % (
            name, len(sub), spearman(x, y), len(fams),
            fmt(figures(est, [r["measured"] for r in sub])),
            fmt(figures([r["heldout"] for r in sub],
                        [r["measured"] for r in sub]))))


def bound(rows, label):
    best = min((figures([r["heldout"] * math.exp(c / 200) for r in rows],
                        [r["measured"] for r in rows]), c / 200)
               for c in range(-100, 101))
    print("%s: the best constant factor (x%.3f) gives %s" %
          (label, math.exp(best[1]), fmt(best[0])))


def main():
    rows = load(sys.stdin)
    if not rows:
        sys.exit("residuals.py: no 'F' lines on stdin (run calibrate -f)")
    single = [r for r in rows
              if r["strategy"] == "single" and r["reading"] == "counter"]
    screen(rows, "All rows")
    screen(single, "Single GPU, read from PyTorch's reserved counter")
    print()
    bound(rows, "All rows")
    bound(single, "Single GPU, counter")
    bound([r for r in single if r["adapter"] == "qlora"],
          "Single GPU QLoRA, counter")


if __name__ == "__main__":
    main()
