#!/usr/bin/env python3
"""The tables of docs/training-parity.md, from a study's report.

    bench/parity-table.py STUDY_JSON [STUDY_JSON ...]

STUDY_JSON is what bench/train-parity-study.sh writes (fp8-train --seeds=N
--json: the table, then one JSON object). For each report this prints the
Markdown table of the recipes (final validation loss, the paired gap to
BF16 with its 95% interval, the per-seed gaps, the verdict) and the pairs
of recipes told apart (Holm over all pairs); with several reports (one per
model size), then the recipes' verdicts side by side. Nothing is computed
here that fp8-train did not report, except rounding: the numbers in the
docs are the report's.
"""
import json
import sys


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


def side_by_side(names, reports):
    header = "| recipe | " + " | ".join(names) + " |"
    rows = [header, "|---|" + "---|" * len(names)]
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
