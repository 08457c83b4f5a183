#!/usr/bin/env python3
"""Does activation kurtosis predict an FP8 recipe's gap to BF16 here?

    bench/parity-kurtosis.py [RECORDS_DIR]   (default bench/results/train-parity/small)

FOG (arXiv 2505.20524) proposes the kurtosis of the tensors an FP8 recipe
quantizes as the early warning of FP8 divergence. fp8-train's records
(`--records`, bench/train-parity-study.sh) keep every quantized tensor's
kurtosis at the first step and at each validation step. For every FP8 run
(recipe, seed) this prints, from the records alone:
  - gap: its final validation loss against BF16's of the same seed;
  - the largest kurtosis over its quantized tensors at the first step, at
    the middle validation step and at the last step, and the median over
    tensors of log(kurtosis / 3) at the last step (3: a Gaussian's);
  - the growth of the largest kurtosis from the first step to the middle
    one (what could warn before the end).
Then Spearman's rank correlation of each with the gap over all FP8 runs,
with a two-sided p-value from the t approximation (n - 2 degrees of
freedom), and the same within each seed (same data order, different
recipes). Pure Python, no numpy.
"""
import glob
import json
import math
import os
import statistics
import sys

FP8_RECIPES = ("delayed", "history16", "megatron", "current", "row", "block",
               "mx")


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return result


def pearson(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def t_p_value(t, df):
    """Two-sided p of Student's t with integer df: 1 - P(|T| < t) by the
    finite series of Abramowitz & Stegun 26.7.3-4 (fp8-train's
    studentTwoSidedP)."""
    theta = math.atan(abs(t) / math.sqrt(df))
    c = math.cos(theta) ** 2
    term = series = 1.0
    if df % 2 == 0:
        for k in range(2, df - 1, 2):
            term *= (k - 1) / k * c
            series += term
        inside = math.sin(theta) * series
    else:
        for k in range(3, df - 1, 2):
            term *= (k - 1) / k * c
            series += term
        inside = 2 / math.pi * (theta if df == 1 else theta + math.sin(theta)
                                * math.cos(theta) * series)
    return min(1.0, max(0.0, 1 - inside))


def spearman(x, y):
    rho = pearson(ranks(x), ranks(y))
    n = len(x)
    if n < 4 or math.isnan(rho) or abs(rho) >= 1:
        return rho, float("nan")
    t = rho * math.sqrt((n - 2) / (1 - rho * rho))
    return rho, t_p_value(t, n - 2)


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", "train-parity",
        "small")
    records = {}
    for path in glob.glob(os.path.join(folder, "*.seed*.json")):
        with open(path) as f:
            record = json.load(f)
        records[(record["label"], record["seed"])] = record
    runs = []
    for (label, seed), record in sorted(records.items()):
        if label not in FP8_RECIPES or ("bf16", seed) not in records:
            continue
        base = records[("bf16", seed)]["final_val_loss"]
        gap = 100 * (record["final_val_loss"] / base - 1)
        by_step = {}
        for step, _, _, _, _, _, kurtosis in record["tensor_rows"]:
            if isinstance(kurtosis, (int, float)) and math.isfinite(kurtosis):
                by_step.setdefault(step, []).append(kurtosis)
        steps = sorted(by_step)
        if len(steps) < 3:
            continue
        first, middle, last = steps[0], steps[len(steps) // 2], steps[-1]
        runs.append({
            "recipe": label, "seed": seed, "gap": gap,
            "max_first": max(by_step[first]),
            "max_middle": max(by_step[middle]),
            "max_last": max(by_step[last]),
            "median_log_last": statistics.median(
                math.log(max(k, 1e-9) / 3) for k in by_step[last]),
            "growth": max(by_step[middle]) / max(by_step[first]),
        })
    if not runs:
        sys.exit("parity-kurtosis: no FP8 runs with a BF16 run of the same "
                 "seed in " + folder)
    print("%d FP8 runs (%s), kurtosis at steps first / middle / last" %
          (len(runs), folder))
    print("| recipe | seed | gap to bf16 | max kurt. first | middle | last | "
          "median log(k/3) last | growth first->middle |")
    print("|---|---|---|---|---|---|---|---|")
    for r in runs:
        print("| %s | %d | %+.2f%% | %.1f | %.1f | %.1f | %.2f | %.2fx |" % (
            r["recipe"], r["seed"], r["gap"], r["max_first"], r["max_middle"],
            r["max_last"], r["median_log_last"], r["growth"]))
    print()
    print("| predictor | Spearman rho with the gap (all runs) | p | "
          "rho within seeds (mean) |")
    print("|---|---|---|---|")
    seeds = sorted({r["seed"] for r in runs})
    # (max_first is the same tensor on every run: no predictor.)
    for key in ("max_middle", "max_last", "median_log_last",
                "growth"):
        rho, p = spearman([r[key] for r in runs], [r["gap"] for r in runs])
        within = []
        for seed in seeds:
            group = [r for r in runs if r["seed"] == seed]
            if len(group) >= 4:
                within.append(spearman([r[key] for r in group],
                                       [r["gap"] for r in group])[0])
        print("| %s | %+.2f | %.3f | %+.2f |" % (
            key, rho, p, statistics.fmean(within) if within else float("nan")))


if __name__ == "__main__":
    main()
