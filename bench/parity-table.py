#!/usr/bin/env python3
"""The tables of docs/training-parity.md, from a study's report.

    bench/parity-table.py STUDY_JSON [STUDY_JSON ...]

STUDY_JSON is what bench/train-parity-study.sh writes (fp8-train --seeds=N
--json: the table, then one JSON object). For each report this prints the
Markdown table of the recipes (final validation loss, the paired gap to
BF16 with its 95% interval, the per-seed gaps, the verdict) and the pairs
of recipes told apart (Holm over all pairs); with several reports (one per
model size), then the recipes' verdicts side by side, and the gap to BF16
over all the sizes together: the mean of the sizes' mean gaps (each size
weighs the same), its standard error from each size's seeds, sqrt(sum
s_k^2 / n_k) / K, and Student's t with Welch-Satterthwaite's degrees of
freedom, rounded down (conservative). The per-size numbers are the
report's; only that last column is computed here.
"""
import json
import math
import statistics
import sys

# t(0.975, df), df = 1..30, the textbook table (fp8-train's studentT975).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
        2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052,
        2.048, 2.045, 2.042]


def read_report(path):
    with open(path) as f:
        text = f.read()
    if not text.lstrip().startswith("{"):
        text = text[text.rindex("\n{") + 1:]
    return json.loads(text)


def percent(fraction):
    return "%+.2f%%" % (100 * fraction)


def interval(mean, ci, digits=4, as_percent=False):
    if as_percent:
        if ci is None:
            return percent(mean)
        return "%s ± %.2f%%" % (percent(mean), 50 * (ci[1] - ci[0]))
    if ci is None:
        return "%.*f" % (digits, mean)
    return "%.*f ± %.*f" % (digits, mean, digits, (ci[1] - ci[0]) / 2)


def recipe_table(report):
    rows = ["| recipe | final val (mean ± 95%) | gap to bf16, paired | "
            "per-seed gaps | verdict |",
            "|---|---|---|---|---|"]
    for run in report["runs"]:
        seeds = run["per_seed"]
        if run["verdict"] == "reference":
            gap, per_seed, verdict = "reference", "", ""
        else:
            gap = interval(run["val_gap_to_bf16_mean"],
                           run.get("val_gap_to_bf16_ci"), as_percent=True)
            per_seed = ", ".join(
                "%+.2f" % (100 * s["val_gap_to_bf16"])
                if s.get("val_gap_to_bf16") is not None else "diverged"
                for s in seeds) + "%"
            verdict = run["verdict"]
        rows.append("| %s | %s | %s | %s | %s |" % (
            run["recipe"],
            interval(run["final_val_loss_mean"], run.get("final_val_loss_ci")),
            gap, per_seed, verdict))
    return "\n".join(rows)


def comparisons(report, shown=5):
    pairs = report.get("comparisons", [])
    if not pairs:
        return "(one seed: no comparisons)"
    apart = [c for c in pairs if c["told_apart"]]
    closest = sorted((c for c in pairs if c["p"] is not None),
                     key=lambda c: c["p"])[:shown]
    lines = ["Told apart at 5%% (Holm over %d pairs): %s." % (
        len(pairs), ", ".join("%s vs %s" % (c["first"], c["second"])
                              for c in apart) or "none")]
    lines.append("")
    lines.append("| pair | paired difference | p | Holm's threshold | told apart |")
    lines.append("|---|---|---|---|---|")
    for rank, c in enumerate(closest):
        lines.append("| %s vs %s | %s | %.4f | %.4f | %s |" % (
            c["first"], c["second"],
            interval(c["val_difference_mean"], c["val_difference_ci"],
                     as_percent=True),
            c["p"], 0.05 / (len(pairs) - rank),
            "yes" if c["told_apart"] else "no"))
    return "\n".join(lines)


def finite_gaps(run):
    return [s["val_gap_to_bf16"] for s in run["per_seed"]
            if s.get("val_gap_to_bf16") is not None and
            math.isfinite(s["val_gap_to_bf16"])]


def over_sizes(samples):
    """The equally weighted mean of the samples' means and its 95% interval
    (Welch-Satterthwaite degrees of freedom, rounded down)."""
    if any(len(x) < 2 for x in samples):
        return None
    k = len(samples)
    mean = sum(statistics.mean(x) for x in samples) / k
    parts = [statistics.variance(x) / len(x) for x in samples]
    se = math.sqrt(sum(parts)) / k
    if se == 0:
        return mean, 0.0, None
    df = sum(parts) ** 2 / sum(v * v / (len(x) - 1)
                               for v, x in zip(parts, samples))
    df = max(1, int(df))
    t = T975[df - 1] if df <= 30 else 1.96
    return mean, t * se, df


def side_by_side(names, reports):
    header = "| recipe | " + " | ".join(names) + " | all sizes |"
    rows = [header, "|---|" + "---|" * (len(names) + 1)]
    for run in reports[0]["runs"]:
        cells = []
        for report in reports:
            match = [r for r in report["runs"] if r["recipe"] == run["recipe"]]
            if not match or match[0]["verdict"] == "reference":
                cells.append("reference" if match else "-")
                continue
            r = match[0]
            cells.append("%s (%s)" % (
                interval(r["val_gap_to_bf16_mean"], r.get("val_gap_to_bf16_ci"),
                         as_percent=True), r["verdict"]))
        both = None
        matches = [[r for r in report["runs"] if r["recipe"] == run["recipe"]]
                   for report in reports]
        if all(matches) and matches[0][0]["verdict"] != "reference":
            both = over_sizes([finite_gaps(m[0]) for m in matches])
        cells.append("-" if both is None else "%s ± %.2f%% (df %s)" % (
            percent(both[0]), 100 * both[1], both[2]))
        rows.append("| %s | %s |" % (run["recipe"], " | ".join(cells)))
    return "\n".join(rows)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    reports = [read_report(path) for path in sys.argv[1:]]
    for path, report in zip(sys.argv[1:], reports):
        print("## %s (%d seeds)\n" % (path, report["seeds"]))
        print(recipe_table(report))
        print()
        print(comparisons(report))
        print()
    if len(reports) > 1:
        print("## Side by side\n")
        print(side_by_side(sys.argv[1:], reports))


if __name__ == "__main__":
    main()
