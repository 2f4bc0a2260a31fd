#!/usr/bin/env python3
"""Writes longalpaca-12k.qwen2.5.lengths.csv: the document lengths of LongAlpaca-12k
(Yukang/LongAlpaca-12k) in tokens of Qwen's tokenizer and chat template, built from the
statistics its publishers and ms-swift state, since the dataset itself is not here to count.

The facts (the CSV's header repeats them with their sources):
  all rows     11998 rows, mean 9619.0, sd 8295.8, min 36, max 78925
               (modelscope/ms-swift@b9627bd2a326d33a86ea6f18defdf6f2ec33a41a
               docs/source_en/LLM/Supported-models-datasets.md, written by
               scripts/utils/run_dataset_info.py @939a22139c6e: every row encoded with
               Qwen-7B-Chat's tokenizer and chat template, no max_length)
  rows 0-4999  mean 9941.8, sd 3417.1, min 4695, max 25826
               (ms-swift@c2a489577c51 docs/source_en/Instruction/Supported-models-and-datasets.md,
               written by scripts/utils/run_dataset_info.py @b40f31df7c09: the first 5000 rows
               encoded with Qwen2-7B-Instruct's tokenizer and template)
  short QA     3k rows sampled from Stanford Alpaca (dvlab-research/LongLoRA README.md
               "LongAlpaca Data"); Alpaca's lengths under the same template, read from
               yahma/alpaca-cleaned: mean 170.1, sd 122.9, min 29, max 1028 (ms-swift@c2a489577c51,
               the same table)
What is assumed: Qwen-7B-Chat, Qwen2 and Qwen2.5 share one byte-level BPE vocabulary, so the two
tables count alike; the short rows lie past row 4999 (the first 5000 rows' minimum is 4695);
the remaining rows' lengths follow from the totals by subtraction; and each part's lengths are a
lognormal truncated to the part's stated bounds, its two parameters fitted to the part's mean and
sd. Each part is then written as its n quantiles (i + 0.5) / n: no random draw.
"""
import math
import statistics
import sys
from pathlib import Path

N = statistics.NormalDist()

ALL = dict(n=11998, mean=9619.0, sd=8295.8, lo=36, hi=78925)
FIRST = dict(n=5000, mean=9941.8, sd=3417.1, lo=4695, hi=25826)
SHORT = dict(n=3000, mean=170.1, sd=122.9, lo=29, hi=1028)


def truncated_moments(mu, sigma, lo, hi):
    """Mean and sd of a lognormal(mu, sigma) truncated to [lo, hi]."""
    a, b = (math.log(lo) - mu) / sigma, (math.log(hi) - mu) / sigma
    z = N.cdf(b) - N.cdf(a)

    def raw(k):
        return math.exp(k * mu + k * k * sigma * sigma / 2) * (N.cdf(b - k * sigma) - N.cdf(a - k * sigma)) / z

    m1, m2 = raw(1), raw(2)
    return m1, math.sqrt(max(m2 - m1 * m1, 0.0))


def fit(part):
    """(mu, sigma) whose truncated moments are the part's mean and sd (Newton on log moments)."""
    cv2 = (part["sd"] / part["mean"]) ** 2
    sigma = math.sqrt(math.log1p(cv2))
    mu = math.log(part["mean"]) - sigma * sigma / 2
    target = (math.log(part["mean"]), math.log(part["sd"]))
    for _ in range(100):
        def f(mu_, sigma_):
            m, s = truncated_moments(mu_, sigma_, part["lo"], part["hi"])
            return (math.log(m) - target[0], math.log(s) - target[1])

        r = f(mu, sigma)
        if max(abs(r[0]), abs(r[1])) < 1e-12:
            break
        h = 1e-6
        a = f(mu + h, sigma)
        b = f(mu, sigma + h)
        j = ((a[0] - r[0]) / h, (b[0] - r[0]) / h, (a[1] - r[1]) / h, (b[1] - r[1]) / h)
        det = j[0] * j[3] - j[1] * j[2]
        dmu = (r[0] * j[3] - r[1] * j[1]) / det
        dsigma = (j[0] * r[1] - j[2] * r[0]) / det
        mu, sigma = mu - dmu, max(sigma - dsigma, 1e-3)
    return mu, sigma


def quantile_lengths(part, mu, sigma):
    a, b = (math.log(part["lo"]) - mu) / sigma, (math.log(part["hi"]) - mu) / sigma
    pa, pb = N.cdf(a), N.cdf(b)
    n = part["n"]
    out = []
    for i in range(n):
        u = pa + (i + 0.5) / n * (pb - pa)
        x = math.exp(mu + sigma * N.inv_cdf(u))
        out.append(min(max(round(x), part["lo"]), part["hi"]))
    return out


def rest_part():
    """The long rows past row 4999: the whole set less the first 5000 and the short rows."""
    def sums(p):
        return p["n"] * p["mean"], p["n"] * (p["sd"] ** 2 + p["mean"] ** 2)

    s_all, q_all = sums(ALL)
    s_first, q_first = sums(FIRST)
    s_short, q_short = sums(SHORT)
    n = ALL["n"] - FIRST["n"] - SHORT["n"]
    mean = (s_all - s_first - s_short) / n
    sd = math.sqrt((q_all - q_first - q_short) / n - mean * mean)
    # Its minimum is not stated (the whole set's 36 is a short row's): taken as the first 5000
    # long rows' 4695, the shortest long row a table shows.
    return dict(n=n, mean=mean, sd=sd, lo=FIRST["lo"], hi=ALL["hi"])


def stats(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def main(out_path):
    rest = rest_part()
    parts = [("rows 0-4999", FIRST), ("long rows past 4999", rest), ("short QA", SHORT)]
    lengths, lines = [], []
    for name, part in parts:
        mu, sigma = fit(part)
        xs = quantile_lengths(part, mu, sigma)
        m, s = stats(xs)
        lines.append(f"#   {name}: {part['n']} rows, stated or derived mean {part['mean']:.1f} sd {part['sd']:.1f} "
                     f"in [{part['lo']}, {part['hi']}]; lognormal mu {mu:.4f} sigma {sigma:.4f}; "
                     f"written mean {m:.1f} sd {s:.1f}")
        lengths += xs
    m, s = stats(lengths)
    counts = {}
    for x in lengths:
        counts[x] = counts.get(x, 0) + 1
    over = sum(1 for x in lengths if x > 65536)
    header = [
        "# LongAlpaca-12k (huggingface.co/datasets/Yukang/LongAlpaca-12k), document lengths in tokens of",
        "# Qwen's tokenizer and chat template (one user turn, one answer): a distribution BUILT FROM STATED",
        "# STATISTICS, not counted from the data (the data is not here). Written by longalpaca-12k.py.",
        "# Facts: 11998 rows, mean 9619.0, sd 8295.8, min 36, max 78925, every row under Qwen-7B-Chat's",
        "#   template (modelscope/ms-swift@b9627bd2a326 docs/source_en/LLM/Supported-models-datasets.md, by",
        "#   scripts/utils/run_dataset_info.py @939a22139c6e, no max_length); the first 5000 rows: mean",
        "#   9941.8, sd 3417.1, min 4695, max 25826 under Qwen2-7B-Instruct's (ms-swift@c2a489577c51",
        "#   docs/source_en/Instruction/Supported-models-and-datasets.md, by run_dataset_info.py @b40f31df7c09);",
        "#   9k long QA and 3k short QA sampled from Stanford Alpaca (dvlab-research/LongLoRA README.md,",
        "#   'LongAlpaca Data'); Alpaca's lengths read from yahma/alpaca-cleaned in the same ms-swift table:",
        "#   mean 170.1, sd 122.9, min 29, max 1028.",
        "# Assumed: Qwen-7B-Chat, Qwen2 and Qwen2.5 count alike (one BPE vocabulary; Qwen2.5's default",
        "#   system prompt, about 10 tokens longer, is left out); the 3000 short rows lie past row 4999;",
        "#   the other long rows' mean and sd follow from the totals; each part a lognormal truncated to",
        "#   its bounds, fitted to its mean and sd, written as its n quantiles (i + 0.5) / n.",
        *lines,
        f"# Written: {len(lengths)} documents, mean {m:.1f} sd {s:.1f} (stated 9619.0, 8295.8), "
        f"{over} longer than 65536.",
        "length,count",
    ]
    body = [f"{x},{counts[x]}" for x in sorted(counts)]
    Path(out_path).write_text("\n".join(header + body) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).with_name("longalpaca-12k.qwen2.5.lengths.csv")))
