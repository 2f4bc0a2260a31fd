#!/usr/bin/env python3
"""Renders `spplan validate engine --json` output as the engine README's Markdown tables.

Usage: scripts/engine-table.py REPORT.json

Prints the per-case table (peak memory, step time, host memory), the summary line, the rates the
costmodel priced with, and each kernel class's predicted / timed-inside-the-run ratio per case, so
a table in engine/README.md is regenerated from a kept report, never copied by hand.
"""
import json
import sys

CLASSES = ("gemm", "attention_fwd", "attention_bwd", "elementwise", "loss")
MIB = 1024.0 * 1024.0


def pct(predicted, measured):
    return 100.0 * (predicted - measured) / measured


def case_rows(report):
    yield "| case | measured MiB | predicted MiB | delta % | measured s | predicted s | delta % | host delta % |"
    yield "|---|---|---|---|---|---|---|---|"
    for r in report["rows"]:
        host = "-"
        if r.get("measured_host_memory_bytes"):
            host = "%+.1f" % pct(r["predicted_host_memory_bytes"], r["measured_host_memory_bytes"])
        yield "| %s | %.1f | %.1f | %+.1f | %.3f | %.3f | %+.1f | %s |" % (
            r["case"].removeprefix("tiny-llama "),
            r["measured_peak_memory_bytes"] / MIB,
            r["predicted_peak_memory_bytes"] / MIB,
            r["mem_error_pct"],
            r["measured_step_time_s"],
            r["predicted_step_time_s"],
            r["time_error_pct"],
            host,
        )


def class_rows(report):
    yield "| case | " + " | ".join(CLASSES) + " |"
    yield "|---" * (len(CLASSES) + 1) + "|"
    for r in report["rows"]:
        measured = r.get("measured_kernel_classes_s", {})
        predicted = r.get("predicted_kernel_classes_s", {})
        cells = []
        for k in CLASSES:
            cells.append("%.2f" % (predicted[k] / measured[k]) if measured.get(k) and k in predicted else "-")
        yield "| %s | %s |" % (r["case"].removeprefix("tiny-llama "), " | ".join(cells))


def summary(report):
    rows = report["rows"]
    fp32 = [abs(r["time_error_pct"]) for r in rows if "bf16" not in r["case"]]
    lines = [
        "device: %s; machine: %s; %d cases, %d failed" % (report["device"], report["machine"], report["cases"], report["failed"]),
        "memory: mean %.1f %%, max %.1f %%; host memory max %.1f %%"
        % (report["mean_mem_error_pct"], report["max_mem_error_pct"], report["max_host_mem_error_pct"]),
        "time: mean %.1f %%, max %.1f %% (the %d fp32 cases: mean %.1f %%, max %.1f %%)"
        % (report["mean_time_error_pct"], report["max_time_error_pct"], len(fp32), sum(fp32) / max(len(fp32), 1), max(fp32, default=0)),
        "kernel classes, mean delta %: "
        + ", ".join("%s %+.1f" % (k, v) for k, v in sorted(report.get("kernel_class_mean_error_pct", {}).items())),
        "priced with: " + ", ".join("%s %.4g" % (k, v) for k, v in sorted(report.get("priced_with", {}).items())),
    ]
    return lines


def ring_pair_rows(report):
    """The ring against Ulysses at equal degree (measured and predicted), where the report has such pairs."""
    pairs = report.get("ring_vs_ulysses", [])
    if not pairs:
        return []
    rows = ["", "Ring against Ulysses at equal degree (step time ratio):", "",
            "| ring | Ulysses | measured | predicted | delta % |", "|---|---|---|---|---|"]
    for p in pairs:
        rows.append("| %s | %s | %.3f | %.3f | %+.1f |" % (p["ring"].replace("tiny-llama ", ""),
                                                          p["ulysses"].replace("tiny-llama ", ""),
                                                          p["measured_ratio"], p["predicted_ratio"], p["error_pct"]))
    return rows


def main(argv):
    if len(argv) != 2:
        print("usage: scripts/engine-table.py REPORT.json", file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            report = json.load(f)
        lines = [*case_rows(report), "", "Predicted / timed inside the run, per kernel class:", "",
                 *class_rows(report), *ring_pair_rows(report), "", *summary(report)]
    except (OSError, ValueError) as e:
        print("engine-table: %s: %s (allowed: a `spplan validate engine --json` report)" % (argv[1], e), file=sys.stderr)
        return 2
    except (KeyError, TypeError) as e:
        print("engine-table: %s: key %s missing or of the wrong type (allowed: a `spplan validate engine --json` report)"
              % (argv[1], e), file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
