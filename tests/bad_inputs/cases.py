"""The cases of the bad-input catalogue, as data (see ``catalogue.py`` for the fields).

Classes: ``file-tidy``, ``file-wide``, ``file-trec_eval``, ``file-run``, ``file-lines``,
``file-special`` (FIFO, /dev/zero, folders), ``names`` (hostile system names),
``opt-fit``, ``opt-risk``, ``opt-glm``, ``opt-reliability``, ``opt-inspect`` (hostile
options), ``output`` (output paths), ``meta-config`` (YAML configs and ``meta``'s
options), ``saved-fit``, ``degenerate`` (data that make an answer meaningless), ``api``,
``inputs`` (objects in memory: ranx, ir_measures, PyTerrier, DataFrames, qrels),
``signal``; round 3 (issue 32): ``side-files``, ``tool-exports``, ``notes``,
``float-noise``, ``opt-early``; after main's LLM log readers and ``rank``: ``llm-logs``,
``opt-rank``; ``replicates`` (issue 30). Today's failures are listed in
:data:`FAILS_TODAY` at the end.
"""

from __future__ import annotations

import io
import json
import math
import re
import signal
from dataclasses import replace

import numpy as np
from bad_inputs.catalogue import (
    FIFO,
    META_OK,
    META_SCORES,
    SYSTEMS,
    Case,
    Link,
    Sparse,
    _num,
    both,
    challengers_are,
    exists,
    file_has,
    gz,
    inspect_means,
    json_systems,
    junk,
    lines_file,
    means_of,
    qrels,
    read_csv_rows,
    run,
    scores,
    stdout_has,
    tidy,
    topics,
    trec_eval,
    wide,
)

import bayes_ir
from bayes_ir.errors import (
    BayesIRError,
    InsufficientDataError,
    MeasureError,
    OptionError,
    RoleError,
    ScoreTableError,
    UnknownSystemError,
)

CASES: list[Case] = []
M = scores()
T = {"t.csv": tidy()}
TA = "{d}/t.csv"
OUT = ("-o", "{o}/out.csv")
MEANS = means_of(SYSTEMS, M)


def add(**fields) -> None:
    # A subprocess starts Python and PyMC (several seconds) and may run to its timeout.
    fields.setdefault("slow", fields.get("subprocess", False))
    if fields.get("kind") is None:  # a hostile option set, or a hostile file
        fields["kind"] = "cli" if fields["cls"].startswith(("opt-", "output")) else "file"
    CASES.append(Case(**fields))


def option_words(match: str) -> str:
    """Accept an option named as typed (``--top-m``) or as the keyword (``top_m``)."""
    return re.sub(r"(?<=\w)-(?=\w)", "[-_]", match)


def err(id, cls, argv, match, files=None, kind=None, **kw) -> None:
    add(
        id=id,
        cls=cls,
        kind=kind,
        expect="error",
        argv=tuple(argv),
        match=match,
        files=T if files is None else files,
        **kw,
    )


def ok(id, cls, argv, check=None, files=None, kind=None, **kw) -> None:
    add(
        id=id,
        cls=cls,
        kind=kind,
        expect="ok",
        argv=tuple(argv),
        check=check,
        files=T if files is None else files,
        **kw,
    )


def warn(id, cls, argv, match, files=None, kind=None, **kw) -> None:
    add(
        id=id,
        cls=cls,
        kind=kind,
        expect="warning",
        argv=tuple(argv),
        match=match,
        files=T if files is None else files,
        **kw,
    )


def with_cell(text: str, line: int, value: str) -> str:
    """Replace the score (last field) of 1-based ``line`` of a CSV text."""
    rows = text.splitlines(keepends=True)
    head, _, _ = rows[line - 1].rstrip("\r\n").rpartition(",")
    rows[line - 1] = f"{head},{value}\n"
    return "".join(rows)


INSPECT = ("inspect", TA, *OUT)

# ============================================================================ file-tidy
ok("tidy-valid", "file-tidy", INSPECT, inspect_means(MEANS))
err("tidy-empty", "file-tidy", ("inspect", TA), r"t\.csv.*empty", {"t.csv": ""})
for slug, gap in (("copies", 0.0), ("copy-plus-constant", 0.05)):  # no residual SD: no posterior
    err(
        f"tidy-two-runs-{slug}",
        "file-tidy",
        ("fit", TA, "-c", "a", "-C", "b"),
        r"t\.csv: every score is exactly a topic effect plus a system effect",
        {"t.csv": "topic,system,score\n" + "".join(
            f"q{t},a,{0.1 + 0.03 * t}\nq{t},b,{0.1 + 0.03 * t + gap}\n" for t in range(12)
        )},
    )  # fmt: skip
err(
    "tidy-header-only",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv",
    {"t.csv": "measure,system,topic,score\n"},
)
err("tidy-binary-junk", "file-tidy", ("inspect", TA), r"t\.csv", {"t.csv": junk()})
err(
    "tidy-binary-junk-forced",
    "file-tidy",
    ("inspect", "-f", "tidy", TA),
    r"t\.csv",
    {"t.csv": junk(seed=1)},
)
err(
    "tidy-nul-bytes",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv",
    {"t.csv": tidy().encode().replace(b"0.2", b"\x00\x00", 3)},
)
for spelling in ("nan", "NaN", "inf", "-inf", "Infinity"):
    err(
        f"tidy-score-{spelling}",
        "file-tidy",
        ("inspect", TA),
        r"t\.csv:4\b",
        {"t.csv": with_cell(tidy(), 4, spelling)},
    )
err(
    "tidy-score-text",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:3\b",
    {"t.csv": with_cell(tidy(), 3, "oops")},
)
err(
    "tidy-score-blank",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:5\b",
    {"t.csv": with_cell(tidy(), 5, "")},
)
err(
    "tidy-score-decimal-comma",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:2\b",
    {"t.csv": tidy(sep="\t").replace("0.2", "0,2", 1).replace("\t", ",", 0)},
)
err(
    "tidy-duplicate-row",
    "file-tidy",
    ("inspect", TA),
    r"base.*401|401.*base",
    {"t.csv": tidy() + "AP,base,401,0.2\n"},
)
err(
    "tidy-duplicate-conflicting",
    "file-tidy",
    ("inspect", TA),
    r"base.*401|401.*base",
    {"t.csv": tidy() + "AP,base,401,0.9\n"},
)
err(
    "tidy-missing-score-column",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv.*score",
    {"t.csv": "system,topic,result\na,1,0.5\nb,1,0.4\n"},
)
err(
    "tidy-ragged-row",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:3\b",
    {"t.csv": "system,topic,score\na,1,0.5\na,2,0.4,7,8\nb,1,0.3\nb,2,0.2\n"},
)
for spelling, bad in (
    ("AP", "1.5"),
    ("AP", "-0.1"),
    ("P@10", "3"),
    ("nDCG@10", "1.2"),
    ("P_10", "3"),
    ("ndcg_cut_10", "2"),
    ("map", "1.2"),
    ("recip_rank", "-1"),
    ("P.10", "3"),
    ("Recall_100", "4"),
):
    slug = spelling.lower().replace("@", "at").replace(".", "dot")
    err(
        f"tidy-range-{slug}-{bad}",
        "file-tidy",
        ("inspect", TA),
        r"t\.csv.*(range|outside|\[0, ?1\])",
        {"t.csv": with_cell(tidy(measure=spelling), 6, bad)},
    )
ok(
    "tidy-no-range-check-huge",
    "file-tidy",
    ("inspect", "--no-range-check", TA, *OUT),
    inspect_means(means_of(SYSTEMS, M * 1e300)),
    {"t.csv": tidy(values=M * 1e300)},
)
ok("tidy-bom", "file-tidy", INSPECT, inspect_means(MEANS), {"t.csv": "\ufeff" + tidy()})
ok("tidy-crlf", "file-tidy", INSPECT, inspect_means(MEANS), {"t.csv": tidy(eol="\r\n")})
ok(
    "tidy-tsv",
    "file-tidy",
    ("inspect", "{d}/t.tsv", *OUT),
    inspect_means(MEANS),
    {"t.tsv": tidy(sep="\t")},
)
ok(
    "tidy-gzip",
    "file-tidy",
    ("inspect", "{d}/t.csv.gz", *OUT),
    inspect_means(MEANS),
    {"t.csv.gz": gz(tidy())},
)
err(
    "tidy-gzip-truncated",
    "file-tidy",
    ("inspect", "{d}/t.csv.gz"),
    r"t\.csv\.gz",
    {"t.csv.gz": gz(tidy())[:60]},
)
err(
    "tidy-latin1",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv.*(utf-?8|encod|decod)",
    {"t.csv": tidy(systems=("café", "base")).encode("latin-1")},
)
err(
    "tidy-mixed-encodings",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:\d+.*(utf-?8|encod|decod)",
    {
        "t.csv": tidy(systems=("café",)).encode()
        + tidy(systems=("thé",)).split("\n", 1)[1].encode("latin-1")
    },
)
err(
    "tidy-utf16",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv.*(utf|encod|decod)",
    {"t.csv": tidy().encode("utf-16")},
)
err(
    "tidy-missing-cell",
    "file-tidy",
    ("fit", TA, "-c", "base", "-C", "chal_*", "--draws", "200"),
    r"chal_a.*401|401.*chal_a|missing",
    {"t.csv": tidy().replace("AP,chal_a,401,", "AP,chal_a,999,")},
)
err(
    "tidy-several-measures-no-choice",
    "file-tidy",
    ("fit", TA, "-c", "base", "-C", "chal_*"),
    r"--measure",
    {"t.csv": tidy() + tidy(measure="P@10").split("\n", 1)[1]},
)
err(
    "tidy-system-empty-name",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:\d+.*system",
    {"t.csv": tidy() + "AP,,401,0.3\n"},
)
err(
    "tidy-topic-empty",
    "file-tidy",
    ("inspect", TA),
    r"t\.csv:\d+.*topic",
    {"t.csv": tidy() + "AP,base,,0.3\n"},
)
err("tidy-only-newlines", "file-tidy", ("inspect", TA), r"t\.csv", {"t.csv": "\n\n\n"})

# ============================================================================ file-wide
W3 = ("base", "chal_a", "chal_b")
MW = scores(n_systems=3)
ok(
    "wide-valid",
    "file-wide",
    ("inspect", "{d}/w.csv", *OUT),
    inspect_means(means_of(W3, MW)),
    {"w.csv": wide(W3, MW)},
)
ok(
    "wide-no-topic-column",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv", *OUT),
    inspect_means(means_of(W3, MW)),
    {"w.csv": wide(W3, MW, topic_col=None)},
)
for col in ("topic_id", "query_id", "qid"):
    ok(
        f"wide-id-column-{col}",
        "file-wide",
        ("inspect", "{d}/w.csv", *OUT),
        inspect_means(means_of(W3, MW)),
        {"w.csv": wide(W3, MW, topic_col=col)},
    )
err(
    "wide-nan-cell",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv:\d+",
    {"w.csv": wide(W3, MW).replace("0.2", "nan", 1)},
)
err(
    "wide-inf-cell",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv:\d+",
    {"w.csv": wide(W3, MW).replace("0.2", "inf", 1)},
)
err(
    "wide-text-cell",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv:4\b",
    {"w.csv": "\n".join(wide(W3, MW).splitlines()[:3] + ["403,0.1,oops,0.3"]) + "\n"},
)
err(
    "wide-duplicate-system",
    "file-wide",
    ("inspect", "{d}/w.csv"),
    r"w\.csv.*base",
    {"w.csv": wide(("base", "base", "chal_b"), MW)},
)
err(
    "wide-duplicate-topic",
    "file-wide",
    ("inspect", "{d}/w.csv"),
    r"w\.csv.*401",
    {"w.csv": wide(W3, MW) + "401,0.1,0.2,0.3\n"},
)
err(
    "wide-ragged-row",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv:3\b",
    {"w.csv": "topic,a,b\n1,0.1,0.2\n2,0.3\n3,0.2,0.2\n"},
)
err(
    "wide-header-only",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv",
    {"w.csv": "topic,base,chal_a\n"},
)
err(
    "wide-out-of-range",
    "file-wide",
    ("inspect", "-f", "wide", "-m", "AP", "{d}/w.csv"),
    r"w\.csv.*(range|outside)",
    {"w.csv": wide(W3, MW).replace("0.2", "1.7", 1)},
)
err(
    "wide-out-of-range-trec-spelling",
    "file-wide",
    ("inspect", "-f", "wide", "-m", "P_10", "{d}/w.csv"),
    r"w\.csv.*(range|outside)",
    {"w.csv": wide(W3, MW).replace("0.2", "1.7", 1)},
)
err(
    "wide-junk-forced",
    "file-wide",
    ("inspect", "-f", "wide", "{d}/w.csv"),
    r"w\.csv",
    {"w.csv": junk(seed=2)},
)

# ============================================================================ file-trec_eval
TE = {"base.txt": trec_eval("base", M[:, 0]), "chal.txt": trec_eval("chal", M[:, 1])}
TEA = ("{d}/base.txt", "{d}/chal.txt")
ok(
    "te-valid",
    "file-trec_eval",
    ("inspect", *TEA, *OUT),
    inspect_means({"base": MEANS["base"], "chal": MEANS["chal_a"]}),
    TE,
)
ok(
    "te-crlf",
    "file-trec_eval",
    ("inspect", *TEA, *OUT),
    inspect_means({"base": MEANS["base"], "chal": MEANS["chal_a"]}),
    {
        "base.txt": trec_eval("base", M[:, 0], eol="\r\n"),
        "chal.txt": trec_eval("chal", M[:, 1], eol="\r\n"),
    },
)
for measure, bad in (("P_10", "3.0"), ("ndcg_cut_10", "1.7"), ("map", "-0.2"), ("recip_rank", "2")):
    err(
        f"te-range-{measure}",
        "file-trec_eval",
        ("inspect", "{d}/base.txt"),
        r"base\.txt.*(range|outside)",
        {
            "base.txt": trec_eval("base", M[:, 0], measure=measure).replace(
                repr(float(M[2, 0])), bad, 1
            )
        },
    )
err(
    "te-nan-value",
    "file-trec_eval",
    ("inspect", "{d}/base.txt"),
    r"base\.txt:2\b",
    {"base.txt": trec_eval("base", M[:, 0]).replace(repr(float(M[1, 0])), "nan", 1)},
)
err(
    "te-duplicate-topic",
    "file-trec_eval",
    ("inspect", "{d}/base.txt"),
    r"base\.txt.*401",
    {"base.txt": "map\t401\t0.5\n" + trec_eval("base", M[:, 0])},
)
err(
    "te-summary-only",
    "file-trec_eval",
    ("inspect", "-f", "trec_eval", "{d}/base.txt"),
    r"base\.txt",
    {"base.txt": "runid\tall\tbase\nmap\tall\t0.3\n"},
)
err(
    "te-junk-line",
    "file-trec_eval",
    ("inspect", "-f", "trec_eval", "{d}/base.txt"),
    r"base\.txt:4\b",
    {
        "base.txt": "\n".join(
            trec_eval("base", M[:, 0]).splitlines()[:3] + ["this is not trec_eval at all"]
        )
        + "\n"
    },
)
err("te-forced-on-tidy", "file-trec_eval", ("inspect", "-f", "trec_eval", TA), r"t\.csv")
err(
    "te-same-runid-twice",
    "file-trec_eval",
    ("inspect", *TEA),
    r"base",
    {"base.txt": trec_eval("base", M[:, 0]), "chal.txt": trec_eval("base", M[:, 1])},
)


def one_measure(expected_means: dict[str, float]):
    """Check ``inspect -o``: one measure label for every row, and the expected means."""

    def check(ctx) -> None:
        measures = {row["measure"] for row in read_csv_rows(ctx.out / "out.csv")}
        assert len(measures) == 1, f"one measure spelled two ways is split: {measures}"
        inspect_means(expected_means)(ctx)

    return check


# Measure spellings: one measure, whatever its spelling (ir_measures / trec_eval / P.10).
ok(
    "tidy-select-trec-spelling",
    "file-tidy",
    ("inspect", "-m", "ndcg_cut_10", TA, *OUT),
    inspect_means(MEANS),
    {"t.csv": tidy(measure="nDCG@10")},
)
ok(
    "tidy-select-ir-measures-spelling",
    "file-tidy",
    ("inspect", "-m", "nDCG@10", TA, *OUT),
    inspect_means(MEANS),
    {"t.csv": tidy(measure="ndcg_cut_10")},
)
ok(
    "tidy-two-spellings-one-measure",
    "file-tidy",
    ("inspect", TA, *OUT),
    one_measure(MEANS),
    {
        "t.csv": tidy(systems=SYSTEMS[:3], values=M[:, :3], measure="P@10")
        + tidy(systems=SYSTEMS[3:], values=M[:, 3:], measure="P_10").split("\n", 1)[1]
    },
)
ok(
    "te-select-ir-measures-spelling",
    "file-trec_eval",
    ("inspect", "-m", "P@10", *TEA, *OUT),
    inspect_means({"base": MEANS["base"], "chal": MEANS["chal_a"]}),
    {
        "base.txt": trec_eval("base", M[:, 0], measure="P_10"),
        "chal.txt": trec_eval("chal", M[:, 1], measure="P_10"),
    },
)
err("tidy-forced-lines", "file-tidy", ("inspect", "-f", "lines", TA), r"t\.csv:1\b")
err(
    "te-forced-wide",
    "file-trec_eval",
    ("inspect", "-f", "wide", "{d}/base.txt"),
    r"base\.txt",
    {"base.txt": trec_eval("base", M[:, 0])},
)

# ============================================================================ file-run
RUNS = {
    "a.run": run("sysA", ["d1", "d2", "d3", "d4", "d5"]),
    "b.run": run("sysB", ["d5", "d4", "d3", "d2", "d1"]),
    "qrels.txt": qrels(),
}


def precision_at_5(order: list[str]) -> float:
    """P@5 by hand: relevant documents in the first 5, over 5, averaged over topics."""
    from bad_inputs.catalogue import QRELS_REL

    return float(np.mean([len(set(order[:5]) & QRELS_REL[t]) / 5 for t in ("1", "2", "3")]))


P5 = {
    "sysA": precision_at_5(["d1", "d2", "d3", "d4", "d5"]),
    "sysB": precision_at_5(["d5", "d4", "d3", "d2", "d1"]),
}
RUNA = ("{d}/a.run", "{d}/b.run", "--qrels", "{d}/qrels.txt")
ok("run-valid", "file-run", ("inspect", *RUNA, "-m", "P@5", *OUT), inspect_means(P5), RUNS)
ok("run-trec-spelling", "file-run", ("inspect", *RUNA, "-m", "P_5", *OUT), inspect_means(P5), RUNS)
err(
    "run-no-common-topic",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"qrels\.txt.*(topic|quer)|(topic|quer).*qrels\.txt",
    {**RUNS, "qrels.txt": qrels(topic_ids=("7", "8", "9"))},
)
ok(  # one file, two run tags: split into two systems, named by their tags
    "run-mixed-runids",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    stdout_has("sysA", "sysX"),
    files={
        **RUNS,
        "a.run": run("sysA", ["d1", "d2"], topic_ids=("1",))
        + run("sysX", ["d1", "d2"], topic_ids=("2", "3")),
    },
)
err(
    "run-five-fields",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"a\.run:2\b",
    {**RUNS, "a.run": "1 Q0 d1 1 9.5 sysA\n1 Q0 d2 2 8.5\n"},
)
err(
    "run-score-not-number",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"a\.run:2\b",
    {**RUNS, "a.run": "1 Q0 d1 1 9.5 sysA\n1 Q0 d2 2 high sysA\n"},
)
err(
    "run-empty",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"a\.run.*empty",
    {**RUNS, "a.run": ""},
)
err(
    "run-qrels-empty",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"qrels\.txt.*empty",
    {**RUNS, "qrels.txt": ""},
)
err(
    "run-qrels-three-fields",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"qrels\.txt:1\b",
    {**RUNS, "qrels.txt": "1 d1 1\n" + qrels()},
)
err(
    "run-qrels-is-a-run",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"qrels\.txt",
    {**RUNS, "qrels.txt": RUNS["a.run"]},
)
err("run-without-qrels", "file-run", ("inspect", "{d}/a.run", "-m", "P@5"), r"--qrels", RUNS)
err("run-bad-measure", "file-run", ("inspect", *RUNA, "-m", "nDCG@@3"), r"nDCG@@3", RUNS)
err(
    "run-qrels-missing-file",
    "file-run",
    ("inspect", "{d}/a.run", "--qrels", "{d}/nope.txt", "-m", "P@5"),
    r"nope\.txt",
    RUNS,
)
err(
    "run-qrels-binary",
    "file-run",
    ("inspect", *RUNA, "-m", "P@5"),
    r"qrels\.txt",
    {**RUNS, "qrels.txt": junk(seed=3)},
)

# ============================================================================ file-lines
LINES = {"base/task/x.txt": lines_file(M[:, 0]), "chal/task/x.txt": lines_file(M[:, 1])}
LA = ("-f", "lines", "{d}/base/task/x.txt", "{d}/chal/task/x.txt")
ok(
    "lines-valid",
    "file-lines",
    ("inspect", *LA, *OUT),
    inspect_means({"base": MEANS["base"], "chal": MEANS["chal_a"]}),
    LINES,
)
err(
    "lines-different-lengths",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt",
    {**LINES, "chal/task/x.txt": lines_file(M[:-2, 1])},
)
err(
    "lines-blank-inside",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt:3\b",
    {**LINES, "chal/task/x.txt": "0.1\n0.2\n\n0.3\n"},
)
err(
    "lines-nan",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt:2\b",
    {**LINES, "chal/task/x.txt": lines_file(["0.1", "nan"] + list(M[2:, 1]))},
)
err(
    "lines-text",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt:1\b",
    {**LINES, "chal/task/x.txt": "yes\n" + lines_file(M[1:, 1])},
)
err(
    "lines-two-numbers",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt:2\b",
    {**LINES, "chal/task/x.txt": "0.1\n0.2 0.3\n" + lines_file(M[2:, 1])},
)
err(
    "lines-empty-file",
    "file-lines",
    ("inspect", *LA),
    r"x\.txt.*empty",
    {**LINES, "chal/task/x.txt": ""},
)

# ============================================================================ file-special
err(
    "special-directory-as-input",
    "file-special",
    ("inspect", "{d}/sub"),
    r"sub.*(director|folder|not a file)",
    {"sub/": None},
)
err("special-missing-file", "file-special", ("inspect", "{d}/nope.csv"), r"nope\.csv.*not found")
err(
    "special-dev-null",
    "file-special",
    ("inspect", "/dev/null"),
    r"/dev/null",
    subprocess=True,
    timeout=30,
)
err(
    "special-dev-zero",
    "file-special",
    ("inspect", "/dev/zero"),
    r"/dev/zero",
    subprocess=True,
    memory_limit=True,
    timeout=30,
)
err(
    "special-dev-zero-forced",
    "file-special",
    ("inspect", "-f", "tidy", "/dev/zero"),
    r"/dev/zero",
    subprocess=True,
    memory_limit=True,
    timeout=30,
)
err(
    "special-fifo",
    "file-special",
    ("inspect", "{d}/pipe.csv"),
    r"pipe\.csv",
    {"pipe.csv": FIFO},
    subprocess=True,
    timeout=30,
)
err(
    "special-fifo-forced",
    "file-special",
    ("inspect", "-f", "tidy", "{d}/pipe.csv"),
    r"pipe\.csv",
    {"pipe.csv": FIFO},
    subprocess=True,
    timeout=30,
)
err("special-unknown-format", "file-special", ("inspect", "-f", "xml", TA), r"xml")
err(
    "special-undetectable",
    "file-special",
    ("inspect", "{d}/x.csv"),
    r"x\.csv",
    {"x.csv": "hello world\nthis is prose, not scores\n"},
)


# ============================================================================ names
def names_table(*names: str) -> dict:
    systems = ("base", *names)
    return {"t.csv": tidy(systems=systems)}


def names_means(*names: str):
    systems = ("base", *names)
    return means_of(systems, scores(n_systems=len(systems)))


for slug, name in (
    ("rich-markup", "[bold]x[/bold]"),
    ("rich-close-tag", "new[/x]"),
    ("rich-style", "[red on blue]r"),
    ("unicode", "système-β-日本"),
    ("emoji", "🚀run"),
    ("html", "<b>x</b>"),
    ("backslash", "a\\b"),
):
    ok(
        f"name-{slug}-terminal",
        "names",
        ("inspect", TA, *OUT),
        both(stdout_has(name), inspect_means(names_means(name))),
        names_table(name),
    )
for slug, name in (
    ("comma", "a,b"),
    ("quote", 'say "hi"'),
    ("newline", "two\nlines"),
    ("formula", "=1+2"),
    ("unicode", "système-β"),
):
    ok(
        f"name-{slug}-csv-roundtrip",
        "names",
        ("inspect", TA, *OUT),
        inspect_means(names_means(name)),
        names_table(name),
    )
    ok(
        f"name-{slug}-json-roundtrip",
        "names",
        ("inspect", TA, "-o", "{o}/out.json"),
        json_systems("out.json", {"base", name}),
        names_table(name),
    )
for slug, name, want in (
    ("underscore", "a_b", r"a\_b"),
    ("ampersand", "x&y", r"x\&y"),
    ("percent", "50%", r"50\%"),
    ("hash-dollar", "#$", r"\#\$"),
    ("braces", "{z}", r"\{z\}"),
):
    ok(
        f"name-latex-{slug}",
        "names",
        ("inspect", TA, "-o", "{o}/out.tex"),
        file_has("out.tex", want),
        names_table(name),
    )
for slug, name, want in (
    ("pipe", "a|b", r"a\|b"),
    ("star", "*a*", r"\*a\*"),
    ("underscore", "_u_", r"\_u\_"),
):
    ok(
        f"name-markdown-{slug}",
        "names",
        ("inspect", TA, "-o", "{o}/out.md"),
        file_has("out.md", want),
        names_table(name),
    )
ok(
    "name-rich-markup-fit-champion",
    "names",
    ("fit", TA, "-c", "[b]base", "-C", "chal_*", "--draws", "200", "--chains", "2", *OUT),
    both(stdout_has("[b]base"), challengers_are({"chal_a", "chal_b"})),
    {"t.csv": tidy(systems=("[b]base", *SYSTEMS[1:]))},
)
ok(
    "name-rich-topic",
    "names",
    ("inspect", TA, *OUT),
    inspect_means(MEANS),
    {"t.csv": tidy(topic_ids=[f"[i]{t}" for t in topics()])},
)

# ============================================================================ opt-fit
FIT = ("fit", TA, "-c", "base", "-C", "chal_*", "--draws", "200", "--chains", "2")
ok("fit-valid", "opt-fit", (*FIT, *OUT), challengers_are({"chal_a", "chal_b"}))
warn(
    "fit-failed-diagnostics-warns",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "chal_*", "--draws", "30", "--chains", "2"),
    r"(R-hat|ESS|diagnos)",
)
for option, value, match in (
    ("--draws", "0", "--draws"),
    ("--draws", "-5", "--draws"),
    ("--draws", "2.5", "--draws"),
    ("--draws", "nan", "--draws"),
    ("--draws", "1e9", "--draws"),
    ("--draws", "", "--draws"),
    ("--chains", "0", "--chains"),
    ("--chains", "-1", "--chains"),
    ("--chains", "1.5", "--chains"),
    ("--seed", "-3", "--seed"),
    ("--seed", "1.7", "--seed"),
    ("--seed", "abc", "--seed"),
    ("--tune", "-1", "--tune"),
    ("--target-accept", "1.5", "target"),
    ("--target-accept", "nan", "target"),
    ("--ci-prob", "0", "ci"),
    ("--ci-prob", "1", "ci"),
    ("--ci-prob", "95", "ci"),
    ("--ci-prob", "nan", "ci"),
    ("--ci-prob", "-0.5", "ci"),
    ("--min-gain", "abc", "min-gain"),
    ("--likelihood", "poisson", "likelihood"),
    ("--likelihood", "zoib(inflation=sys)", r"likelihood.*zoib inflation must be 'pooled' or"),
    ("--likelihood", "binomial(trials=0)", r"likelihood.*trials must be at least 1, got 0"),
    ("--likelihood", "zoib(phi=system", r"likelihood: cannot read likelihood 'zoib\(phi"),
    ("--pooling", "some", "pooling"),
    ("--pooling", "none", r"pooling none does not apply to the gaussian"),
    ("--top-m", "-2", "top-m"),
    ("--drop-bottom", "1.5", "drop-bottom"),
    ("--drop-bottom", "-0.1", "drop-bottom"),
    ("--sweep", "a,b", "sweep"),
    ("--sweep", "-1", "sweep"),
):
    slug = f"{option.strip('-')}-{value or 'empty'}".replace(".", "p")
    err(f"fit-{slug}", "opt-fit", (*FIT, option, value), option_words(match))
for value in ("nan", "inf"):
    err(f"fit-min-gain-{value}", "opt-fit", (*FIT, "--min-gain", value), r"min.gain")
err(
    "fit-draws-huge",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "chal_*", "--draws", "1000000000"),
    r"--draws.*(memory|GB|GiB|MB)",
    subprocess=True,
    memory_limit=True,
    timeout=45,
)
err(
    "fit-chains-huge",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "chal_*", "--chains", "1000000000", "--draws", "200"),
    r"--chains",
    subprocess=True,
    memory_limit=True,
    timeout=45,
)
err("fit-unknown-champion", "opt-fit", ("fit", TA, "-c", "nope", "-C", "chal_*"), r"nope")
err("fit-champion-wrong-case", "opt-fit", ("fit", TA, "-c", "BASE", "-C", "chal_*"), r"BASE.*base")
err("fit-challenger-glob-none", "opt-fit", ("fit", TA, "-c", "base", "-C", "zzz*"), r"zzz\*")
err("fit-challenger-regex-none", "opt-fit", ("fit", TA, "-c", "base", "-C", "re:^q"), r"\^q")
err("fit-challenger-bad-regex", "opt-fit", ("fit", TA, "-c", "base", "-C", "re:(("), r"\(\(")
err("fit-champion-also-challenger", "opt-fit", ("fit", TA, "-c", "base", "-C", "base"), r"base")
err(
    "fit-champion-in-glob",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "*", "--draws", "200"),
    r"base",
)
err("fit-artifact-unknown", "opt-fit", (*FIT, "-a", "ghost"), r"ghost")
err("fit-artifact-is-challenger", "opt-fit", (*FIT, "-a", "chal_a"), r"chal_a")
GLOBNAMES = ("base", "a[1]", "a1", "re:x", "x", "b*", "bb", "run1")
ok(
    "fit-exact-name-brackets",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "a[1]", "--draws", "200", "--chains", "2", *OUT),
    challengers_are({"a[1]"}),
    {"t.csv": tidy(systems=GLOBNAMES)},
)
ok(
    "fit-exact-name-re-prefix",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "re:x", "--draws", "200", "--chains", "2", *OUT),
    challengers_are({"re:x"}),
    {"t.csv": tidy(systems=GLOBNAMES)},
)
ok(
    "fit-exact-name-star",
    "opt-fit",
    ("fit", TA, "-c", "base", "-C", "b*", "--draws", "200", "--chains", "2", *OUT),
    challengers_are({"b*"}),
    {"t.csv": tidy(systems=GLOBNAMES)},
)
err("fit-challengers-file-missing", "opt-fit", (*FIT[:4], "-C", "@{d}/none.txt"), r"none\.txt")
err("fit-figures-is-file", "opt-fit", (*FIT, "--figures", TA), r"t\.csv")
err("fit-save-not-nc", "opt-fit", (*FIT, "--save", "{o}/fit.csv"), r"\.nc")

# ============================================================================ opt-risk
RISK = ("risk", TA, "-c", "base", "-C", "chal_*", "--no-bayes", "--resamples", "200")


def urisk_check(r: float):
    """URisk- of chal_a and chal_b: -mean(d if d >= 0 else r * d), d = challenger - champion."""

    def check(ctx) -> None:
        rows = {row["system"]: row for row in read_csv_rows(ctx.out / "out.csv")}
        for j, name in ((1, "chal_a"), (2, "chal_b")):
            d = M[:, j] - M[:, 0]
            want = -float(np.mean(np.where(d >= 0, d, r * d)))
            assert abs(float(rows[name]["urisk_minus"]) - want) < 1e-9, (name, rows[name], want)

    return check


ok("risk-valid-urisk", "opt-risk", (*RISK, *OUT), urisk_check(5.0))
ok("risk-r-1", "opt-risk", (*RISK, "-r", "1", *OUT), urisk_check(1.0))
for value in ("0", "-2", "0.5", "nan", "inf", "abc"):
    err(f"risk-r-{value}", "opt-risk", (*RISK, "-r", value), r"(-r\b|--r\b|\br\b)")
for option, value, match in (
    ("--resamples", "50", "resamples"),
    ("--seed", "1.7", "seed"),
    ("--ci-prob", "nan", "ci"),
    ("--draws", "-3", "draws"),
    ("--resamples", "1e9", "resamples"),
    ("--ci-prob", "1.5", "ci"),
    ("--ci-prob", "0", "ci"),
    ("--seed", "-1", "seed"),
    ("--draws", "0", "draws"),
    ("--chains", "0", "chains"),
    ("--likelihood", "t", "likelihood"),
):
    err(
        f"risk-{option.strip('-')}-{value}".replace(".", "p"),
        "opt-risk",
        (*RISK, option, value),
        match,
    )
err(
    "risk-unknown-champion",
    "opt-risk",
    ("risk", TA, "-c", "nope", "-C", "chal_*", "--no-bayes"),
    r"nope",
)
err(
    "risk-no-challenger", "opt-risk", ("risk", TA, "-c", "base", "-C", "qq*", "--no-bayes"), r"qq\*"
)
err("risk-plot-bad-ext", "opt-risk", (*RISK, "--plot", "{o}/p.docx"), r"p\.docx")

# ============================================================================ opt-glm
GLM = ("glm", TA, "--links", "identity,logit")
err("glm-unknown-link", "opt-glm", ("glm", TA, "--links", "foo"), r"foo")
for option, value, match in (
    ("--alpha", "0", "alpha"),
    ("--alpha", "1.5", "alpha"),
    ("--alpha", "nan", "alpha"),
    ("--epsilon", "-1", "epsilon"),
    ("--epsilon", "0.7", "epsilon"),
    ("--epsilon", "nan", "epsilon"),
    ("--boundary", "wrap", "boundary"),
    ("--min-mean", "nan", "min-mean"),
):
    err(
        f"glm-{option.strip('-')}-{value}".replace(".", "p"),
        "opt-glm",
        (*GLM, option, value),
        match,
    )
err("glm-pairs-bad-ext", "opt-glm", (*GLM, "--pairs", "{o}/p.xlsx"), r"p\.xlsx")

# ============================================================================ opt-reliability
REL = ("reliability", TA)
for value in ("BOGUS", "RES(T=0)", "RES(T=-5)", "KD(T=nan)", "RES(T=2.5)", "RES(T=1e12)"):
    err(
        f"rel-estimator-{value}",
        "opt-reliability",
        (*REL, "-e", value),
        re.escape(value.split("(")[0]),
    )
for option, value, match in (
    ("--ci-prob", "2", "ci"),
    ("--ci-prob", "nan", "ci"),
    ("--seed", "-1", "seed"),
    ("--seed", "1.5", "seed"),
):
    err(
        f"rel-{option.strip('-')}-{value}".replace(".", "p"),
        "opt-reliability",
        (*REL, option, value),
        match,
    )

# ============================================================================ opt-inspect
err("inspect-missing-bogus", "opt-inspect", ("inspect", TA, "--missing", "maybe"), r"missing")
err("inspect-collection-unknown", "opt-inspect", ("inspect", TA, "--collection", "zz"), r"zz")
err("inspect-measure-unknown", "opt-inspect", ("inspect", TA, "-m", "P@10"), r"P@10")
err("inspect-no-files", "opt-inspect", ("inspect",), r"files|argument|usage|missing")
err("inspect-measure-empty", "opt-inspect", ("inspect", "-m", "", TA), r"measure")
err("inspect-unknown-option", "opt-inspect", ("inspect", TA, "--frobnicate"), r"--frobnicate")

# ============================================================================ output
ok("out-csv", "output", INSPECT, inspect_means(MEANS))
ok(
    "out-new-folder",
    "output",
    ("inspect", TA, "-o", "{o}/new/sub/out.csv"),
    lambda ctx: inspect_means(MEANS, "new/sub/out.csv")(ctx),
)
ok(
    "out-overwrite-existing",
    "output",
    INSPECT,
    inspect_means(MEANS),
    {**T, "out/out.csv": "old content\n"},
)
err("out-same-as-input", "output", ("inspect", TA, "-o", TA), r"t\.csv")
err("out-same-as-input-dotted", "output", ("inspect", TA, "-o", "{d}/./t.csv"), r"t\.csv")
err("out-same-as-input-fit", "output", (*FIT, "-o", TA), r"t\.csv")
err("out-same-as-input-glm-pairs", "output", (*GLM, "--pairs", TA), r"t\.csv")
err("out-parent-is-file", "output", ("inspect", TA, "-o", "{d}/t.csv/out.csv"), r"t\.csv")
err(
    "out-is-directory",
    "output",
    ("inspect", TA, "-o", "{o}/dir.csv"),
    r"dir\.csv",
    {**T, "out/dir.csv/": None},
)
err("out-unknown-ext", "output", ("inspect", TA, "-o", "{o}/out.xlsx"), r"out\.xlsx")
err("out-no-ext", "output", ("inspect", TA, "-o", "{o}/out"), r"out")
err("out-name-too-long", "output", ("inspect", TA, "-o", "{o}/" + "n" * 300 + ".csv"), r"n{20}")
err(
    "out-path-too-long",
    "output",
    ("inspect", TA, "-o", "{o}/" + "/".join(["p" * 200] * 25) + ".csv"),
    r"p{20}",
)
err("out-fit-save-parent-is-file", "output", (*FIT, "--save", "{d}/t.csv/fit.nc"), r"t\.csv")
err("out-fit-save-name-too-long", "output", (*FIT, "--save", "{o}/" + "s" * 300 + ".nc"), r"s{20}")
err(
    "out-glm-pairs-equals-output",
    "output",
    (*GLM, "-o", "{o}/same.csv", "--pairs", "{o}/same.csv"),
    r"same\.csv",
)
err("out-figures-parent-is-file", "output", (*FIT, "--figures", "{d}/t.csv/figs"), r"t\.csv")
ok("out-fit-save", "output", (*FIT, "--save", "{o}/fit.nc"), exists("fit.nc"))
ok(
    "out-json",
    "output",
    ("inspect", TA, "-o", "{o}/out.json"),
    json_systems("out.json", set(SYSTEMS)),
)

# ============================================================================ meta-config
MF = {"scores.csv": META_SCORES}
META = ("meta", "{d}/cfg.yaml")


def meta_check(ctx) -> None:
    """Per-collection MD equals the numpy mean difference; FE pools with 1/se^2 weights."""
    from bad_inputs.catalogue import META_DIFFS

    rows = read_csv_rows(ctx.out / "out.csv")
    studies = {r["label"]: r for r in rows if r["kind"] == "study"}
    assert set(studies) == set(META_DIFFS), studies.keys()
    est, w = [], []
    for name, (ctrl, trt) in META_DIFFS.items():
        d = float(np.mean(trt) - np.mean(ctrl))
        assert abs(float(studies[name]["estimate"]) - d) < 1e-9, (name, studies[name], d)
        est.append(d)
        w.append(1 / float(studies[name]["se"]) ** 2)
    pooled = [r for r in rows if r["kind"] != "study"]
    assert len(pooled) == 1
    assert abs(float(pooled[0]["estimate"]) - np.average(est, weights=w)) < 1e-9


ok(
    "meta-valid-fe",
    "meta-config",
    (*META, "--method", "FE", *OUT),
    meta_check,
    {**MF, "cfg.yaml": META_OK},
)


def config_with(line: str) -> str:
    """The valid config with ``line`` added, replacing the line of the same key."""
    key = line.split(":")[0]
    kept = [x for x in META_OK.splitlines() if not x.startswith(key + ":")]
    return "\n".join(kept + [line]) + "\n"


for slug, line, match in (
    ("hk-string-false", "hk: 'false'", r"\bhk\b"),
    ("hk-string-no", "hk: 'no'", r"\bhk\b"),
    ("hk-int", "hk: 2", r"\bhk\b"),
    ("measure-list", "measure: [1, 2]", r"measure"),
    ("control-list", "control: [bm25]", r"control"),
    ("method-int", "method: 3", r"method"),
    ("effect-bogus", "effect: RR", r"effect|RR"),
    ("method-bogus", "method: XX", r"method|XX"),
    ("unknown-key", "contrl: bm25", r"contrl"),
    ("display-names-list", "display_names: [a, b]", r"display_names"),
    ("scores-int", "scores: 5", r"scores"),
    ("ci-prob-string", "ci_prob: high", r"ci_prob"),
):
    err(
        f"meta-{slug}",
        "meta-config",
        META,
        match,
        {**MF, "cfg.yaml": config_with(line)},
    )
err(
    "meta-missing-control",
    "meta-config",
    META,
    r"control",
    {**MF, "cfg.yaml": META_OK.replace("control: bm25\n", "")},
)
err(
    "meta-missing-treatment",
    "meta-config",
    META,
    r"treatment",
    {**MF, "cfg.yaml": META_OK.replace("treatment: dense\n", "")},
)
err(
    "meta-control-unknown",
    "meta-config",
    META,
    r"bm99",
    {**MF, "cfg.yaml": META_OK.replace("control: bm25", "control: bm99")},
)
err(
    "meta-control-equals-treatment",
    "meta-config",
    META,
    r"dense",
    {**MF, "cfg.yaml": META_OK.replace("control: bm25", "control: dense")},
)
err(
    "meta-latin1",
    "meta-config",
    META,
    r"cfg\.yaml.*(utf-?8|encod|decod)",
    {**MF, "cfg.yaml": (META_OK + "# café\ndisplay_names: {coll0: Café}\n").encode("latin-1")},
)
err(
    "meta-syntax-error",
    "meta-config",
    META,
    r"cfg\.yaml.*(line|:\d)",
    {**MF, "cfg.yaml": META_OK + "display_names: {a: b\n"},
)
err(
    "meta-tab-indent",
    "meta-config",
    META,
    r"cfg\.yaml",
    {**MF, "cfg.yaml": META_OK + "display_names:\n\tcoll0: C0\n"},
)
err("meta-empty", "meta-config", META, r"cfg\.yaml", {**MF, "cfg.yaml": ""})
err("meta-top-level-list", "meta-config", META, r"cfg\.yaml", {**MF, "cfg.yaml": "- a\n- b\n"})
err("meta-top-level-scalar", "meta-config", META, r"cfg\.yaml", {**MF, "cfg.yaml": "hello\n"})
err("meta-binary", "meta-config", META, r"cfg\.yaml", {**MF, "cfg.yaml": junk(seed=4)})
err(
    "meta-scores-missing",
    "meta-config",
    META,
    r"nope\.csv",
    {"cfg.yaml": META_OK.replace("scores.csv", "nope.csv")},
)
err(
    "meta-scores-directory",
    "meta-config",
    META,
    r"sub",
    {"cfg.yaml": META_OK.replace("scores.csv", "sub"), "sub/": None},
)
err(
    "meta-one-collection",
    "meta-config",
    META,
    r"collection",
    {
        "cfg.yaml": META_OK,
        "scores.csv": "\n".join(
            [line for line in META_SCORES.splitlines() if not line.startswith(("coll1", "coll2"))]
        )
        + "\n",
    },
)
err("meta-ci-prob-0", "meta-config", (*META, "--ci-prob", "0"), r"ci", {**MF, "cfg.yaml": META_OK})
err(
    "meta-ci-prob-nan",
    "meta-config",
    (*META, "--ci-prob", "nan"),
    r"ci",
    {**MF, "cfg.yaml": META_OK},
)
err(
    "meta-effect-option-bogus",
    "meta-config",
    (*META, "--effect", "OR"),
    r"OR",
    {**MF, "cfg.yaml": META_OK},
)
err(
    "meta-treatment-option-unknown",
    "meta-config",
    (*META, "--treatment", "ghost"),
    r"ghost",
    {**MF, "cfg.yaml": META_OK},
)
err(
    "meta-extra-unknown-measure",
    "meta-config",
    (*META, "--extra", "Foo@@1"),
    r"Foo@@1",
    {**MF, "cfg.yaml": META_OK},
)
err(
    "meta-method-option-bogus",
    "meta-config",
    (*META, "--method", "ZZ"),
    r"ZZ",
    {**MF, "cfg.yaml": META_OK},
)
err(
    "meta-output-is-scores",
    "meta-config",
    (*META, "-o", "{d}/scores.csv"),
    r"scores\.csv",
    {**MF, "cfg.yaml": META_OK},
)

# ============================================================================ degenerate
CONST = np.full((N := 10, len(SYSTEMS)), 0.5)
SHIFT = np.column_stack([M[:, 0], M[:, 0] + 0.05, M[:, 0] - 0.02, M[:, 3:]])
err(
    "deg-fit-one-topic",
    "degenerate",
    ("fit", TA, "-c", "base", "-C", "chal_*"),
    r"topic",
    {"t.csv": tidy(values=scores(n_topics=1))},
)
err(
    "deg-fit-constant",
    "degenerate",
    FIT,
    r"(constant|variance|identical)",
    {"t.csv": tidy(values=CONST)},
)
warn(
    "deg-risk-constant-differences",
    "degenerate",
    (*RISK,),
    r"(constant|variance|TRisk)",
    {"t.csv": tidy(values=SHIFT)},
)
err(
    "deg-glm-constant",
    "degenerate",
    GLM,
    r"(constant|variance|identical)",
    {"t.csv": tidy(values=CONST)},
)
err(
    "deg-reliability-constant",
    "degenerate",
    REL,
    r"(constant|variance|identical)",
    {"t.csv": tidy(values=CONST)},
)
err(
    "deg-reliability-one-topic",
    "degenerate",
    REL,
    r"topic",
    {"t.csv": tidy(values=scores(n_topics=1))},
)
err(
    "deg-glm-one-system",
    "degenerate",
    GLM,
    r"system",
    {"t.csv": tidy(systems=("base",), values=scores(n_systems=1))},
)
ok(
    "deg-inspect-one-system",
    "degenerate",
    INSPECT,
    inspect_means({"base": float(np.mean(M[:, 0]))}),
    {"t.csv": tidy(systems=("base",), values=scores(n_systems=1))},
)

# ============================================================================ saved-fit
# (API: HierarchicalFit.load; the CLI has no command that reads a saved fit.)


def load_fit(name: str):
    def call(ctx):
        from bayes_ir.hierarchical import HierarchicalFit

        return HierarchicalFit.load(ctx.d / name)

    return call


def api(id, cls, call, exc, match, files=None, **kw) -> None:
    add(
        id=id,
        cls=cls,
        kind="api",
        expect="raises",
        call=call,
        exc=exc,
        match=match,
        files=files or {},
        **kw,
    )


def netcdf_not_a_fit() -> bytes:
    import tempfile
    from pathlib import Path

    import xarray as xr

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.nc"
        xr.Dataset({"a": ("x", np.arange(3.0))}).to_netcdf(path)
        return path.read_bytes()


api(
    "fit-load-garbage",
    "saved-fit",
    load_fit("fit.nc"),
    BayesIRError,
    r"fit\.nc",
    {"fit.nc": junk(seed=5)},
)
api("fit-load-empty", "saved-fit", load_fit("fit.nc"), BayesIRError, r"fit\.nc", {"fit.nc": b""})
api("fit-load-text", "saved-fit", load_fit("fit.nc"), BayesIRError, r"fit\.nc", {"fit.nc": tidy()})
api(
    "fit-load-not-a-fit",
    "saved-fit",
    load_fit("fit.nc"),
    BayesIRError,
    r"fit\.nc",
    {"fit.nc": netcdf_not_a_fit()},
)
api(
    "fit-load-directory",
    "saved-fit",
    load_fit("fit.nc"),
    BayesIRError,
    r"fit\.nc",
    {"fit.nc/": None},
)


def truncated_fit(ctx):
    from bayes_ir.hierarchical import HierarchicalFit

    path = ctx.fit().save(ctx.out / "fit.nc")
    data = path.read_bytes()
    broken = ctx.out / "cut.nc"
    broken.write_bytes(data[: len(data) // 2])
    path.unlink()
    return HierarchicalFit.load(broken)


api("fit-load-truncated", "saved-fit", truncated_fit, BayesIRError, r"cut\.nc")


def roundtrip_fit(ctx):
    from bayes_ir.hierarchical import HierarchicalFit

    fit = ctx.fit()
    path = fit.save(ctx.out / "fit.nc")
    loaded = HierarchicalFit.load(path)
    return fit, loaded


def same_fit(value) -> None:
    fit, loaded = value
    a = fit.contrast_draws().values
    b = loaded.contrast_draws().values
    assert np.array_equal(a, b)


add(
    id="fit-save-load-roundtrip",
    cls="saved-fit",
    kind="api",
    expect="ok",
    call=roundtrip_fit,
    check=same_fit,
)

# ============================================================================ api


def fit_with(**options):
    return lambda ctx: bayes_ir.fit(ctx.table(), **{"draws": 50, "chains": 1, **options})


for slug, options, match in (
    ("draws-0", {"draws": 0}, "draws"),
    ("draws-neg", {"draws": -5}, "draws"),
    ("draws-float", {"draws": 2.5}, "draws"),
    ("draws-nan", {"draws": float("nan")}, "draws"),
    ("draws-str", {"draws": "100"}, "draws"),
    ("chains-0", {"chains": 0}, "chains"),
    ("chains-float", {"chains": 1.5}, "chains"),
    ("seed-neg", {"seed": -3}, "seed"),
    ("seed-float", {"seed": 1.7}, "seed"),
    ("seed-complex", {"seed": 1j}, "seed"),
    ("tune-neg", {"tune": -1}, "tune"),
    ("target-accept-2", {"target_accept": 2.0}, "target_accept"),
    ("likelihood-bogus", {"likelihood": "poisson"}, "likelihood"),
    ("pooling-bogus", {"pooling": "some"}, "pooling"),
    ("pooling-none-gaussian", {"pooling": "none"}, "'none' does not apply to the gaussian"),
    (
        "pooling-artifacts-bernoulli",
        {"pooling": "artifacts", "likelihood": "bernoulli"},
        "does not apply to the bernoulli",
    ),  # fmt: skip
    ("method-bogus", {"method": "magic"}, "method"),
):
    api(f"api-fit-{slug}", "api", fit_with(**options), OptionError, match)


def compare_with(**options):
    return lambda ctx: bayes_ir.compare(ctx.fit(), **options)


for slug, options, match in (
    ("min-gain-nan", {"min_gain": float("nan")}, "min_gain"),
    ("min-gain-complex", {"min_gain": 1 + 2j}, "min_gain"),
    ("min-gain-str", {"min_gain": "0.1"}, "min_gain"),
    ("ci-prob-1p5", {"ci_prob": 1.5}, "ci_prob"),
    ("ci-prob-nan", {"ci_prob": float("nan")}, "ci_prob"),
    ("ci-prob-complex", {"ci_prob": 0.9j}, "ci_prob"),
    ("champion-unknown", {"champion": "nope"}, "nope"),
):
    exc = UnknownSystemError if slug == "champion-unknown" else OptionError
    api(f"api-compare-{slug}", "api", compare_with(**options), exc, match)

api(
    "api-read-scores-none",
    "api",
    lambda ctx: bayes_ir.read_scores(None),
    OptionError,
    r"path|file|None",
)
api(
    "api-read-scores-empty-list",
    "api",
    lambda ctx: bayes_ir.read_scores([]),
    ScoreTableError,
    r"path|file|no ",
)
api(
    "api-read-scores-int",
    "api",
    lambda ctx: bayes_ir.read_scores(123),
    OptionError,
    r"path|file|123",
)
api(
    "api-read-scores-format-bogus",
    "api",
    lambda ctx: bayes_ir.read_scores(ctx.d / "t.csv", format="xml"),
    ScoreTableError,
    r"xml",
    T,
)
api(
    "api-from-matrix-complex",
    "api",
    lambda ctx: bayes_ir.ScoreTable.from_matrix(np.array([[0.1 + 1j, 0.2], [0.3, 0.4]])),
    ScoreTableError,
    r"complex|real|number",
)
api(
    "api-from-matrix-strings",
    "api",
    lambda ctx: bayes_ir.ScoreTable.from_matrix(np.array([["a", "b"], ["c", "d"]])),
    ScoreTableError,
    r"number|numeric|'a'",
)
api(
    "api-with-roles-unknown",
    "api",
    lambda ctx: ctx.table().with_roles(champion="nope", challengers="chal_*"),
    UnknownSystemError,
    r"nope",
)
api(
    "api-with-roles-overlap",
    "api",
    lambda ctx: ctx.table().with_roles(champion="base", challengers=["base"]),
    RoleError,
    r"base",
)
api(
    "api-urisk-r-nan",
    "api",
    lambda ctx: bayes_ir.urisk(ctx.table(), r=float("nan")),
    OptionError,
    r"\br\b",
)
api(
    "api-urisk-r-complex",
    "api",
    lambda ctx: bayes_ir.urisk(ctx.table(), r=1 + 1j),
    OptionError,
    r"\br\b",
)
api("api-urisk-r-0", "api", lambda ctx: bayes_ir.urisk(ctx.table(), r=0), OptionError, r"\br\b")
api(
    "api-kendall-tau-lengths",
    "api",
    lambda ctx: bayes_ir.kendall_tau([1, 2, 3], [1, 2]),
    BayesIRError,
    r"length|size|same",
)
api(
    "api-fit-one-topic",
    "api",
    lambda ctx: bayes_ir.fit(
        bayes_ir.ScoreTable.from_matrix(
            scores(n_topics=1), systems=list(SYSTEMS), measure="AP"
        ).with_roles(champion="base", challengers="chal_*"),
        draws=50,
        chains=1,
    ),
    InsufficientDataError,
    r"topic",
)
api(
    "api-read-meta-config-latin1",
    "api",
    lambda ctx: bayes_ir.read_meta_config(ctx.d / "cfg.yaml"),
    BayesIRError,
    r"cfg\.yaml.*(utf-?8|encod|decod)",
    {"cfg.yaml": (META_OK + "# café\n").encode("latin-1")},
)

# ============================================================================ signal
for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
    add(
        id=f"signal-{sig.name.lower()}-fit-save",
        cls="signal",
        kind="signal",
        expect="exit",
        argv=(
            "fit",
            TA,
            "-c",
            "base",
            "-C",
            "chal_*",
            "--draws",
            "2000000",
            "--chains",
            "2",
            "--save",
            "{o}/fit.nc",
            "-o",
            "{o}/out.csv",
        ),
        files=T,
        signal=sig,
        status=status,
        timeout=120,
        slow=True,
    )

# ============================================================================ inputs
# Objects in memory given to read_scores (issue 16) and folders of runs on the CLI.


def read_obj(make, **options):
    """A call reading the object ``make()`` builds (imports inside: ranx is optional)."""
    return lambda ctx: bayes_ir.read_scores(make(), **options)


def ranx_run(name="bm25"):
    import pytest

    ranx = pytest.importorskip("ranx")
    return ranx.Run({"1": {"d1": 2.0, "d2": 1.0}, "2": {"d2": 1.0}}, name=name)


def ranx_report():
    import pytest

    ranx = pytest.importorskip("ranx")
    return ranx.data_structures.Report(
        model_names=["bm25"], results={"bm25": {"map": 0.5}}, comparisons={}, metrics=["map"],
        max_p=0.01, win_tie_loss={},
    )  # fmt: skip


def metrics(*rows):
    from ir_measures import Metric, parse_measure

    return [Metric(q, parse_measure(m), v) for q, m, v in rows]


def pt_frame(rows):
    import pandas as pd

    return pd.DataFrame(rows, columns=["name", "qid", "measure", "value"])


def wide_frame(index):
    import pandas as pd

    return pd.DataFrame({"bm25": [0.5] * len(index), "dense": [0.25] * len(index)}, index=index)


api(
    "inputs-ranx-run-without-qrels",
    "inputs",
    read_obj(ranx_run, measure="AP"),
    ScoreTableError,
    r"ranx Run 'bm25' has no qrels.*qrels=",
)
api(
    "inputs-ranx-report",
    "inputs",
    read_obj(ranx_report),
    ScoreTableError,
    r"Report holds mean scores only.*runs",
)
api(
    "inputs-ranx-two-runs-one-name",
    "inputs",
    read_obj(lambda: [ranx_run("x"), ranx_run("x")], qrels={"1": {"d1": 1}}, measure="AP"),
    ScoreTableError,
    r"two ranx Runs are named 'x'",
)
api(
    "inputs-metrics-mixed-measures",
    "inputs",
    read_obj(lambda: metrics(("1", "AP", 0.5), ("1", "P@5", 0.2))),
    ScoreTableError,
    r"2 measures \(AP, P@5\).*measure=",
)
api(
    "inputs-metrics-duplicate-topic",
    "inputs",
    read_obj(lambda: {"bm25": metrics(("1", "AP", 0.5), ("1", "AP", 0.4))}),
    ScoreTableError,
    r"system 'bm25', topic '1'",
)
api(
    "inputs-metrics-aggregate",
    "inputs",
    read_obj(lambda: {metrics(("1", "AP", 0.5))[0].measure: 0.5}),
    ScoreTableError,
    r"mean scores only \(ir_measures\.calc_aggregate\)",
)
api(
    "inputs-pyterrier-mixed-measures",
    "inputs",
    read_obj(lambda: pt_frame([("bm25", "1", "map", 0.5), ("bm25", "1", "ndcg", 0.6)])),
    ScoreTableError,
    r"2 measures \(map, ndcg\).*measure=",
)
api(
    "inputs-pyterrier-duplicate-topic",
    "inputs",
    read_obj(lambda: pt_frame([("bm25", "1", "map", 0.5), ("bm25", "1", "map", 0.6)])),
    ScoreTableError,
    r"system 'bm25', topic '1'",
)
api(
    "inputs-wide-frame-no-measure",
    "inputs",
    read_obj(lambda: wide_frame(["t1", "t2"])),
    ScoreTableError,
    r"wide DataFrame.*bm25, dense.*measure=",
)
api(
    "inputs-wide-frame-duplicate-topic",
    "inputs",
    read_obj(lambda: wide_frame(["t1", "t2", "t1"]), measure="AP"),
    ScoreTableError,
    r"topic 't1' is in two rows \(1 and 3\)",
)
api(
    "inputs-qrels-grade-not-integer",
    "inputs",
    lambda ctx: bayes_ir.read_scores(ctx.d / "a.run", qrels={"1": {"d1": "high"}}, measure="AP"),
    ScoreTableError,
    r"relevance grade 'high' of query '1', document 'd1'",
    {"a.run": RUNS["a.run"]},
)
api(
    "inputs-unknown-object",
    "inputs",
    read_obj(lambda: {"bm25": 3}),
    OptionError,
    r"got dict",
)

FOLDER = {"runs/a.run": RUNS["a.run"], "runs/b.run": RUNS["b.run"], "qrels.txt": RUNS["qrels.txt"]}
RUNF = ("{d}/runs", "--qrels", "{d}/qrels.txt")
ok("run-folder", "file-run", ("inspect", *RUNF, "-m", "P@5", *OUT), inspect_means(P5), FOLDER)
ok(  # the qrels in the folder of runs is left out, not read as a run
    "run-folder-holds-qrels",
    "file-run",
    ("inspect", "{d}/runs", "--qrels", "{d}/runs/qrels.txt", "-m", "P@5", *OUT),
    inspect_means(P5),
    {"runs/a.run": RUNS["a.run"], "runs/b.run": RUNS["b.run"], "runs/qrels.txt": qrels()},
)
err(
    "run-folder-empty",
    "file-run",
    ("inspect", *RUNF, "-m", "P@5"),
    r"runs: the folder holds no score files",
    {"runs/": None, "qrels.txt": qrels()},
)
err(
    "run-folder-non-run-file",
    "file-run",
    ("inspect", *RUNF, "-m", "P@5"),
    r"notes\.txt: is not a TREC run file",
    {**FOLDER, "runs/notes.txt": "my notes about these runs\n"},
)
err(
    "run-folder-without-qrels",
    "file-run",
    ("inspect", "{d}/runs", "-m", "P@5"),
    r"--qrels",
    FOLDER,
)
err(
    "folder-mixed-formats",
    "file-special",
    ("inspect", "{d}/runs"),
    r"t\.csv: is tidy but a\.run",
    {"runs/a.run": RUNS["a.run"], "runs/t.csv": tidy()},
)

# ============================================================================ new shared options
# Several measures, --executor/--scheduler, --fit, --quiet (the options every command shares).
TEST = ("test", TA, "-c", "base", "-C", "chal_*", "--test", "t")
err("measures-second-unknown", "opt-shared", (*TEST, "-m", "AP", "-m", "nope@10", *OUT),
    r"measure 'nope@10' is not in the data")  # fmt: skip
ok("measures-repeated-same", "opt-shared", (*TEST, "-m", "AP", "-m", "AP", *OUT))
err("meta-two-measures", "opt-shared", ("meta", TA, "-m", "AP", "-m", "P@10"),
    r"meta pools one measure")  # fmt: skip
err("executor-unknown", "opt-shared", ("glm", TA, "--executor", "threads"),
    r"--executor must be one of 'local', 'dask'")  # fmt: skip
err("scheduler-garbage", "opt-shared", ("glm", TA, "--executor", "dask", "--scheduler", "x"),
    r"--scheduler x: cannot connect")  # fmt: skip
err("fit-file-missing", "opt-shared", ("decide", TA, "-c", "base", "-C", "chal_*", "--fit",
    "{d}/none.nc"), r"none\.nc")  # fmt: skip
err("fit-several-measures", "opt-shared", ("decide", TA, "-c", "base", "-C", "chal_*", "-m", "AP",
    "-m", "P@10", "--fit", "{d}/t.csv"), r"--fit|not in the data")  # fmt: skip
ok("quiet-anywhere", "opt-shared", (*TEST, "--quiet", *OUT))

# ============================================================================ round 3 (issue 32)
# Files the user names besides the scores; what the tools that wrote a file do; notes that
# reach every command; float noise in paired tests; options checked before any work in the
# CLI's words; names shown as written on any terminal; saved fits of a newer version.
SEL = {**T, "sel.txt": "chal_a\n"}
FITC = ("fit", TA, "-c", "base", "--draws", "200", "--chains", "2")
for slug, flag in (("challengers", "-C"), ("artifacts", "-a"), ("exclude", "--exclude")):
    chal = () if flag == "-C" else ("-C", "chal_b")
    err(
        f"side-{slug}-file-is-output",
        "side-files",
        (*FITC, *chal, flag, "@{d}/sel.csv", "-o", "{d}/sel.csv"),
        r"sel\.csv.*input",
        {**T, "sel.csv": "chal_a\n"},
    )
err(
    "side-selector-bare-path-is-output",
    "side-files",
    (*FITC, "-C", "{d}/sel.csv", "-o", "{d}/sel.csv"),
    r"sel\.csv.*input",
    {**T, "sel.csv": "chal_a\n"},
)
err(
    "side-selector-fifo",
    "side-files",
    (*FITC, "-C", "@{d}/pipe.txt"),
    r"pipe\.txt.*FIFO",
    {**T, "pipe.txt": FIFO},
    subprocess=True,
    timeout=60,
)
err(
    "side-selector-dev-zero",
    "side-files",
    (*FITC, "-C", "@/dev/zero"),
    r"/dev/zero.*(device|regular)",
    subprocess=True,
    memory_limit=True,
    timeout=60,
)
err(
    "side-selector-symlink-to-fifo",
    "side-files",
    (*FITC, "-C", "@{d}/sel.txt"),
    r"sel\.txt.*FIFO",
    {**T, "pipe": FIFO, "sel.txt": Link("{d}/pipe")},
    subprocess=True,
    timeout=60,
)
err(
    "side-selector-broken-symlink",
    "side-files",
    (*FITC, "-C", "@{d}/link.txt"),
    r"error: \S*link\.txt: (is a broken|.*not found)",
    {**T, "link.txt": Link("{d}/gone.txt")},
)
err(
    "side-selector-folder",
    "side-files",
    (*FITC, "-C", "@{d}/sub"),
    r"error: \S*sub: is a folder",
    {**T, "sub/": None},
)
err(
    "side-selector-huge",
    "side-files",
    (*FITC, "-C", "@{d}/big.txt"),
    r"big\.txt.*larger than",
    {**T, "big.txt": Sparse(20_000_000)},
)
err(
    "side-selector-unknown-name-names-file-line",
    "side-files",
    (*FITC, "-C", "@{d}/sel.txt"),
    r"sel\.txt:3: challenger 'nope'",
    {**T, "sel.txt": "# mine\nchal_a\nnope\n"},
)
for slug, data in (
    ("bom", "\ufeffchal_a\n".encode()),
    ("bom-crlf", "\ufeffchal_a\r\nchal_b\r\n".encode()),
):
    want = {"chal_a"} if slug == "bom" else {"chal_a", "chal_b"}
    ok(
        f"side-selector-{slug}",
        "side-files",
        (*FITC, "-C", "@{d}/sel.txt", *OUT),
        challengers_are(want),
        {**T, "sel.txt": data},
    )
err(
    "side-selector-utf16",
    "side-files",
    (*FITC, "-C", "@{d}/sel.txt"),
    r"sel\.txt.*UTF-16",
    {**T, "sel.txt": "chal_a\n".encode("utf-16")},
)
err(
    "side-selector-latin1",
    "side-files",
    (*FITC, "-C", "@{d}/sel.txt"),
    r"error: \S*sel\.txt:2: not UTF-8",
    {**T, "sel.txt": "chal_a\ncafé\n".encode("latin-1")},
)
err(
    "side-config-fifo",
    "side-files",
    ("meta", "{d}/cfg.yaml"),
    r"cfg\.yaml.*FIFO",
    {**MF, "cfg.yaml": FIFO},
    subprocess=True,
    timeout=60,
)
err(
    "side-config-symlink-to-dev-zero",
    "side-files",
    ("meta", "{d}/cfg.yaml"),
    r"cfg\.yaml.*device",
    {**MF, "cfg.yaml": Link("/dev/zero")},
    subprocess=True,
    memory_limit=True,
    timeout=60,
)
err(
    "side-config-huge",
    "side-files",
    ("meta", "{d}/cfg.yaml"),
    r"cfg\.yaml.*larger than",
    {**MF, "cfg.yaml": Sparse(20_000_000)},
)
err(
    "side-config-utf16",
    "side-files",
    ("meta", "{d}/cfg.yaml"),
    r"cfg\.yaml:1: UTF-16",
    {**MF, "cfg.yaml": META_OK.encode("utf-16")},
)
err(
    "side-scores-larger-than-memory-limit",
    "side-files",
    ("inspect", "{d}/big.csv"),
    r"big\.csv.*memory limit",
    {"big.csv": Sparse(40_000_000)},
    subprocess=True,
    env={"BAYES_IR_MEMORY_LIMIT": "10000000"},
    timeout=60,
)
err(
    "side-fit-fifo",
    "side-files",
    ("decide", TA, "-c", "base", "-C", "chal_*", "--fit", "{d}/fit.nc"),
    r"--fit \S*fit\.nc: is a FIFO",
    {**T, "fit.nc": FIFO},
)


def run_orders(tag: str, orders: dict[str, list[str]]) -> str:
    """A run whose ranking differs per topic (``orders``: topic -> documents, best first)."""
    return "".join(
        f"{t} Q0 {d} {r} {10 - r}.5 {tag}\n"
        for t, order in orders.items()
        for r, d in enumerate(order, 1)
    )


META_RUNS = {
    "runs/c1/bm25.run": run_orders(
        "bm25", {"1": ["d1", "d2"], "2": ["d3", "d2"], "3": ["d2", "d1"]}
    ),
    "runs/c1/dense.run": run_orders(
        "dense", {"1": ["d2", "d1"], "2": ["d2", "d3"], "3": ["d1", "d2"]}
    ),
    "runs/c2/bm25.run": run_orders(
        "bm25", {"1": ["d3", "d1"], "2": ["d2", "d1"], "3": ["d4", "d1"]}
    ),
    "runs/c2/dense.run": run_orders(
        "dense", {"1": ["d1", "d3"], "2": ["d1", "d2"], "3": ["d1", "d4"]}
    ),
    "c1.csv": qrels(),
    "c2.csv": qrels(),
    "cfg.yaml": "control: bm25\ntreatment: dense\nmeasure: RR\ncollections:\n"
    "  c1: {qrels: c1.csv, runs: {bm25: runs/c1/bm25.run, dense: runs/c1/dense.run}}\n"
    "  c2: {qrels: c2.csv, runs: {bm25: runs/c2/bm25.run, dense: runs/c2/dense.run}}\n",
}
err(
    "side-meta-output-is-qrels",
    "side-files",
    ("meta", "{d}/cfg.yaml", "-o", "{d}/c1.csv"),
    r"c1\.csv.*input",
    META_RUNS,
)
FOLDER_FIT = ("{d}/runs", "--qrels", "{d}/qrels.txt", "-m", "P@5")
err(
    "side-output-inside-input-folder",
    "side-files",
    ("inspect", *FOLDER_FIT, "-o", "{d}/runs/out.csv"),
    r"out\.csv.*inside the input folder",
    FOLDER,
)
err(
    "side-figures-into-input-folder",
    "side-files",
    ("fit", *FOLDER_FIT, "-c", "sysA", "-C", "sysB", "--draws", "200", "--figures", "{d}/runs"),
    r"--figures.*inside the input folder",
    FOLDER,
)

# --- file names written by macOS (decomposed, NFD) and typed composed (NFC)
CAFE_NFC, CAFE_NFD = "café", "cafe\u0301"
ok(
    "nfd-score-file-name",
    "side-files",
    ("inspect", f"{{d}}/{CAFE_NFC}.csv", *OUT),
    inspect_means(MEANS),
    {f"{CAFE_NFD}.csv": tidy()},
)
ok(
    "nfd-selector-file-name",
    "side-files",
    (*FITC, "-C", f"@{{d}}/{CAFE_NFC}.txt", *OUT),
    challengers_are({"chal_a"}),
    {**T, f"{CAFE_NFD}.txt": "chal_a\n"},
)
ok(
    "nfd-config-file-name",
    "side-files",
    ("meta", f"{{d}}/{CAFE_NFC}.yaml", "--method", "FE", *OUT),
    meta_check,
    {**MF, f"{CAFE_NFD}.yaml": META_OK},
)
ok(
    "nfd-champion-name",
    "side-files",
    ("fit", TA, "-c", CAFE_NFC, "-C", "chal_*", "--draws", "200", "--chains", "2", *OUT),
    challengers_are({"chal_a", "chal_b"}),
    {"t.csv": tidy(systems=(CAFE_NFD, *SYSTEMS[1:]))},
)


# ============================================================================ tool exports
def pandas_wide(index: str) -> str:
    """A wide frame as pandas' default ``to_csv()`` writes it (the index kept)."""
    import pandas as pd

    frame = pd.DataFrame(MW, columns=list(W3))
    if index == "topics":
        frame.index = [int(t) for t in topics()]
    elif index == "reset":
        frame.insert(0, "topic", topics())
    text = frame.to_csv()
    if index == "reread":  # read back without index_col and written again: "Unnamed: 0"
        text = pd.read_csv(io.StringIO(text)).to_csv(index=False)
    return text


WIDE_MEANS = means_of(W3, MW)
for slug in ("range", "reread", "reset", "topics"):
    ok(
        f"pandas-wide-index-{slug}",
        "tool-exports",
        ("inspect", "{d}/w.csv", *OUT),
        inspect_means(WIDE_MEANS),
        {"w.csv": pandas_wide(slug)},
    )
ok(
    "pandas-wide-index-fit-artifacts",
    "tool-exports",
    ("fit", "{d}/w.csv", "-c", "base", "-C", "chal_a", "--draws", "200", "--chains", "2"),
    stdout_has("1 artifact run(s)"),
    {"w.csv": pandas_wide("range")},
)
err(
    "wide-unnamed-column-with-values",
    "tool-exports",
    ("inspect", "{d}/w.csv"),
    r"w\.csv:1: column 3 has no name",
    {"w.csv": "topic,base,,chal_b\n1,0.1,0.2,0.3\n2,0.2,0.3,0.1\n"},
)


def excel(text: str, *, sep_line: bool = False, decimal_comma: bool = True) -> bytes:
    """``text`` (a CSV) as Excel writes it where the decimal mark is a comma."""
    out = []
    for line in text.splitlines():
        cells = line.split(",")
        if decimal_comma:
            cells = [c.replace(".", ",") if c.replace(".", "", 1).isdigit() else c for c in cells]
        out.append(";".join(cells))
    body = "\r\n".join(out) + "\r\n"
    return (("sep=;\r\n" if sep_line else "") + body).encode()


ok(
    "excel-tidy-semicolon-decimal-comma",
    "tool-exports",
    INSPECT,
    inspect_means(MEANS),
    {"t.csv": excel(tidy())},
)
ok(
    "excel-tidy-semicolon-points",
    "tool-exports",
    INSPECT,
    inspect_means(MEANS),
    {"t.csv": excel(tidy(), decimal_comma=False)},
)
ok(
    "excel-tidy-sep-line",
    "tool-exports",
    INSPECT,
    inspect_means(MEANS),
    {"t.csv": excel(tidy(), sep_line=True)},
)
ok(
    "excel-wide-semicolon-decimal-comma",
    "tool-exports",
    ("inspect", "{d}/w.csv", *OUT),
    inspect_means(WIDE_MEANS),
    {"w.csv": excel(wide(W3, MW))},
)
err(
    "excel-utf16-without-bom",
    "tool-exports",
    ("inspect", TA),
    r"t\.csv.*UTF-16",
    {"t.csv": tidy().encode("utf-16-le")},
)
for slug, name, text in (
    ("tidy", "t.csv", tidy()),
    ("wide", "w.csv", wide(W3, MW)),
):
    ok(
        f"cr-only-{slug}",
        "tool-exports",
        ("inspect", f"{{d}}/{name}", *OUT),
        inspect_means(MEANS if slug == "tidy" else WIDE_MEANS),
        {name: text.replace("\n", "\r")},
    )

ANSERINI = {
    "runs/run.msmarco.bm25.txt": run("Anserini", ["d1", "d2", "d3", "d4", "d5"]),
    "runs/run.msmarco.dense.txt": run("Anserini", ["d5", "d4", "d3", "d2", "d1"]),
    "qrels.txt": qrels(),
}
ANS_ARGS = (
    "{d}/runs/run.msmarco.bm25.txt",
    "{d}/runs/run.msmarco.dense.txt",
    "--qrels",
    "{d}/qrels.txt",
    "-m",
    "P@5",
)
ANS_MEANS = {"bm25": P5["sysA"], "dense": P5["sysB"]}
ok(
    "anserini-tag-on-every-run",
    "tool-exports",
    ("inspect", *ANS_ARGS, *OUT),
    both(inspect_means(ANS_MEANS), stdout_has("Anserini")),
    ANSERINI,
)
ok(
    "anserini-runs-folder",
    "tool-exports",
    ("inspect", "{d}/runs", "--qrels", "{d}/qrels.txt", "-m", "P@5", *OUT),
    inspect_means(ANS_MEANS),
    ANSERINI,
)
ok(
    "pyterrier-tag-on-every-run",
    "tool-exports",
    ("inspect", "{d}/bm25.res", "{d}/dense.res", "--qrels", "{d}/qrels.txt", "-m", "P_5", *OUT),
    inspect_means(ANS_MEANS),
    {
        "bm25.res": ANSERINI["runs/run.msmarco.bm25.txt"].replace("Anserini", "pyterrier"),
        "dense.res": ANSERINI["runs/run.msmarco.dense.txt"].replace("Anserini", "pyterrier"),
        "qrels.txt": qrels(),
    },
)
for measure in ("P@0", "ndcg_cut_0", "nDCG@0"):
    err(
        f"measure-cutoff-zero-{measure}",
        "tool-exports",
        ("inspect", *RUNA, "-m", measure),
        r"cut-off.*at least 1",
        RUNS,
        subprocess=True,
        timeout=60,
    )


def all_trec(system: str, column) -> str:
    """``trec_eval -q -m all_trec`` output: string-valued ``relstring`` lines among the scores."""
    lines = []
    for t, v in zip(topics(len(column)), column, strict=True):
        lines += [f"num_ret\t{t}\t1000", f"relstring\t{t}\tRRNRN", f"map\t{t}\t{_num(v)}"]
    return "\n".join([*lines, f"runid\tall\t{system}", "relstring\tall\tRRNRN"]) + "\n"


ok(
    "trec-eval-all-trec-relstring",
    "tool-exports",
    ("inspect", "{d}/base.txt", *OUT),
    inspect_means({"base": MEANS["base"]}),
    {"base.txt": all_trec("base", M[:, 0])},
)
MSMARCO = {
    "bm25.tsv": "".join(
        f"{q}\t{d}\t{r}\n"
        for q in ("1", "2", "3")
        for r, d in enumerate(["d1", "d2", "d3", "d4", "d5"], 1)
    ),
    "dense.tsv": "".join(
        f"{q}\t{d}\t{r}\n"
        for q in ("1", "2", "3")
        for r, d in enumerate(["d5", "d4", "d3", "d2", "d1"], 1)
    ),
    "qrels.txt": qrels(),
}
ok(
    "msmarco-run-format",
    "tool-exports",
    ("inspect", "{d}/bm25.tsv", "{d}/dense.tsv", "--qrels", "{d}/qrels.txt", "-m", "P@5", *OUT),
    inspect_means({"bm25": P5["sysA"], "dense": P5["sysB"]}),
    MSMARCO,
)


def scoreddocs(order: list[str]) -> str:
    """``ir_datasets export DATASET scoreddocs``: ranks from 0, every run tagged ``run``."""
    return "".join(
        f"{q} Q0 {d} {i} {9 - i}.0 run\n" for q in ("1", "2", "3") for i, d in enumerate(order)
    )


ok(
    "ir-datasets-scoreddocs-tag-run",
    "tool-exports",
    ("inspect", "{d}/bm25.run", "{d}/dense.run", "--qrels", "{d}/qrels.txt", "-m", "P@5", *OUT),
    inspect_means({"bm25": P5["sysA"], "dense": P5["sysB"]}),
    {
        "bm25.run": scoreddocs(["d1", "d2", "d3", "d4", "d5"]),
        "dense.run": scoreddocs(["d5", "d4", "d3", "d2", "d1"]),
        "qrels.txt": qrels(),
    },
)
PT_MEANS = "name,map,ndcg_cut_10\nBM25,0.25,0.41\nBM25+RM3,0.28,0.43\nmonoT5,0.31,0.52\n"
for slug, text in (
    ("csv", PT_MEANS),
    (
        "to-csv-index",
        ","
        + PT_MEANS.replace("\n", "\n0,", 1)
        .replace("\nBM25+", "\n1,BM25+")
        .replace("\nmonoT5", "\n2,monoT5"),
    ),
):
    err(
        f"pyterrier-experiment-means-only-{slug}",
        "tool-exports",
        ("inspect", "{d}/pt.csv"),
        r"pt\.csv: the columns are measures \(map, ndcg_cut_10\).*perquery=True",
        {"pt.csv": text},
    )
META_SYS = META_SCORES.replace(",bm25,", ",010,").replace(",dense,", ",no,")
for slug, config in (
    ("octal-name", META_OK.replace("bm25", "010").replace("dense", "no")),
    ("float-name", META_OK.replace("bm25", "1.10")),
):
    data = META_SYS if slug == "octal-name" else META_SCORES.replace(",bm25,", ",1.10,")
    ok(
        f"yaml11-{slug}",
        "tool-exports",
        (*META, "--method", "FE", *OUT),
        lambda ctx: None,
        {"scores.csv": data, "cfg.yaml": config},
    )
err(
    "yaml11-unknown-name-names-config",
    "tool-exports",
    META,
    r"cfg\.yaml:1: control '010'",
    {**MF, "cfg.yaml": META_OK.replace("bm25", "010")},
)
err(
    "yaml-duplicate-key",
    "tool-exports",
    META,
    r"cfg\.yaml:5: key 'control' appears twice",
    {**MF, "cfg.yaml": META_OK + "control: dense\n"},
)
err(
    "yaml-duplicate-collection",
    "tool-exports",
    ("meta", "{d}/cfg.yaml"),
    r"cfg\.yaml:\d+: key 'c1' appears twice",
    {
        **META_RUNS,
        "cfg.yaml": META_RUNS["cfg.yaml"]
        + "  c1: {qrels: c2.csv, runs: {bm25: runs/c2/bm25.run, dense: runs/c2/dense.run}}\n",
    },
)
err(
    "yaml-deeply-nested",
    "tool-exports",
    META,
    r"cfg\.yaml.*nested",
    {**MF, "cfg.yaml": "control: " + "[" * 20000 + "]" * 20000 + "\n"},
)
err(
    "yaml-alias-bomb",
    "tool-exports",
    META,
    r"cfg\.yaml.*entries",
    {
        **MF,
        "cfg.yaml": "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{k}: &{k} [{', '.join(['*' + p] * 10)}]\n"
            for p, k in zip("abcdef", "bcdefg", strict=True)
        ),
    },
)


# ============================================================================ notes
T6 = tuple(str(t) for t in range(1, 7))
REL6 = (
    {t: {DOCS6[(int(t) * k) % 6] for k in (1, 3)} for t in T6}
    if (DOCS6 := ["d1", "d2", "d3", "d4", "d5", "d6"])
    else {}
)
NOTE_RUNS = {
    "a.run": run("sysA", ["d1", "d2", "d3", "d4", "d5", "d6"], topic_ids=T6),
    "b.run": run("sysB", ["d6", "d5", "d4", "d3", "d2", "d1"], topic_ids=T6[:-1]),
    "c.run": run("sysC", ["d2", "d4", "d6", "d1", "d3", "d5"], topic_ids=T6),
    "qrels.txt": qrels(REL6, T6),
}
NOTE_ARGS = ("{d}/a.run", "{d}/b.run", "{d}/c.run", "--qrels", "{d}/qrels.txt", "-m", "P@5")
SCORED_0 = stdout_has("did not retrieve 1 judged query (6)", "scored 0")
for command, extra in (
    ("test", ("-c", "sysA", "-C", "sysB")),
    ("decide", ("-c", "sysA", "-C", "sysB", "--draws", "200", "--chains", "2", "--topics", "0")),
    ("risk", ("-c", "sysA", "-C", "sysB", "--no-bayes", "--resamples", "200")),
    ("glm", ("--links", "identity")),
    ("reliability", ()),
):
    ok(f"notes-scored-0-{command}", "notes", (command, *NOTE_ARGS, *extra), SCORED_0, NOTE_RUNS)
ok(
    "notes-scored-0-review",
    "notes",
    (
        "review",
        *NOTE_ARGS,
        "-c",
        "sysA",
        "-C",
        "sysB",
        "--draws",
        "200",
        "--chains",
        "2",
        "--resamples",
        "200",
        "--r",
        "5",
        "-o",
        "{o}/r.html",
    ),
    both(SCORED_0, file_has("r.html", "scored 0", "qrels.txt (SHA-256")),
    NOTE_RUNS,
    slow=True,
)
ok(
    "notes-review-hashes-selector-file",
    "notes",
    (
        "review",
        TA,
        "-c",
        "base",
        "-C",
        "@{d}/sel.txt",
        "--draws",
        "200",
        "--chains",
        "2",
        "--resamples",
        "200",
        "--r",
        "5",
        "-o",
        "{o}/r.html",
    ),
    file_has("r.html", "sel.txt (SHA-256"),
    SEL,
    slow=True,
)
MIXED = {
    **RUNS,
    "a.run": run("sysA", ["d1", "d2"], topic_ids=("1", "2", "3"))
    + run("sysX", ["d2", "d1"], topic_ids=("1", "2", "3")),
}
ok(
    "notes-run-tags-split-test",
    "notes",
    ("test", *RUNA, "-m", "P@5", "-c", "sysA", "-C", "sysB"),
    stdout_has("run tag 'sysX'"),
    MIXED,
)
ok(
    "notes-unjudged-topics-test",
    "notes",
    ("test", *RUNA, "-m", "P@5", "-c", "sysA", "-C", "sysB"),
    stdout_has("no judgments"),
    {**RUNS, "qrels.txt": qrels(topic_ids=("1", "2"))},
)
EMPTY_COL = "topic,base,chal_a,ghost\n" + "".join(
    f"{t},{_num(MW[i, 0])},{_num(MW[i, 1])},\n" for i, t in enumerate(topics())
)
for command, extra in (("inspect", ()), ("test", ("-c", "base", "-C", "chal_a"))):
    ok(
        f"notes-all-empty-column-{command}",
        "notes",
        (command, "{d}/w.csv", *extra),
        stdout_has("'ghost' hold no score"),
        {"w.csv": EMPTY_COL},
    )


def notes_of(make):
    """An API case: the result object ``make(table)`` carries the table's notes."""

    def call(ctx):
        from bayes_ir.readers import read_scores

        table = read_scores(
            [ctx.d / "a.run", ctx.d / "b.run", ctx.d / "c.run"],
            qrels=ctx.d / "qrels.txt",
            measure="P@5",
        ).with_roles(champion="sysA", challengers=["sysB"])
        return table, make(table)

    return call


def carries_notes(value) -> None:
    table, result = value
    assert any("scored 0" in n for n in table.notes), table.notes
    assert tuple(result.notes) == tuple(table.notes), (result.notes, table.notes)


for slug, make in (
    ("paired-tests", lambda t: bayes_ir.paired_tests(t, test="t")),
    ("risk-review", lambda t: bayes_ir.risk_review(t, bayes=False, n_resamples=200)),
    ("glm", lambda t: bayes_ir.compare_links(t, links=["identity"])),
    ("fit", lambda t: bayes_ir.fit(t, draws=100, chains=1)),
    ("decide", lambda t: bayes_ir.decide(bayes_ir.fit(t, draws=100, chains=1), topics=())),
):
    add(
        id=f"notes-api-{slug}",
        cls="notes",
        kind="api",
        expect="ok",
        call=notes_of(make),
        check=carries_notes,
        files=NOTE_RUNS,
    )


# ============================================================================ float noise
def noisy_pairs():
    """Champion and challenger scores whose decimal differences tie or are zero, but whose
    float differences do not: 0.3 - 0.1 is 0.19999999999999998, 0.7 - 0.5 is
    0.19999999999999996, and 0.1 + 0.2 (0.30000000000000004) minus 0.3 is not 0."""
    champion = [0.1, 0.5, 0.3, 0.1 + 0.2, 0.4, 0.2, 0.6, 0.25, 0.45, 0.35, 0.15, 0.55]
    challenger = [0.3, 0.7, 0.5, 0.3, 0.3, 0.1, 0.7, 0.35, 0.55, 0.25, 0.35, 0.75]
    return np.array(champion), np.array(challenger)


def noisy_table() -> str:
    h, c = noisy_pairs()
    return tidy(
        systems=("base", "chal_a"),
        values=np.column_stack([h, c]),
        topic_ids=[str(i + 1) for i in range(len(h))],
    )


def paired_p_values(ctx) -> None:
    """Wilcoxon and sign p-values equal scipy's on the differences as decimals."""
    from scipy import stats

    h, c = noisy_pairs()
    exact = np.round(c - h, 9)  # the decimal differences
    rows = {r["test"]: r for r in read_csv_rows(ctx.out / "out.csv")}
    want = stats.wilcoxon(exact).pvalue
    assert abs(float(rows["wilcoxon"]["p_value"]) - want) < 1e-12, (rows["wilcoxon"], want)
    wins, losses = int((exact > 0).sum()), int((exact < 0).sum())
    want = stats.binomtest(wins, wins + losses, 0.5).pvalue
    assert abs(float(rows["sign"]["p_value"]) - want) < 1e-12, (rows["sign"], want)


ok(
    "float-noise-wilcoxon-sign-cli",
    "float-noise",
    ("test", TA, "-c", "base", "-C", "chal_a", "--test", "wilcoxon,sign", *OUT),
    paired_p_values,
    {"t.csv": noisy_table()},
)


def same_p_values_noisy_and_clean(ctx):
    h, c = noisy_pairs()
    frames = []
    for challenger in (c, h + np.round(c - h, 9)):  # the same differences, other rounding
        table = bayes_ir.ScoreTable.from_matrix(
            np.column_stack([h, challenger]), systems=["base", "chal_a"], measure="AP"
        ).with_roles(champion="base", challengers=["chal_a"])
        frames.append(bayes_ir.paired_tests(table, test=["wilcoxon", "sign", "t"]).to_frame())
    return frames


def equal_p_values(frames) -> None:
    noisy, clean = (f.set_index("test")["p_value"] for f in frames)
    assert noisy.loc[["wilcoxon", "sign"]].equals(clean.loc[["wilcoxon", "sign"]]), (noisy, clean)


add(
    id="float-noise-wilcoxon-api",
    cls="float-noise",
    kind="api",
    expect="ok",
    call=same_p_values_noisy_and_clean,
    check=equal_p_values,
)


# ============================================================================ opt-early
ZERO = np.column_stack([M[:, 0], np.zeros(N), M[:, 2:]])
err(
    "margin-wider-than-range-non-inferiority",
    "opt-early",
    (
        "decide",
        TA,
        "-c",
        "base",
        "-C",
        "chal_a",
        "--non-inferiority",
        "--margin",
        "1.5",
        "--draws",
        "2000",
        "--chains",
        "2",
        "--topics",
        "0",
        "--gate",
    ),
    r"--margin 1\.5.*range",
    {"t.csv": tidy(values=ZERO)},
)
for option, value, match in (
    ("--threshold", "2", r"--threshold 2.*range"),
    ("--margin", "0", r"--threshold"),
    ("--p-min", "0.3", r"--p-min"),
    ("--r", "1e308", r"--r\b"),
):
    err(
        f"decide-{option.strip('-')}-{value}",
        "opt-early",
        (
            "decide",
            TA,
            "-c",
            "base",
            "-C",
            "chal_*",
            "--draws",
            "200",
            "--topics",
            "0",
            option,
            value,
        ),
        match,
    )
err(
    "fit-min-gain-wider-than-range",
    "opt-early",
    (*FIT, "--min-gain", "1.5"),
    r"--min-gain 1\.5.*range",
)
REVIEW = ("review", TA, "-c", "base", "-C", "chal_*", "--draws", "200", "-o", "{o}/r.html")
err("review-min-gain-0", "opt-early", (*REVIEW, "--min-gain", "0"), r"--min-gain")
err(
    "review-min-gain-wider-than-range",
    "opt-early",
    (*REVIEW, "--min-gain", "2"),
    r"--min-gain 2.*range",
)
err(
    "review-resamples-99",
    "opt-early",
    (*REVIEW, "--resamples", "99"),
    r"--resamples",
    slow=True,
    timeout=600,
)
err("review-r-huge", "opt-early", (*REVIEW, "--r", "1e308"), r"--r\b", slow=True, timeout=600)
err("risk-r-huge", "opt-early", (*RISK, "--r", "1e308"), r"--r\b")
for command in ("risk", "test"):
    head = RISK if command == "risk" else ("test", TA, "-c", "base", "-C", "chal_*")
    err(
        f"{command}-resamples-1000000000",
        "opt-early",
        (*head, "--resamples", "1000000000"),
        r"--resamples",
        subprocess=True,
        memory_limit=True,
        timeout=120,
    )
err(
    "test-resamples-5",
    "opt-early",
    ("test", TA, "-c", "base", "-C", "chal_*", "--resamples", "5"),
    r"--resamples",
)
ok("glm-duplicate-links", "opt-early", ("glm", TA, "--links", "identity,identity", *OUT))
ok(
    "glm-duplicate-links-spelled-twice",
    "opt-early",
    ("glm", TA, "--links", "logit", "--links", "logit,identity", *OUT),
)

# ============================================================================ names on the terminal
ESC = "a\x1b[31mred"


def shown_escaped(*names: str):
    """Check that stdout shows each name with its control characters as escapes."""

    def check(ctx) -> None:
        for name in names:
            shown = name.encode("unicode_escape").decode("ascii").replace("\\\\", "\\")
            assert shown in ctx.stdout, f"{shown!r} not in:\n{ctx.stdout}"
        assert "\x1b" not in ctx.stdout + ctx.stderr, "a raw escape reached the terminal"

    return check


ok(
    "name-emoji-code-terminal",
    "names",
    ("inspect", TA, *OUT),
    both(stdout_has(":rocket:"), inspect_means(names_means(":rocket:"))),
    names_table(":rocket:"),
)
ok(
    "name-emoji-code-fit",
    "names",
    ("fit", TA, "-c", "base", "-C", ":rocket:", "--draws", "200", "--chains", "2"),
    stdout_has(":rocket:"),
    names_table(":rocket:"),
)
err("name-emoji-code-in-error", "names", ("fit", TA, "-c", ":tada:", "-C", "chal_*"), r"':tada:'")
for slug, name in (
    ("ansi", ESC),
    ("bell", "a\x07b"),
    ("carriage-return", "x\ry"),
    ("bidi-override", "\u202eabc"),
):
    ok(
        f"name-control-{slug}-terminal",
        "names",
        ("inspect", TA),
        shown_escaped(name),
        {"t.csv": names_table(name)["t.csv"].replace(name, f'"{name}"')},  # a quoted field
    )
ok(
    "name-ansi-fit",
    "names",
    ("fit", TA, "-c", "base", "-C", "re:^a", "--draws", "200", "--chains", "2"),
    shown_escaped(ESC),
    names_table(ESC),
)
ok(
    "name-markup-measure-rule",
    "names",
    ("test", TA, "-c", "base", "-C", "chal_a", "-m", "[b]m", "-m", "AP"),
    stdout_has("measure [b]m"),
    {"t.csv": tidy() + tidy(measure="[b]m").split("\n", 1)[1]},
)
ASCII = {"PYTHONIOENCODING": "ascii"}
ok(
    "ascii-terminal-inspect",
    "names",
    ("inspect", TA),
    stdout_has("syst\\xe8me"),
    names_table("système"),
    subprocess=True,
    env=ASCII,
    timeout=60,
)
ok(
    "ascii-terminal-glm",
    "names",
    ("glm", TA, "--links", "identity,logit"),
    stdout_has("link"),
    subprocess=True,
    env=ASCII,
    timeout=120,
)
ok(
    "ascii-terminal-fit",
    "names",
    ("fit", TA, "-c", "système", "-C", "chal_*", "--draws", "200", "--chains", "2"),
    stdout_has("syst\\xe8me"),
    {"t.csv": tidy(systems=("système", *SYSTEMS[1:]))},
    subprocess=True,
    env=ASCII,
    timeout=120,
)
ok(
    "latin1-terminal-emoji-name",
    "names",
    ("inspect", TA),
    stdout_has("\\U0001f680run"),
    names_table("🚀run"),
    subprocess=True,
    env={"PYTHONIOENCODING": "latin-1"},
    timeout=60,
)


# ============================================================================ api round 3
def saved_fit_with(**attrs):
    """Save the session's fit, then overwrite root attributes as another version would."""

    def call(ctx):
        import h5py

        from bayes_ir.hierarchical import HierarchicalFit

        path = ctx.fit().save(ctx.out / "fit.nc")
        with h5py.File(path, "r+") as handle:
            for key, value in attrs.items():
                handle.attrs[key] = value
        return HierarchicalFit.load(path)

    return call


api(
    "fit-load-future-format",
    "saved-fit",
    saved_fit_with(bayes_ir_format="bayes_ir.HierarchicalFit/3"),
    BayesIRError,
    r"fit\.nc.*newer bayes_ir",
)
api(
    "fit-load-unknown-likelihood",
    "saved-fit",
    saved_fit_with(likelihood="student_t"),
    BayesIRError,
    r"fit\.nc.*likelihood 'student_t'",
)
api(
    "fit-load-unknown-method",
    "saved-fit",
    saved_fit_with(method="advi"),
    BayesIRError,
    r"fit\.nc.*method 'advi'",
)
api(
    "fit-load-fifo",
    "saved-fit",
    load_fit("fit.nc"),
    BayesIRError,
    r"fit\.nc.*FIFO",
    {"fit.nc": FIFO},
)
api(
    "api-write-table-none",
    "api",
    lambda ctx: bayes_ir.report.write_table(None, ctx.out / "x.csv"),
    OptionError,
    r"DataFrame",
)
api(
    "api-write-table-path-none",
    "api",
    lambda ctx: bayes_ir.report.write_table(ctx.table().to_frame(), None),
    OptionError,
    r"file name",
)
api(
    "api-compare-min-gain-wider-than-range",
    "api",
    lambda ctx: bayes_ir.compare(ctx.fit(), min_gain=1.5),
    OptionError,
    r"min_gain.*range",
)
api(
    "api-decide-margin-wider-than-range",
    "api",
    lambda ctx: bayes_ir.decide(ctx.fit(), margin=1.5, mode="non_inferiority", topics=()),
    OptionError,
    r"margin.*range",
)
api(
    "api-paired-resamples-huge",
    "api",
    lambda ctx: bayes_ir.paired_tests(ctx.table(), n_resamples=10**12),
    OptionError,
    r"n_resamples",
)
api(
    "api-bca-resamples-huge",
    "api",
    lambda ctx: bayes_ir.bca_urisk(ctx.table(), n_resamples=10**12),
    OptionError,
    r"n_resamples",
)
api(
    "api-urisk-r-huge",
    "api",
    lambda ctx: bayes_ir.urisk(ctx.table(), r=1e308),
    OptionError,
    r"\br\b",
)
api(
    "api-parse-measure-cutoff-zero",
    "api",
    lambda ctx: bayes_ir.measures.parse_measure("P@0"),
    MeasureError,
    r"P@0.*cut-off",
)
api(
    "api-read-meta-config-duplicate-key",
    "api",
    lambda ctx: bayes_ir.read_meta_config(ctx.d / "cfg.yaml"),
    ScoreTableError,
    r"cfg\.yaml:5: key 'control' appears twice",
    {"cfg.yaml": META_OK + "control: x\n"},
)


# ============================================================================ LLM logs (merge of
# issue 31's readers into round 3): the files of lm-evaluation-harness, Inspect, HELM and
# SWE-bench get the checks every score file gets, their JSON is read as what a hostile or
# broken tool writes (wrong types, deep nesting, huge numbers), errors name the file (and
# line) of the row at fault, and the reader options have their CLI words.
def lm_line(doc, metrics=("acc",), **values) -> str:
    """One ``--log_samples`` line of lm-evaluation-harness 0.4."""
    row = {"doc_id": doc, "doc": {}, "target": "A", "arguments": {}, "resps": [],
           "filtered_resps": [], "filter": "none", "metrics": list(metrics)}  # fmt: skip
    return json.dumps(row | values) + "\n"


LM_A, LM_B = [1, 0, 1, 1, 0, 1, 0, 1], [0, 0, 1, 0, 1, 1, 1, 1]
LM_NAME = "samples_arc_2024-05-13T14-32-10.123456.jsonl"
LM = {
    f"a/{LM_NAME}": "".join(lm_line(i, acc=v) for i, v in enumerate(LM_A)),
    f"b/{LM_NAME}": "".join(lm_line(i, acc=v) for i, v in enumerate(LM_B)),
}
LM_ARGS = (f"{{d}}/a/{LM_NAME}", f"{{d}}/b/{LM_NAME}")
LM_MEANS = {"a": float(np.mean(LM_A)), "b": float(np.mean(LM_B))}


def lm_with(text: str) -> dict:
    """The two models' sample files, model a's replaced by ``text``."""
    return {**LM, f"a/{LM_NAME}": text}


ok("llm-lm-eval-valid", "llm-logs", ("inspect", *LM_ARGS, *OUT), inspect_means(LM_MEANS), LM)
ok(
    "llm-lm-eval-bom-crlf",
    "llm-logs",
    ("inspect", *LM_ARGS, *OUT),
    inspect_means(LM_MEANS),
    lm_with(("\ufeff" + LM[f"a/{LM_NAME}"]).replace("\n", "\r\n")),
)
err(
    "llm-lm-eval-utf16",
    "llm-logs",
    ("inspect", "-f", "lm_eval", *LM_ARGS),
    r"a/samples_arc\S*:1: UTF-16",
    lm_with(LM[f"a/{LM_NAME}"].encode("utf-16")),
)
err(
    "llm-lm-eval-fifo",
    "llm-logs",
    ("inspect", "-f", "lm_eval", *LM_ARGS),
    r"a/samples_arc\S*: is a FIFO",
    lm_with(FIFO),
    timeout=60,
)
err(
    "llm-lm-eval-dev-zero",
    "llm-logs",
    ("inspect", "-f", "lm_eval", *LM_ARGS),
    r"a/samples_arc\S*: is a character device",
    lm_with(Link("/dev/zero")),
    subprocess=True,
    memory_limit=True,
    timeout=60,
)
err(
    "llm-lm-eval-folder",
    "llm-logs",
    ("inspect", "-f", "lm_eval", *LM_ARGS),
    r"a/samples_arc\S*: .*folder",
    {f"b/{LM_NAME}": LM[f"b/{LM_NAME}"], f"a/{LM_NAME}/": None},
)
for slug, line, match in (
    ("metrics-not-names", lm_line(8, metrics=[["acc"]], acc=1),
     r":9: the 'metrics' list .*\['acc'\]"),
    ("metrics-objects", lm_line(8, metrics=[{"a": 1}], acc=1), r":9: the 'metrics' list"),
    ("filter-not-a-name", lm_line(8, filter=["x"], acc=1), r":9: filter \['x'\]"),
    ("doc-id-boolean", lm_line(True, acc=1), r":9: doc_id True is not a document id"),
    ("doc-id-object", lm_line({"i": 8}, acc=1), r":9: doc_id \{'i': 8\} is not"),
    ("huge-integer", lm_line(8, acc=10**400),
     r":9: metric 'acc' of doc_id 8 is 1000.*\.\.\., not a"),
    ("integer-too-long", '{"doc_id": 8, "acc": ' + "1" * 5000 + "}\n",
     r":9: not a JSON line.*digits"),
    ("deep-nesting", '{"doc_id": 8, "doc": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
     r":9: not a JSON line: nested deeper"),
):  # fmt: skip
    err(f"llm-lm-eval-{slug}", "llm-logs", ("inspect", *LM_ARGS), match,
        lm_with(LM[f"a/{LM_NAME}"] + line))  # fmt: skip
LM_AGAIN = LM_NAME.replace("13T14", "14T09")  # the same model and task run again a day later
err(
    "llm-lm-eval-model-run-twice-names-both-files",
    "llm-logs",
    ("inspect", *LM_ARGS, f"{{d}}/a/{LM_AGAIN}"),
    rf"a/{re.escape(LM_NAME)}:1: duplicate score for system 'a', topic '0'.*again at "
    rf"\S*a/{re.escape(LM_AGAIN)}:1",
    {**LM, f"a/{LM_AGAIN}": LM[f"a/{LM_NAME}"]},
)
err(
    "llm-lm-eval-out-of-range-names-file-line",
    "llm-logs",
    ("inspect", *LM_ARGS),
    rf"b/{re.escape(LM_NAME)}:3: score 5(\.0)? of system 'b'",
    {**LM, f"b/{LM_NAME}": LM[f"b/{LM_NAME}"].replace('"acc": 1}', '"acc": 5}', 1)},
)
LM2 = {
    f"{m}/{LM_NAME}": "".join(
        lm_line(i, metrics=("acc", "acc_norm"), acc=v, acc_norm=1 - v) for i, v in enumerate(vals)
    )
    for m, vals in (("a", LM_A), ("b", LM_B))
}


def means_by_measure(expected: dict[tuple[str, str], float]):
    """Check ``inspect -o {o}/out.csv``: the mean of each (measure, system), to 1e-12."""

    def check(ctx) -> None:
        got = {
            (r["measure"], r["system"]): float(r["mean"])
            for r in read_csv_rows(ctx.out / "out.csv")
        }
        assert set(got) == set(expected), (sorted(got), sorted(expected))
        for key, value in expected.items():
            assert math.isclose(got[key], value, abs_tol=1e-12), (key, got[key], value)

    return check


ok(
    "llm-lm-eval-two-measures-repeated-m",
    "llm-logs",
    ("inspect", *LM_ARGS, "-m", "acc", "-m", "acc_norm", *OUT),
    means_by_measure({("acc", "a"): LM_MEANS["a"], ("acc", "b"): LM_MEANS["b"],
                      ("acc_norm", "a"): 1 - LM_MEANS["a"], ("acc_norm", "b"): 1 - LM_MEANS["b"]}),
    LM2,
)  # fmt: skip
err(
    "llm-lm-eval-two-measures-cli-words",
    "llm-logs",
    ("inspect", *LM_ARGS),
    r"2 measures \(acc, acc_norm\): pick one with --measure \(repeat it for several\)$",
    LM2,
)
PT2 = "name,qid,measure,value\n" + "".join(
    f"{s},{q},{m},{_num(round(0.1 + 0.2 * i + 0.05 * j + 0.01 * k, 4))}\n"
    for i, s in enumerate(("bm25", "dense"))
    for j, q in enumerate(("1", "2", "3"))
    for k, m in enumerate(("map", "ndcg_cut_10"))
)
ok(
    "pyterrier-two-measures-repeated-m",
    "tool-exports",
    ("inspect", "{d}/pt.csv", "-m", "AP", "-m", "nDCG@10", *OUT),
    means_by_measure({("AP", "bm25"): 0.15, ("AP", "dense"): 0.35,
                      ("nDCG@10", "bm25"): 0.16, ("nDCG@10", "dense"): 0.36}),
    {"pt.csv": PT2},
)  # fmt: skip


# --- Inspect AI
def inspect_log(model, values, **extra) -> str:
    """An Inspect eval log (JSON, format version 2), one epoch per sample."""
    log = {"version": 2, "status": "success", "eval": {"task": "gpqa", "model": model},
           "samples": [{"id": i + 1, "epoch": 1, "scores": {"choice": {"value": v}}}
                       for i, v in enumerate(values)]}  # fmt: skip
    return json.dumps(log | extra)


IN_A, IN_B = ["C", "I", "C", "C", "I", "C"], ["I", "I", "C", "C", "C", "P"]
IN = {"a.json": inspect_log("org/a", IN_A), "b.json": inspect_log("org/b", IN_B)}
IN_ARGS = ("{d}/a.json", "{d}/b.json")
GRADE = {"C": 1.0, "P": 0.5, "I": 0.0}
IN_MEANS = {"org/a": np.mean([GRADE[v] for v in IN_A]), "org/b": np.mean([GRADE[v] for v in IN_B])}
ok("llm-inspect-valid", "llm-logs", ("inspect", *IN_ARGS, *OUT), inspect_means(IN_MEANS), IN)
ok(
    "llm-inspect-bom",
    "llm-logs",
    ("inspect", *IN_ARGS, *OUT),
    inspect_means(IN_MEANS),
    {**IN, "a.json": "\ufeff" + IN["a.json"]},
)
HEAD = {"version": 2, "status": "success", "eval": {"task": "t", "model": "org/a"}}
for slug, log, match in (
    ("samples-not-a-list", HEAD | {"samples": {"1": "C"}},
     r"samples is not a list \(got an object\)"),
    ("sample-a-string", HEAD | {"samples": ["C"]}, r"a sample is not an object \(got a string\)"),
    ("eval-field-a-string", HEAD | {"eval": "gpqa", "samples": []},
     r"'eval' field is not an object"),
    ("scores-a-list", HEAD | {"samples": [{"id": 1, "scores": [1]}]},
     r"scores of sample 1 .*not an object"),
    ("reductions-an-object", HEAD | {"reductions": {"choice": 1}}, r"reductions is not a list"),
    ("reduction-a-string", HEAD | {"reductions": ["choice"]}, r"a reduction is not an object"),
    ("reduction-samples-a-string", HEAD | {"reductions": [{"scorer": "c", "samples": "1"}]},
     r"samples of reduction 'c' is not a list"),
    ("reduction-without-scorer", HEAD | {"reductions": [{"samples": []}]}, r"names no scorer"),
    ("sample-without-id", HEAD | {"samples": [{"epoch": 1, "scores": {"c": 1}}]}, r"has no id"),
    ("huge-integer-value", HEAD | {"samples": [{"id": 1, "scores": {"c": {"value": 10**400}}}]},
     r"sample 1 epoch None, scorer 'c': score value 1000.*\.\.\. is not a number"),
    ("no-scored-sample", HEAD | {"samples": []}, r"holds no scored sample"),
):  # fmt: skip
    err(f"llm-inspect-{slug}", "llm-logs", ("inspect", "-f", "inspect", *IN_ARGS),
        r"a\.json: .*" + match, {**IN, "a.json": json.dumps(log)})  # fmt: skip
err(
    "llm-inspect-deep-nesting",
    "llm-logs",
    ("inspect", *IN_ARGS),
    r"a\.json: not valid JSON: nested deeper",
    {**IN, "a.json": IN["a.json"][:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"},
)
ok(
    "llm-inspect-no-model-named-after-file",
    "llm-logs",
    ("inspect", *IN_ARGS, *OUT),
    both(
        stdout_has("a.json: the log names no model (eval.model); named after the file"),
        inspect_means({"a": IN_MEANS["org/a"], "org/b": IN_MEANS["org/b"]}),
    ),
    {**IN, "a.json": inspect_log(None, IN_A)},
)
err(
    "llm-inspect-same-model-twice-names-both-files",
    "llm-logs",
    ("inspect", *IN_ARGS),
    r"a\.json: duplicate score for system 'org/a', topic '1' .*again in \S*b\.json",
    {**IN, "b.json": IN["a.json"]},
)


def eval_archive(header: str | bytes | None, members: dict[str, str | bytes]) -> bytes:
    """An Inspect ``.eval`` archive: ``header.json`` (unless ``None``) and the other members."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        if header is not None:
            archive.writestr("header.json", header)
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def summaries(values) -> str:
    return json.dumps([{"id": i + 1, "epoch": 1, "scores": {"choice": {"value": v}}}
                       for i, v in enumerate(values)])  # fmt: skip


EVAL_HEAD = json.dumps(HEAD | {"eval": {"task": "gpqa", "model": "org/a"}})
EV = {
    "a.eval": eval_archive(EVAL_HEAD, {"summaries.json": summaries(IN_A)}),
    "b.eval": eval_archive(
        EVAL_HEAD.replace("org/a", "org/b"), {"summaries.json": summaries(IN_B)}
    ),
}
EV_ARGS = ("{d}/a.eval", "{d}/b.eval")
ok("llm-inspect-eval-valid", "llm-logs", ("inspect", *EV_ARGS, *OUT), inspect_means(IN_MEANS), EV)
ok(
    "llm-inspect-eval-header-bom",
    "llm-logs",
    ("inspect", *EV_ARGS, *OUT),
    inspect_means(IN_MEANS),
    {**EV, "a.eval": eval_archive("\ufeff" + EVAL_HEAD, {"summaries.json": summaries(IN_A)})},
)
for slug, archive, match in (
    ("header-utf16", eval_archive(EVAL_HEAD.encode("utf-16"), {"summaries.json": "[]"}),
     r"a\.eval: header\.json:1: UTF-16"),
    ("header-a-list", eval_archive("[1]", {}), r"a\.eval: the log's header is not an object"),
    ("summaries-an-object", eval_archive(EVAL_HEAD, {"summaries.json": "{}"}),
     r"a\.eval: the log's samples is not a list"),
    ("no-scored-sample", eval_archive(EVAL_HEAD, {"summaries.json": "[]"}),
     r"a\.eval: the log holds no scored sample"),
    ("sample-member-cut", eval_archive(EVAL_HEAD, {"samples/1_epoch_1.json": '{"id": 1, "sc'}),
     r"a\.eval: samples/1_epoch_1\.json in the archive: not valid JSON \(.* at line 1 column"),
    ("without-header", eval_archive(None, {"summaries.json": summaries(IN_A)}),
     r"a\.eval: an \.eval archive without header\.json"),
):  # fmt: skip
    err(f"llm-inspect-eval-{slug}", "llm-logs", ("inspect", "-f", "inspect", *EV_ARGS), match,
        {**EV, "a.eval": archive})  # fmt: skip
err(
    "llm-inspect-eval-zip-bomb",
    "llm-logs",
    ("inspect", *EV_ARGS),
    r"a\.eval: the archive's logs hold 50 MB uncompressed, more than the memory limit",
    {**EV, "a.eval": eval_archive(EVAL_HEAD, {"summaries.json": b" " * 50_000_000})},
    subprocess=True,
    memory_limit=True,
    env={"BAYES_IR_MEMORY_LIMIT": "10000000"},
    timeout=60,
)
err(
    "llm-inspect-eval-fifo",
    "llm-logs",
    ("inspect", "-f", "inspect", *EV_ARGS),
    r"a\.eval: is a FIFO",
    {**EV, "a.eval": FIFO},
    timeout=60,
)


# --- HELM
def helm_stats(values, split="test", name="exact_match") -> str:
    """``per_instance_stats.json`` of a run: one statistic per instance."""
    return json.dumps([
        {"instance_id": f"id{i}", "train_trial_index": 0,
         "stats": [{"name": {"name": name, "split": split}, "count": 1, "sum": v, "mean": v}]}
        for i, v in enumerate(values)
    ])  # fmt: skip


def helm_spec(model: str) -> str:
    return json.dumps({"name": f"mmlu:subject=x,model={model.replace('/', '_')}",
                       "adapter_spec": {"model": model}})  # fmt: skip


HA, HB = "runs/mmlu:subject=x,model=org_a", "runs/mmlu:subject=x,model=org_b"
HELM_A, HELM_B = [1, 0, 1, 1, 0], [0, 0, 1, 1, 1]
HELM = {
    f"{HA}/per_instance_stats.json": helm_stats(HELM_A),
    f"{HA}/run_spec.json": helm_spec("org/a"),
    f"{HB}/per_instance_stats.json": helm_stats(HELM_B),
    f"{HB}/run_spec.json": helm_spec("org/b"),
}
HELM_ARGS = (f"{{d}}/{HA}/per_instance_stats.json", f"{{d}}/{HB}/per_instance_stats.json")
HELM_MEANS = {"org/a": float(np.mean(HELM_A)), "org/b": float(np.mean(HELM_B))}
ok("llm-helm-valid", "llm-logs", ("inspect", *HELM_ARGS, *OUT), inspect_means(HELM_MEANS), HELM)
SPEC = f"{HA}/run_spec.json"
for slug, content, match in (
    ("fifo", FIFO, r"run_spec\.json: is a FIFO"),
    ("dev-zero", Link("/dev/zero"), r"run_spec\.json: is a character device"),
    ("folder", None, r"run_spec\.json: is a folder"),
    ("a-list", "[1]", r"run_spec\.json: run_spec\.json is not an object \(got a list\)"),
    ("adapter-spec-a-string", json.dumps({"name": "mmlu", "adapter_spec": "org/a"}),
     r"run_spec\.json: its adapter_spec is not an object"),
    ("utf16", helm_spec("org/a").encode("utf-16"), r"run_spec\.json:1: UTF-16"),
    ("deep-nesting", "[" * 100_000 + "]" * 100_000, r"run_spec\.json: not valid JSON: nested"),
):  # fmt: skip
    files = {k: v for k, v in HELM.items() if k != SPEC}
    files[SPEC + ("/" if content is None else "")] = content
    err(f"llm-helm-run-spec-{slug}", "llm-logs", ("inspect", *HELM_ARGS), match, files,
        timeout=60)  # fmt: skip
ok(
    "llm-helm-run-spec-bom",
    "llm-logs",
    ("inspect", *HELM_ARGS, *OUT),
    inspect_means(HELM_MEANS),
    {**HELM, SPEC: "\ufeff" + helm_spec("org/a")},
)
err(
    "llm-helm-output-over-run-spec",
    "llm-logs",
    ("inspect", *HELM_ARGS, "-o", "{d}/" + SPEC),
    r"run_spec\.json is the input file",
    HELM,
)
STATS = f"{HA}/per_instance_stats.json"
for slug, entry, match in (
    ("trial-not-a-number", {"instance_id": "a", "train_trial_index": "x", "stats": []},
     r"entry 1 \(instance 'a'\): train_trial_index 'x' is not a trial number"),
    ("stats-a-string", {"instance_id": "a", "stats": "x"}, r"the stats of entry 1 is not a list"),
    ("count-a-string", {"instance_id": "a", "stats": [
        {"name": {"name": "exact_match", "split": "test"}, "count": "2", "sum": 1}]},
     r"no statistic of split 'test' holds a number"),
    ("huge-integer-mean", {"instance_id": "a", "stats": [
        {"name": {"name": "exact_match", "split": "test"}, "mean": 10**400}]},
     r"no statistic of split 'test' holds a number"),
    ("instance-id-null", {"instance_id": None, "stats": []}, r"entry 1 has no instance_id"),
):  # fmt: skip
    err(f"llm-helm-{slug}", "llm-logs", ("inspect", *HELM_ARGS),
        r"per_instance_stats\.json: " + match, {**HELM, STATS: json.dumps([entry])})  # fmt: skip
err(
    "llm-helm-stats-deep-nesting",
    "llm-logs",
    ("inspect", *HELM_ARGS),
    r"per_instance_stats\.json: not valid JSON: nested deeper",
    {**HELM, STATS: '[{"instance_id": "a", "stats": ' + "[" * 100_000 + "]" * 100_000 + "}]"},
)
err(
    "llm-helm-no-test-split-cli-words",
    "llm-logs",
    ("inspect", *HELM_ARGS),
    r"no statistic of split 'test' .*\(splits there: valid\); pass --split$",
    {**HELM, STATS: helm_stats(HELM_A, split="valid")},
)
ok(
    "llm-helm-split-option",
    "llm-logs",
    ("inspect", *HELM_ARGS, "--split", "valid", *OUT),
    inspect_means({"org/a": 0.25, "org/b": 0.75}),
    {**HELM, STATS: helm_stats([0, 0, 1, 0], split="valid"),
     f"{HB}/per_instance_stats.json": helm_stats([1, 1, 0, 1], split="valid")},
)  # fmt: skip
err(
    "llm-helm-same-model-twice-names-both-files",
    "llm-logs",
    ("inspect", *HELM_ARGS),
    r"org_a/per_instance_stats\.json: duplicate score for system 'org/a'.*again in "
    r"\S*org_b/per_instance_stats\.json",
    {**HELM, f"{HB}/run_spec.json": helm_spec("org/a")},
)
ok(
    "llm-helm-two-measures-repeated-m",
    "llm-logs",
    ("inspect", *HELM_ARGS, "-m", "exact_match", "-m", "f1", *OUT),
    means_by_measure({("exact_match", "org/a"): 0.6, ("exact_match", "org/b"): 0.6,
                      ("f1", "org/a"): 0.6, ("f1", "org/b"): 0.6}),
    {**HELM, STATS: helm_stats(HELM_A)[:-1] + ", " + helm_stats(HELM_A, name="f1")[1:],
     f"{HB}/per_instance_stats.json": helm_stats(HELM_B)[:-1] + ", "
     + helm_stats(HELM_B, name="f1")[1:]},
)  # fmt: skip


# --- SWE-bench
def swe_report(resolved: list[str], unresolved: list[str]) -> str:
    """A harness report (``schema_version`` 2)."""
    done = resolved + unresolved
    return json.dumps({"schema_version": 2, "total_instances": len(done), "resolved_ids": resolved,
                       "unresolved_ids": unresolved, "submitted_ids": done,
                       "completed_ids": done})  # fmt: skip


IDS = [f"repo__repo-{i}" for i in range(8)]
SWE = {"a.run1.json": swe_report(IDS[:3], IDS[3:6]), "b.run1.json": swe_report(IDS[2:6], IDS[:2])}
SWE_ARGS = ("{d}/a.run1.json", "{d}/b.run1.json")
SWE_IDS = "\n".join(IDS + ["repo__repo-8", "repo__repo-9"]) + "\n"
SWE_MEANS = {"a.run1": 3 / 10, "b.run1": 4 / 10}
ok(
    "llm-swebench-instances-option",
    "llm-logs",
    ("inspect", *SWE_ARGS, "--instances", "{d}/ids.txt", *OUT),
    inspect_means(SWE_MEANS),
    {**SWE, "ids.txt": SWE_IDS},
)
ok(
    "llm-swebench-instances-bom-crlf",
    "llm-logs",
    ("inspect", *SWE_ARGS, "--instances", "{d}/ids.txt", *OUT),
    inspect_means(SWE_MEANS),
    {**SWE, "ids.txt": ("\ufeff" + SWE_IDS).replace("\n", "\r\n")},
)
ok(
    "llm-swebench-note-cli-words",
    "llm-logs",
    ("inspect", *SWE_ARGS),
    stdout_has("pass --instances FILE (the split's ids) to count"),
    SWE,
)
for slug, content, match in (
    ("fifo", FIFO, r"--instances \S*ids\.txt: is a FIFO"),
    ("dev-zero", Link("/dev/zero"), r"--instances \S*ids\.txt: is a character device"),
    ("folder", None, r"--instances \S*ids\.txt: is a folder"),
    ("utf16", SWE_IDS.encode("utf-16"), r"ids\.txt:1: UTF-16"),
    ("huge", Sparse(20_000_000), r"ids\.txt: the list of instances is larger than"),
    ("id-twice", SWE_IDS + IDS[0] + "\n", r"ids\.txt: instance id 'repo__repo-0' is listed twice"),
    ("other-split", "other-1\n", r"a\.run1\.json: resolves 3 instance\(s\) not among --instances"),
):  # fmt: skip
    err(f"llm-swebench-instances-{slug}", "llm-logs",
        ("inspect", *SWE_ARGS, "--instances", "{d}/ids.txt"), match,
        {**SWE, "ids.txt" + ("/" if content is None else ""): content}, timeout=60)  # fmt: skip
err(
    "llm-swebench-output-over-instances",
    "llm-logs",
    ("inspect", *SWE_ARGS, "--instances", "{d}/ids.csv", "-o", "{d}/ids.csv"),
    r"--output \S*ids\.csv is the input file",
    {**SWE, "ids.csv": SWE_IDS},
)
for option, value in (("--instances", "{d}/ids.txt"), ("--split", "valid")):
    err(
        f"llm-{option[2:]}-on-tidy-scores",
        "llm-logs",
        ("inspect", TA, option, value),
        rf"{option} does not apply to tidy input",
        {**T, "ids.txt": SWE_IDS},
    )
err("llm-split-empty", "llm-logs", ("inspect", *HELM_ARGS, "--split", " "), r"--split", HELM)
for slug, report, match in (
    ("ids-objects", {"schema_version": 2, "resolved_ids": [{"id": 1}]},
     r"'resolved_ids' holds \{'id': 1\}, not an instance id"),
    ("ids-lists", {"schema_version": 2, "resolved_ids": [["a"]]}, r"holds \['a'\], not an"),
    ("resolved-null", {"schema_version": 2, "resolved_ids": None, "unresolved_ids": IDS},
     r"'resolved_ids' is null"),
):  # fmt: skip
    err(f"llm-swebench-{slug}", "llm-logs", ("inspect", *SWE_ARGS), r"a\.run1\.json: .*" + match,
        {**SWE, "a.run1.json": json.dumps(report)})  # fmt: skip
err(
    "llm-swebench-deep-nesting",
    "llm-logs",
    ("inspect", *SWE_ARGS),
    r"a\.run1\.json: not valid JSON: nested deeper",
    {**SWE, "a.run1.json": SWE["a.run1.json"][:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000
     + "}"},
)  # fmt: skip


def assert_equal(got, expected) -> None:
    assert got == expected, (got, expected)


SUBMISSIONS = {
    f"evaluation/{split}/20240101_agent/results/results.json": json.dumps(
        {"resolved": IDS[:k], "no_logs": IDS[6:]}
    )
    for split, k in (("lite", 2), ("verified", 3))
}
ok(
    "llm-swebench-one-system-two-splits",
    "llm-logs",
    ("inspect", *(f"{{d}}/{p}" for p in SUBMISSIONS), *OUT),
    lambda ctx: assert_equal(
        {
            (r["collection"], r["system"]): float(r["mean"])
            for r in read_csv_rows(ctx.out / "out.csv")
        },
        {("lite", "20240101_agent"): 2 / 5, ("verified", "20240101_agent"): 3 / 5},
    ),  # the instances: the 5 ids the two files name (2 and 3 of them resolved)
    SUBMISSIONS,
)
err(
    "llm-swebench-same-file-twice",
    "llm-logs",
    ("inspect", *SWE_ARGS, "{d}/a.run1.json"),
    r"the file is given twice",
    SWE,
)


# --- rank: the leaderboard of main's issue 31, under round 3's rules
RANK = ("rank", TA, "--draws", "200", "--chains", "2", "-q")
err("rank-rope-wider-than-range", "opt-rank", (*RANK, "--rope", "1.5"), r"--rope 1\.5 .*range")
err("rank-output-over-input", "opt-rank", (*RANK, "-o", TA), r"--output .*input file")
ok(
    "rank-html-folder-of-runs-hashes-qrels-and-notes",
    "notes",
    ("rank", "{d}/runs", "--qrels", "{d}/qrels.txt", "-m", "P@5", "--draws", "200", "-o",
     "{o}/board.html"),
    file_has("board.html", "qrels.txt (SHA-256", "a.run (SHA-256", "did not retrieve 1 judged",
             "How the data were read"),
    {f"runs/{k}": v for k, v in NOTE_RUNS.items() if k != "qrels.txt"}
    | {"qrels.txt": NOTE_RUNS["qrels.txt"]},
)  # fmt: skip


def no_api_words(ctx) -> None:
    """The failed gate names the refit in command-line options (more draws here: the exact
    sampler has no step size to tune), never as keyword arguments."""
    assert "DIAGNOSTICS FAILED" in ctx.stdout, ctx.stdout
    assert "Refit with more draws: --draws 2000." in ctx.stdout, ctx.stdout
    assert "(--draws)" in ctx.stdout and "target" not in ctx.stdout, ctx.stdout
    assert not re.search(r"\b(draws|tune|target_accept)=", ctx.stdout), ctx.stdout


ok(
    "rank-failed-diagnostics-cli-words",
    "opt-rank",
    ("rank", TA, "--draws", "30", "--chains", "2", "-q"),
    no_api_words,
)
add(
    id="notes-api-leaderboard",
    cls="notes",
    kind="api",
    expect="ok",
    call=notes_of(lambda t: bayes_ir.hierarchical.leaderboard(bayes_ir.fit(t, draws=100,
                                                                            chains=1))),
    check=carries_notes,
    files=NOTE_RUNS,
)  # fmt: skip
api(
    "api-swebench-instances-fifo",
    "llm-logs",
    lambda ctx: bayes_ir.read_scores(ctx.d / "a.run1.json", format="swebench",
                                     instances=ctx.d / "ids.txt"),
    ScoreTableError,
    r"ids\.txt: is a FIFO",
    {**SWE, "ids.txt": FIFO},
)  # fmt: skip
api(
    "api-swebench-instances-id-twice",
    "llm-logs",
    lambda ctx: bayes_ir.read_scores(ctx.d / "a.run1.json", format="swebench",
                                     instances=[IDS[0], IDS[0]]),
    ScoreTableError,
    r"instances=: instance id 'repo__repo-0' is listed twice",
    SWE,
)  # fmt: skip
api(
    "api-helm-split-not-a-name",
    "llm-logs",
    lambda ctx: bayes_ir.read_scores(ctx.d / STATS, format="helm", split=None),
    OptionError,
    r"split must be the name of a split",
    HELM,
)


# ============================================================================ replicates
# Several runs of a system (issue 30): replicate columns, file-name patterns, and the
# methods that need one score per cell.
REPS = {"r.csv": "system,topic,seed,score\nbase,1,1,0.5\nbase,2,1,0.25\nchal,1,1,0.75\n"
                 "chal,2,1,0.5\nchal,1,2,0.25\nchal,2,2,1.0\n"}  # fmt: skip
RUNS_SEEDS = {"seeds/a_seed1.run": RUNS["a.run"], "seeds/b_seed1.run": RUNS["b.run"],
              "seeds/b.run": RUNS["b.run"], "qrels.txt": RUNS["qrels.txt"]}  # fmt: skip
SEED_PATTERN = r"(?P<system>.+)_seed(?P<replicate>\d+)"
err(
    "replicates-two-columns",
    "replicates",
    ("inspect", "{d}/r.csv"),
    r"r\.csv: columns 'seed' and 'fold' both name the replicate column",
    {"r.csv": "system,topic,seed,fold,score\na,1,1,1,0.5\n"},
)
err(
    "replicates-empty-label",
    "replicates",
    ("inspect", "{d}/r.csv"),
    r"r\.csv:3: empty replicate name",
    {"r.csv": "system,topic,seed,score\na,1,1,0.5\na,2, ,0.5\n"},
)
err(
    "replicates-risk-refuses",
    "replicates",
    ("risk", "{d}/r.csv", "-c", "base", "-C", "chal"),
    r"r\.csv: 1 to 2 replicates per system .*mean_over_replicates\(\)",
    REPS,
)
err(
    "replicates-one-sd-per-system-needs-two-runs-each",
    "replicates",
    ("fit", "{d}/r.csv", "-c", "base", "-C", "chal", "--sigma-replicate", "system"),
    r"needs 2 or more runs of every system; 'base' has one",
    REPS,
)
err(
    "replicates-over-without-runs",
    "replicates",
    ("decide", "{d}/a.csv", "-c", "base", "-C", "chal", "--over", "single_run"),
    r"--over applies with --by/--segments or several runs per system",
    {"a.csv": "system,topic,score\nbase,1,0.5\nbase,2,0.25\nchal,1,0.75\nchal,2,0.5\n"},
)
err(
    "replicates-test-refuses",
    "replicates",
    ("test", "{d}/r.csv", "-c", "base", "-C", "chal"),
    r"r\.csv: 1 to 2 replicates per system",
    REPS,
)
err(
    "replicates-pattern-misses-a-file",
    "replicates",
    ("inspect", "{d}/seeds", "--qrels", "{d}/qrels.txt", "-m", "P@5",
     "--replicate-pattern", SEED_PATTERN),
    r"b\.run: the file name 'b\.run' does not match --replicate-pattern",
    RUNS_SEEDS,
)  # fmt: skip
err(
    "replicates-pattern-without-groups",
    "replicates",
    ("inspect", "{d}/seeds", "--qrels", "{d}/qrels.txt", "-m", "P@5",
     "--replicate-pattern", r"(?P<system>.+)_seed\d+"),
    r"has no named group \(\?P<replicate>",
    RUNS_SEEDS,
)  # fmt: skip
api(
    "api-replicates-pattern-matches-no-file",
    "replicates",
    lambda ctx: bayes_ir.read_scores(ctx.d / "seeds", qrels=ctx.d / "qrels.txt", measure="P@5",
                                     replicate_pattern=r"(?P<system>x)(?P<replicate>\d)fold"),
    ScoreTableError,
    r"does not match replicate_pattern",
    RUNS_SEEDS,
)  # fmt: skip
api(
    "api-replicates-matrix",
    "replicates",
    lambda ctx: bayes_ir.read_scores(ctx.d / "r.csv").matrix(),
    ScoreTableError,
    r"r\.csv: 1 to 2 replicates per system",
    REPS,
)


# ============================================================================ failing today
#: Cases that fail on main today: id -> (owner of the fix, what goes wrong). The runner
#: marks them xfail(strict=True); when a fix makes one pass (XPASS), delete its line.
FAILS_TODAY: dict[str, tuple[str, str]] = {
    # id -> (owner, what goes wrong); every case of the catalogue passes today
}

_KNOWN = {case.id for case in CASES}
assert len(_KNOWN) == len(CASES), "case ids must be unique"
assert set(FAILS_TODAY) <= _KNOWN, sorted(set(FAILS_TODAY) - _KNOWN)
CASES = [
    replace(case, owner=FAILS_TODAY[case.id][0], xfail=f"{case.cls}: {FAILS_TODAY[case.id][1]}")
    if case.id in FAILS_TODAY
    else case
    for case in CASES
]
